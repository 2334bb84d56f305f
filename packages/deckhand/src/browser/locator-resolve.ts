// How a locator finds its element, and how each of its calls runs under a deadline. The element is
// found afresh for every call (a page that re-renders does not leave a locator pointing at a dead
// node): through the frames a deep selector crosses (`>>`, an XPath's iframe steps) and into
// shadow roots, open and closed, retrying while nothing matches until the call's deadline says
// stop. A locator made from an element target (page.locatorFor) starts from the node the target
// names, with no lookup, and finds its selector again only if that node leaves the page.
// LocatorCore is the first floor of Locator: actionability.ts, locator-state.ts and locator.ts
// build on it.

import { Deadline } from "../deadline.ts";
import {
  ContentFrameNotFoundError,
  ServiceClickError,
  ServiceElementNotFoundError,
  ServiceError,
  ServiceEvalError,
  ServiceIframeError,
  ServiceInvalidArgumentError,
  ServiceShadowRootMissingError,
  ServiceTimeoutError,
  XPathResolutionError,
} from "../errors.ts";
import { CdpProtocolError } from "./cdp/connection.ts";
import { type ElementTarget, targetHandle } from "./element-target.ts";
import type { Frame } from "./frame.ts";
import { domRuntime } from "./in-page.ts";
import { type InPageFailure, isInPageFailure } from "./injected/dom-runtime.ts";
import type { ElementHandle } from "./injected-script.ts";
import type { Page } from "./page.ts";
import { describeStep, parseDeepSelector, parseSelectorStep, type SelectorStep } from "./selectors.ts";

export const DEFAULT_ACTION_TIMEOUT = 5_000;

export interface TimeoutOption {
  /** Milliseconds to wait for the element to be ready. Default 5000. */
  timeout?: number;
  /**
   * Stops the call when it aborts: whatever it was waiting for, it rejects with the signal's
   * reason (a Deckhand error) or ServiceCancelledError, and it sends no input event afterwards.
   */
  signal?: AbortSignal;
  /**
   * @internal The operation's deadline (or a step of it): the call runs under it, writes its waits
   * and retries to its call log, and gives up when its time is over; `timeout` and `signal` are
   * then not read. Without it the call starts a deadline of its own from them (the public API).
   */
  deadline?: Deadline;
}

export interface LocatorOptions {
  /**
   * Fail (ServiceInvalidArgumentError, reason "strict-mode-violation") instead of using the first
   * match when the selector matches more than one element. Default false: the first match in
   * document order is used, as the reference library does.
   */
  strict?: boolean;
}

/** A resolved element: which frame it is in and a handle to it. */
export interface ResolvedElement {
  frame: Frame;
  handle: ElementHandle;
  /** @internal The handle is an element target's (it releases it), not this call's. */
  pinned?: boolean;
}

export type Miss = { missing: true; step: number; error?: ServiceError };

/**
 * One call under its deadline: its time left bounds the retries (running out is the call's own
 * failure, which names what it waited for, with the call log), and its cancellation ends any wait
 * at once and is checked before every input event.
 */
export interface Attempt {
  deadline: Deadline;
  /** The call's own limit in ms, for messages ("within N ms"), when it has one. */
  timeout: number | undefined;
  /** The call started the deadline (the public API) and disposes of it. */
  owned: boolean;
}

/** The failures whose message ends with the call log (see deadline.ts explain()). */
export function explains(error: unknown): boolean {
  return (
    error instanceof ServiceClickError ||
    error instanceof ServiceElementNotFoundError ||
    error instanceof XPathResolutionError ||
    error instanceof ServiceTimeoutError
  );
}

export abstract class LocatorCore {
  readonly page: Page;
  readonly selector: string;
  protected readonly frame: Frame;
  protected readonly deep: boolean;
  protected readonly index: number;
  protected readonly steps: SelectorStep[];
  /** Refuse to act when the selector matches more than one element (see LocatorOptions). */
  protected readonly strict: boolean;
  /**
   * The element this locator was made for (page.locatorFor): used as it is, with no lookup, until
   * it turns out to have left the page; then the selector finds the element again.
   */
  protected pinned: ElementTarget | undefined;

  /** @internal Use page.locator(), page.deepLocator() or frame.locator(). */
  constructor(
    page: Page,
    frame: Frame,
    selector: string,
    deep: boolean,
    index = 0,
    options: LocatorOptions = {},
    target?: ElementTarget,
  ) {
    if (typeof selector !== "string" || !selector.trim()) {
      throw new ServiceInvalidArgumentError(
        `A locator needs a non-empty selector string, got ${JSON.stringify(selector)}.`,
      );
    }
    this.page = page;
    this.frame = frame;
    this.selector = selector;
    this.deep = deep;
    this.index = index;
    this.strict = options.strict === true;
    this.steps = deep ? parseDeepSelector(selector) : [parseSelectorStep(selector)];
    this.pinned = target;
  }

  // ---------- resolution ----------

  /** One attempt: the element, or which step found nothing. Structural errors are returned, not thrown. */
  protected async resolveOnce(): Promise<ResolvedElement | Miss> {
    const target = this.pinned;
    if (target) {
      if (!target.frame.detached) {
        const handle = await targetHandle(target).catch(() => undefined);
        if (handle) return { frame: target.frame, handle, pinned: true };
      }
      // The node is gone (its frame navigated, or the page dropped it): look it up again.
      this.pinned = undefined;
    }
    const entered = await this.enterFrames();
    if ("missing" in entered) return entered;
    const { frame } = entered;
    const last = this.steps.length - 1;
    const step = this.steps[last]!;
    if (this.strict) {
      const matches = await frame.invoke(domRuntime, "count", step.kind, step.value).catch(() => 0);
      if (typeof matches === "number" && matches > 1) {
        return {
          missing: true,
          step: last,
          error: new ServiceInvalidArgumentError(
            `The strict locator ${JSON.stringify(this.selector)} matches ${matches} elements. Make the selector ` +
              "match one, or choose with .first() / .nth(i).",
            { reason: "strict-mode-violation" },
          ),
        };
      }
    }
    const found = await this.query(frame, step, this.index).catch((error: unknown) =>
      this.evalFailure(error),
    );
    if (found instanceof ServiceError) return { missing: true, step: last, error: found };
    if (isInPageFailure(found)) return { missing: true, step: last, error: this.stepError(step, found) };
    if (!found) return { missing: true, step: last };
    return { frame, handle: found };
  }

  /** A query that threw: a Deckhand error as it is, anything else as the page's error. */
  protected evalFailure(error: unknown): ServiceError {
    return error instanceof ServiceError ? error : new ServiceEvalError(String(error));
  }

  /** Follows every step but the last into its frame: the frame the last step is looked up in. */
  protected async enterFrames(): Promise<{ frame: Frame } | Miss> {
    let frame = this.frame;
    for (let i = 0; i < this.steps.length - 1; i++) {
      const step = this.steps[i]!;
      const found = await this.query(frame, step, 0).catch((error: unknown) => this.evalFailure(error));
      if (found instanceof ServiceError) return { missing: true, step: i, error: found };
      if (isInPageFailure(found)) return { missing: true, step: i, error: this.stepError(step, found) };
      if (!found) return { missing: true, step: i };
      const handle = found;
      const isFrame = await frame.invoke(domRuntime, "isFrameOwner", handle);
      if (!isFrame) {
        const what = await frame.invoke(domRuntime, "describe", handle);
        void frame.release(handle);
        return {
          missing: true,
          step: i,
          error: new ContentFrameNotFoundError(
            this.selector,
            `step ${i + 1} (${describeStep(step)}) matched ${what}, not an iframe`,
          ),
        };
      }
      // No waiting here: resolve() retries until its own deadline, which a wait here would overrun.
      const child = await this.page.contentFrame(frame, handle, 0);
      void frame.release(handle);
      if (!child?.hasDocument) {
        return {
          missing: true,
          step: i,
          error: new ServiceIframeError(
            `The iframe matched by step ${i + 1} (${describeStep(step)}) of ${JSON.stringify(this.selector)} has no loaded document yet.`,
          ),
        };
      }
      frame = child;
    }
    return { frame };
  }

  protected query(
    frame: Frame,
    step: SelectorStep,
    index: number,
  ): Promise<ElementHandle | null | InPageFailure> {
    return withClosedRoots(
      frame,
      () => frame.invokeForElement(domRuntime, "queryOne", step.kind, step.value, index),
      (found) => found !== null,
    );
  }

  /** The error of a step the page could not run (its reason says why). */
  protected stepError(step: SelectorStep, failure: InPageFailure): ServiceError {
    if (failure.failed === "shadow-root-missing") {
      return new ServiceShadowRootMissingError(
        `The selector ${JSON.stringify(this.selector)} enters a shadow root of <${failure.detail}> (a \`//\` step), but that element has none.`,
      );
    }
    if (step.kind === "xpath")
      return new XPathResolutionError(
        step.value,
        `it is not a valid XPath (${failure.detail})`,
        failure.failed,
      );
    return new ServiceInvalidArgumentError(`${JSON.stringify(step.value)} is not a valid CSS selector.`, {
      reason: failure.failed,
    });
  }

  /** Where a miss happened, for the error and the call log: `(step 2 of 3)`, `at index 1`. */
  protected missed(miss: Miss): string {
    const step = this.steps[miss.step]!;
    const where = this.steps.length > 1 ? ` (step ${miss.step + 1} of ${this.steps.length})` : "";
    const nth = this.index !== 0 && miss.step === this.steps.length - 1 ? ` at index ${this.index}` : "";
    return `${describeStep(step)}${nth}${where}`;
  }

  protected notFound(miss: Miss, timeout: number | undefined): ServiceError {
    if (miss.error) return miss.error;
    const step = this.steps[miss.step]!;
    const where = this.steps.length > 1 ? ` (step ${miss.step + 1} of ${this.steps.length})` : "";
    const nth = this.index !== 0 && miss.step === this.steps.length - 1 ? ` at index ${this.index}` : "";
    const within = timeout === undefined ? "" : ` within ${timeout} ms`;
    if (step.kind === "xpath") {
      return new XPathResolutionError(
        this.steps.length > 1 ? this.selector : step.value,
        `nothing matched${nth}${where}${within}`,
      );
    }
    return new ServiceElementNotFoundError(this.selector, `(nothing matched ${this.missed(miss)}${within})`);
  }

  /** How the call log names this locator. */
  protected get named(): string {
    return `locator(${JSON.stringify(this.selector)})`;
  }

  /**
   * Starts one call: under the deadline the caller passed, or (the public API, a caller that gave
   * none) under one started here from its `timeout` and `signal`, whose limit bounds the retries.
   */
  protected begin(what: string, options: TimeoutOption, fallback = DEFAULT_ACTION_TIMEOUT): Attempt {
    const given = options.deadline;
    if (given) return { deadline: given, timeout: given.timeoutMs, owned: false };
    const timeout = options.timeout ?? fallback;
    const deadline = Deadline.start(`${what}(${JSON.stringify(this.selector)})`, {
      timeout,
      signal: options.signal,
      retriesOnly: true,
    });
    return { deadline, timeout, owned: true };
  }

  /** Runs one call under its Attempt; a failure that says what it waited for ends with the call log. */
  protected async within<R>(
    what: string,
    options: TimeoutOption,
    fn: (a: Attempt) => Promise<R>,
  ): Promise<R> {
    const attempt = this.begin(what, options);
    try {
      attempt.deadline.log(`${what}: waiting for ${this.named}`);
      return await attempt.deadline.race(fn(attempt));
    } catch (error) {
      throw explains(error) ? attempt.deadline.explain(error) : error;
    } finally {
      if (attempt.owned) attempt.deadline.dispose();
    }
  }

  /** Whether the call's time is over (no retry may start); throws at once when it was cancelled. */
  protected outOfTime(a: Attempt): boolean {
    a.deadline.check();
    return a.deadline.timeLeft() === 0;
  }

  /** Waits for the element to exist, up to the timeout. The caller releases the handle. */
  async resolve(options: TimeoutOption = {}): Promise<ResolvedElement> {
    return this.within("resolve", options, async (a) => {
      const el = await this.resolveWithin(a);
      if (!el.pinned) return el;
      // The target keeps its own handle: the caller gets one of its own to release.
      return { frame: el.frame, handle: await el.frame.resolveBackendNode(this.pinned!.backendNodeId) };
    });
  }

  /** Lets go of a resolved element's handle, unless it is the target's (the target releases it). */
  protected letGo(el: ResolvedElement): void {
    if (!el.pinned) void el.frame.release(el.handle);
  }

  /** Stops using the target's node (it left the page): the next resolution looks the selector up. */
  protected unpin(el: ResolvedElement): void {
    if (el.pinned) this.pinned = undefined;
  }

  /** resolve() within a call's Attempt; errors name `timeout`, the caller's whole budget. */
  protected async resolveWithin(a: Attempt): Promise<ResolvedElement> {
    for (let attempt = 0; ; attempt++) {
      const result = await a.deadline.race(this.resolveOnce());
      if (!("missing" in result)) return result;
      // Invalid selectors and non-iframe hops do not fix themselves by waiting.
      const permanent =
        result.error &&
        !(result.error instanceof ServiceIframeError) &&
        !(result.error instanceof ServiceShadowRootMissingError);
      if (permanent || this.outOfTime(a)) throw this.notFound(result, a.timeout);
      a.deadline.log(
        result.error
          ? `${result.error.message} - retrying`
          : `no element matches ${this.missed(result)} - retrying`,
      );
      await a.deadline.sleep(Math.min(attempt === 0 ? 20 : 50 * attempt, 200));
    }
  }

  protected async withElement<R>(
    what: string,
    options: TimeoutOption,
    fn: (el: ResolvedElement, a: Attempt) => Promise<R>,
  ): Promise<R> {
    return this.within(what, options, async (a) => {
      for (;;) {
        const el = await this.resolveWithin(a);
        try {
          return await a.deadline.race(fn(el, a));
        } catch (error) {
          // The target's handle outlived its document (the frame navigated): look the selector up.
          if (!(el.pinned && staleHandle(error))) throw error;
          this.unpin(el);
        } finally {
          this.letGo(el);
        }
      }
    });
  }
}

/**
 * Runs a query, and runs it once more after registering closed shadow roots the in-page hook
 * could not see (declarative ones, or made before Deckhand attached) when it found nothing or an
 * XPath `//` step met a host that seemed to have no root.
 */
export async function withClosedRoots<T>(
  frame: Frame,
  run: () => Promise<T | InPageFailure>,
  found: (result: T) => boolean,
): Promise<T | InPageFailure> {
  const result = await run();
  if (isInPageFailure(result)) {
    if (result.failed !== "shadow-root-missing" || (await frame.discoverClosedShadowRoots()) === 0)
      return result;
    return run();
  }
  if (found(result) || (await frame.discoverClosedShadowRoots()) === 0) return result;
  return run();
}

/** Whether a call failed because a handle it passed no longer stands for anything (its document went away). */
export function staleHandle(error: unknown): boolean {
  return (
    error instanceof CdpProtocolError &&
    /Could not find object with given id|Cannot find context with specified id|Execution context was destroyed|No node with given id|should belong to the same JavaScript world/.test(
      error.message,
    )
  );
}
