// Locators find their element afresh for every call (a page that re-renders does not leave them
// pointing at a dead node), wait for it up to a timeout, and act on it with real input events.
// A locator made from an element target (page.locatorFor) starts from the node the target names,
// with no lookup, and finds its selector again only if that node leaves the page meanwhile.

import { readFile } from "node:fs/promises";
import { basename, resolve as resolvePath } from "node:path";
import { Deadline } from "../deadline.ts";
import {
  ContentFrameNotFoundError,
  type FailureReason,
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
import {
  type ElementState,
  type InPageFailure,
  isInPageFailure,
  type PointResult,
} from "./injected/dom-runtime.ts";
import type { ElementHandle } from "./injected-script.ts";
import type { ClickOptions } from "./input.ts";
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

export type FilePayload = { name: string; mimeType: string; buffer: Uint8Array };

export interface RgbaColor {
  r: number;
  g: number;
  b: number;
  /** 0-1; default 1. */
  a?: number;
}

function cssColor(color: string | RgbaColor | undefined): string | undefined {
  if (color === undefined || typeof color === "string") return color;
  const channel = (v: number) => Math.max(0, Math.min(255, Math.round(Number(v) || 0)));
  const alpha = color.a === undefined ? 1 : Math.max(0, Math.min(1, Number(color.a) || 0));
  return `rgba(${channel(color.r)}, ${channel(color.g)}, ${channel(color.b)}, ${alpha})`;
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

type Miss = { missing: true; step: number; error?: ServiceError };

/**
 * One call under its deadline: its time left bounds the retries (running out is the call's own
 * failure, which names what it waited for, with the call log), and its cancellation ends any wait
 * at once and is checked before every input event.
 */
interface Attempt {
  deadline: Deadline;
  /** The call's own limit in ms, for messages ("within N ms"), when it has one. */
  timeout: number | undefined;
  /** The call started the deadline (the public API) and disposes of it. */
  owned: boolean;
}

/** The failures whose message ends with the call log (see deadline.ts explain()). */
function explains(error: unknown): boolean {
  return (
    error instanceof ServiceClickError ||
    error instanceof ServiceElementNotFoundError ||
    error instanceof XPathResolutionError ||
    error instanceof ServiceTimeoutError
  );
}

export class Locator {
  readonly page: Page;
  readonly selector: string;
  private readonly frame: Frame;
  private readonly deep: boolean;
  private readonly index: number;
  private readonly steps: SelectorStep[];
  /** Refuse to act when the selector matches more than one element (see LocatorOptions). */
  private readonly strict: boolean;
  /**
   * The element this locator was made for (page.locatorFor): used as it is, with no lookup, until
   * it turns out to have left the page; then the selector finds the element again.
   */
  private pinned: ElementTarget | undefined;

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

  /** The n-th match (0-based; negative counts from the end). Choosing one is never a strict violation. */
  nth(index: number): Locator {
    return new Locator(this.page, this.frame, this.selector, this.deep, index);
  }

  first(): Locator {
    return this.nth(0);
  }

  // ---------- resolution ----------

  /** One attempt: the element, or which step found nothing. Structural errors are returned, not thrown. */
  private async resolveOnce(): Promise<ResolvedElement | Miss> {
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
  private evalFailure(error: unknown): ServiceError {
    return error instanceof ServiceError ? error : new ServiceEvalError(String(error));
  }

  /** Follows every step but the last into its frame: the frame the last step is looked up in. */
  private async enterFrames(): Promise<{ frame: Frame } | Miss> {
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

  private query(
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
  private stepError(step: SelectorStep, failure: InPageFailure): ServiceError {
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
  private missed(miss: Miss): string {
    const step = this.steps[miss.step]!;
    const where = this.steps.length > 1 ? ` (step ${miss.step + 1} of ${this.steps.length})` : "";
    const nth = this.index !== 0 && miss.step === this.steps.length - 1 ? ` at index ${this.index}` : "";
    return `${describeStep(step)}${nth}${where}`;
  }

  private notFound(miss: Miss, timeout: number | undefined): ServiceError {
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
  private get named(): string {
    return `locator(${JSON.stringify(this.selector)})`;
  }

  /**
   * Starts one call: under the deadline the caller passed, or (the public API, a caller that gave
   * none) under one started here from its `timeout` and `signal`, whose limit bounds the retries.
   */
  private begin(what: string, options: TimeoutOption, fallback = DEFAULT_ACTION_TIMEOUT): Attempt {
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
  private async within<R>(what: string, options: TimeoutOption, fn: (a: Attempt) => Promise<R>): Promise<R> {
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
  private outOfTime(a: Attempt): boolean {
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
  private letGo(el: ResolvedElement): void {
    if (!el.pinned) void el.frame.release(el.handle);
  }

  /** Stops using the target's node (it left the page): the next resolution looks the selector up. */
  private unpin(el: ResolvedElement): void {
    if (el.pinned) this.pinned = undefined;
  }

  /** resolve() within a call's Attempt; errors name `timeout`, the caller's whole budget. */
  private async resolveWithin(a: Attempt): Promise<ResolvedElement> {
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

  private async withElement<R>(
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

  /**
   * Finds the point a pointer action should use, retrying while the element is covered, hidden,
   * disabled or replaced, and fails with ServiceClickError saying which when time runs out.
   */
  private async actionPoint(
    a: Attempt,
    force: boolean | undefined,
    checkEnabled: boolean,
  ): Promise<{ x: number; y: number }> {
    let last: PointResult | undefined;
    for (let attempt = 0; ; attempt++) {
      // A retry never starts after the deadline: a click that waited too long must not land late.
      if (attempt > 0 && this.outOfTime(a))
        throw new ServiceClickError(this.selector, explain(last), failureOf(last));
      let el: ResolvedElement;
      try {
        el = await this.resolveWithin(a);
      } catch (error) {
        // Found before, gone now: the page removed the element while the click waited for it.
        const gone = error instanceof ServiceElementNotFoundError || error instanceof XPathResolutionError;
        if (last && gone) {
          a.deadline.log("element was detached");
          throw new ServiceClickError(
            this.selector,
            `${explain({ ok: false, reason: "detached" })}; before that, ${explain(last)}`,
            "detached",
          );
        }
        throw error;
      }
      try {
        const point = await a.deadline.race(
          el.frame.invoke(domRuntime, "actionPoint", el.handle, checkEnabled && !force),
        );
        if (point.ok || force) {
          const inFrame = point.ok ? point : await this.centerOf(el);
          const inPage = await a.deadline.race(this.page.toViewportPoint(el.frame, inFrame, !force, true));
          if (inPage.ok && (force || (await this.pointerReaches(el.frame, inPage, a)))) return inPage;
          last = inPage.ok ? { ok: false, reason: "covered", detail: UNREACHED } : inPage;
        } else {
          last = point;
          if (point.reason === "detached") this.unpin(el);
        }
      } catch (error) {
        // The target's handle outlived its document (the frame navigated): look the selector up.
        if (!(el.pinned && staleHandle(error))) throw error;
        a.deadline.log("the element's document went away - finding it again");
        this.unpin(el);
        continue;
      } finally {
        this.letGo(el);
      }
      if (this.outOfTime(a)) throw new ServiceClickError(this.selector, explain(last), failureOf(last));
      a.deadline.log(`${retryLine(last)} - retrying`);
      await a.deadline.sleep(Math.min(30 * (attempt + 1), 150));
    }
  }

  /**
   * Whether the pointer at `point` reaches `frame`. The browser routes input to an out-of-process
   * frame by where it was last drawn, which lags behind a scroll or a layout change: a mouse move
   * there, which the frame counts, tells before anything is pressed.
   */
  private async pointerReaches(frame: Frame, point: { x: number; y: number }, a: Attempt): Promise<boolean> {
    let crossesProcesses = false;
    for (let f: Frame | undefined = frame; f?.parent; f = f.parent) crossesProcesses ||= f.isOutOfProcess;
    if (!crossesProcesses) return true;
    const before = await frame.invoke(domRuntime, "mouseMoves");
    a.deadline.check();
    await this.page.mouse.move(point.x, point.y);
    return (await frame.invoke(domRuntime, "mouseMoves")) > before;
  }

  private async centerOf(el: ResolvedElement): Promise<{ x: number; y: number }> {
    const box = await el.frame.invoke(domRuntime, "boundingBox", el.handle);
    if (!box) throw new ServiceClickError(this.selector, "the element has no box to click", "not-visible");
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  }

  // ---------- actions ----------

  /** A real mouse click at the element's visible point, after scrolling it into view. */
  async click(options: ClickOptions & TimeoutOption & { force?: boolean } = {}): Promise<void> {
    await this.within("click", options, async (a) => {
      const point = await this.actionPoint(a, options.force, true);
      a.deadline.check();
      await this.page.mouse.click(point.x, point.y, options);
    });
  }

  async dblclick(options: Omit<ClickOptions, "clickCount"> & TimeoutOption = {}): Promise<void> {
    await this.click({ ...options, clickCount: 2 });
  }

  async hover(options: TimeoutOption = {}): Promise<void> {
    await this.within("hover", options, async (a) => {
      const point = await this.actionPoint(a, false, false);
      a.deadline.check();
      await this.page.mouse.move(point.x, point.y);
    });
  }

  /** Replaces the element's content with `value` (input, textarea, contenteditable). */
  async fill(value: string, options: TimeoutOption = {}): Promise<void> {
    if (typeof value !== "string")
      throw new ServiceInvalidArgumentError(`fill() needs a string, got ${typeof value}.`);
    await this.withElement("fill", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const mode = await frame.invoke(domRuntime, "prepareFill", handle, value);
      if (isInPageFailure(mode)) {
        throw new ServiceInvalidArgumentError(
          `Cannot fill ${JSON.stringify(this.selector)}: ${mode.detail}`,
          {
            reason: mode.failed,
          },
        );
      }
      if (mode === "done") return;
      a.deadline.check();
      if (value === "") await this.page.keyboard.press("Delete");
      else await this.page.keyboard.insertText(value);
    });
  }

  /** Focuses the element and types text key by key (appending to what is there). */
  async type(text: string, options: TimeoutOption & { delay?: number } = {}): Promise<void> {
    await this.withElement("type", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
      a.deadline.check();
      await this.page.keyboard.type(text, { ...options, signal: a.deadline.signal });
    });
  }

  /** Gives the element the keyboard focus (as a click or Tab would). */
  async focus(options: TimeoutOption = {}): Promise<void> {
    await this.withElement("focus", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
    });
  }

  /** Focuses the element and presses a key or combination ("Enter", "Control+A"). */
  async press(key: string, options: TimeoutOption & { delay?: number } = {}): Promise<void> {
    await this.withElement("press", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
      a.deadline.check();
      await this.page.keyboard.press(key, options);
    });
  }

  /** Selects options of a <select> by value or label. Returns the selected values. */
  async selectOption(values: string | string[], options: TimeoutOption = {}): Promise<string[]> {
    const wanted = Array.isArray(values) ? values : [values];
    return this.withElement("selectOption", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const selected = await frame.invoke(domRuntime, "selectOptions", handle, wanted);
      if (isInPageFailure(selected)) {
        throw new ServiceInvalidArgumentError(
          `Cannot select in ${JSON.stringify(this.selector)}: ${selected.detail}`,
          { reason: selected.failed },
        );
      }
      return selected;
    });
  }

  /** Checks a checkbox or radio (by clicking it, as a user would) unless it already is. */
  async check(options: TimeoutOption = {}): Promise<void> {
    await this.setChecked(true, options);
  }

  async uncheck(options: TimeoutOption = {}): Promise<void> {
    await this.setChecked(false, options);
  }

  private async setChecked(wanted: boolean, options: TimeoutOption): Promise<void> {
    if ((await this.isChecked(options)) === wanted) return;
    await this.click(options);
    // The box is read back at once after the click: a short limit of its own, within the caller's.
    const now = options.deadline
      ? await options.deadline.withLimit("reading the box back", 500, (deadline) =>
          this.isChecked({ deadline }),
        )
      : await this.isChecked({ ...options, timeout: 500 });
    if (now !== wanted) {
      throw new ServiceClickError(
        this.selector,
        `clicking did not ${wanted ? "check" : "uncheck"} it`,
        "not-applied",
      );
    }
  }

  /** Sets the files of an <input type=file>: paths on disk, or in-memory files. */
  async setInputFiles(
    files: string | string[] | FilePayload | FilePayload[],
    options: TimeoutOption = {},
  ): Promise<void> {
    const list = (Array.isArray(files) ? files : [files]) as (string | FilePayload)[];
    const payloads = await Promise.all(
      list.map(async (f) => {
        if (typeof f !== "string") return f;
        const path = resolvePath(f);
        const buffer = await readFile(path).catch(() => {
          throw new ServiceInvalidArgumentError(`setInputFiles: cannot read ${path}.`);
        });
        return { name: basename(path), mimeType: mimeTypeOf(path), buffer };
      }),
    );
    await this.withElement("setInputFiles", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const encoded = payloads.map((p) => ({
        name: p.name,
        mimeType: p.mimeType,
        base64: Buffer.from(p.buffer).toString("base64"),
      }));
      const failure = await frame.invoke(domRuntime, "setFiles", handle, encoded);
      if (failure) {
        throw new ServiceInvalidArgumentError(
          `Cannot set files on ${JSON.stringify(this.selector)}: ${failure.detail}`,
          { reason: failure.failed },
        );
      }
    });
  }

  async scrollIntoView(options: TimeoutOption = {}): Promise<void> {
    await this.withElement("scrollIntoView", options, ({ frame, handle }, a) => {
      a.deadline.check();
      return frame.invoke(domRuntime, "scrollIntoView", handle);
    });
  }

  /**
   * Scrolls the element's content by about a page (`"down"` or `"up"`). Resolves to whether it
   * moved (false at the end, or for an element that does not scroll).
   */
  async scrollByPage(direction: "down" | "up" = "down", options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement("scrollByPage", options, ({ frame, handle }, a) => {
      a.deadline.check();
      return frame.invoke(domRuntime, "scrollByPage", handle, direction === "up" ? -1 : 1);
    });
  }

  /** Drags this element onto another with real mouse movements. */
  async dragTo(target: Locator, options: TimeoutOption = {}): Promise<void> {
    await this.within("dragTo", options, async (a) => {
      const from = await this.actionPoint(a, false, false);
      const to = await target.actionPoint(a, false, false);
      a.deadline.check();
      await this.page.dragAndDrop(from, to);
    });
  }

  // ---------- queries ----------

  /** Whether the element exists now and is visible. Does not wait. */
  async isVisible(): Promise<boolean> {
    const result = await this.resolveOnce();
    if ("missing" in result) return false;
    try {
      return await result.frame.invoke(domRuntime, "isVisible", result.handle);
    } finally {
      this.letGo(result);
    }
  }

  async isChecked(options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement("isChecked", options, async ({ frame, handle }) => {
      const state = await frame.invoke(domRuntime, "state", handle);
      if (state.checked === null) {
        throw new ServiceInvalidArgumentError(
          `${JSON.stringify(this.selector)} is not a checkbox, radio or element with aria-checked.`,
          { reason: "not-checkable" },
        );
      }
      return state.checked;
    });
  }

  /**
   * What the element is now: connected, visible, enabled, checked, editable, focused, hovered, in
   * the viewport, a list to choose from, its tag, input type and explicit role.
   */
  async elementState(options: TimeoutOption = {}): Promise<ElementState> {
    return this.withElement("elementState", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "state", handle),
    );
  }

  async isEnabled(options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement(
      "isEnabled",
      options,
      async ({ frame, handle }) => (await frame.invoke(domRuntime, "state", handle)).enabled,
    );
  }

  async inputValue(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("inputValue", options, async ({ frame, handle }) => {
      const value = await frame.invoke(domRuntime, "inputValue", handle);
      if (isInPageFailure(value))
        throw new ServiceInvalidArgumentError(`inputValue(): ${value.detail}`, { reason: value.failed });
      return value;
    });
  }

  async textContent(options: TimeoutOption = {}): Promise<string | null> {
    return this.withElement("textContent", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "textContent", handle),
    );
  }

  async innerHTML(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("innerHTML", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "innerHTML", handle),
    );
  }

  /** innerHTML under the reference library's name. */
  innerHtml(options: TimeoutOption = {}): Promise<string> {
    return this.innerHTML(options);
  }

  /** The centre of the element's box in the top frame's viewport, rounded to CSS pixels. */
  async centroid(options: TimeoutOption = {}): Promise<{ x: number; y: number }> {
    await this.scrollIntoView(options);
    const box = await this.boundingBox(options);
    if (!box) {
      throw new ServiceElementNotFoundError(
        this.selector,
        "(it has no box: hidden or not rendered)",
        "not-visible",
      );
    }
    return { x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) };
  }

  /** The element's rendered text (hidden parts left out, line breaks as laid out). */
  async innerText(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("innerText", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "innerText", handle),
    );
  }

  /**
   * Draws a box over the element for `durationMs` (default 800), so that a person watching the
   * browser sees which element it is. Changes nothing on the page the page itself can notice
   * beyond an extra element at the end of the body for that time.
   */
  async highlight(
    options: TimeoutOption & {
      durationMs?: number;
      /** A CSS color, or `{ r, g, b, a }` as the reference library takes it. */
      borderColor?: string | RgbaColor;
      contentColor?: string | RgbaColor;
    } = {},
  ): Promise<void> {
    const durationMs = options.durationMs ?? 800;
    if (!(typeof durationMs === "number" && durationMs >= 0 && durationMs <= 60_000)) {
      throw new ServiceInvalidArgumentError(
        `highlight: durationMs must be 0 to 60000 milliseconds, got ${String(options.durationMs)}.`,
      );
    }
    await this.withElement("highlight", options, async ({ frame, handle }) => {
      await frame.invoke(domRuntime, "scrollIntoView", handle);
      await frame.invoke(
        domRuntime,
        "highlight",
        handle,
        durationMs,
        cssColor(options.borderColor) ?? "rgb(255, 0, 102)",
        cssColor(options.contentColor) ?? "rgba(255, 0, 102, 0.15)",
      );
    });
  }

  /** The element's box in the top frame's viewport (CSS pixels), or null when it has none. */
  async boundingBox(
    options: TimeoutOption = {},
  ): Promise<{ x: number; y: number; width: number; height: number } | null> {
    return this.withElement("boundingBox", options, async ({ frame, handle }) => {
      const box = await frame.invoke(domRuntime, "boundingBox", handle);
      if (!box) return null;
      const origin = await this.page.toViewportPoint(frame, { x: box.x, y: box.y }, false);
      return origin.ok ? { x: origin.x, y: origin.y, width: box.width, height: box.height } : null;
    });
  }

  /** How many elements match now (0 when a frame on the way is missing). Does not wait. */
  async count(): Promise<number> {
    const entered = await this.enterFrames().catch(() => undefined);
    if (!entered || "missing" in entered) return 0;
    const { frame } = entered;
    const step = this.steps[this.steps.length - 1]!;
    const found = await withClosedRoots(
      frame,
      () => frame.invoke(domRuntime, "count", step.kind, step.value),
      (n) => typeof n === "number" && n > 0,
    );
    if (isInPageFailure(found)) throw this.stepError(step, found);
    return found;
  }

  /** Waits until the element is attached, detached, visible or hidden. */
  async waitFor(
    options: TimeoutOption & { state?: "attached" | "detached" | "visible" | "hidden" } = {},
  ): Promise<void> {
    const state = options.state ?? "visible";
    // Whether an element is there is a question for the selector, not for one node.
    this.pinned = undefined;
    const a = this.begin("waitFor", options, 30_000);
    try {
      a.deadline.log(`waitFor: waiting for ${this.named} to be ${state}`);
      await a.deadline.race(this.waitForState(a, state));
    } catch (error) {
      throw explains(error) ? a.deadline.explain(error) : error;
    } finally {
      if (a.owned) a.deadline.dispose();
    }
  }

  private async waitForState(
    a: Attempt,
    state: "attached" | "detached" | "visible" | "hidden",
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const result = await a.deadline.race(this.resolveOnce());
      if ("missing" in result && result.error && !(result.error instanceof ServiceIframeError))
        throw result.error;
      let attached = false;
      let visible = false;
      if (!("missing" in result)) {
        attached = true;
        visible = await result.frame.invoke(domRuntime, "isVisible", result.handle).catch(() => false);
        this.letGo(result);
      }
      const done =
        (state === "attached" && attached) ||
        (state === "detached" && !attached) ||
        (state === "visible" && visible) ||
        (state === "hidden" && !visible);
      if (done) return;
      if (this.outOfTime(a)) {
        throw new ServiceTimeoutError(
          `waitFor(${JSON.stringify(this.selector)}, state: "${state}")`,
          a.timeout ?? a.deadline.timeoutMs ?? 0,
        );
      }
      const now = !attached
        ? `no element matches ${this.missed({ missing: true, step: this.steps.length - 1 })}`
        : visible
          ? "element is visible"
          : "element is not visible";
      a.deadline.log(`${now} - retrying`);
      await a.deadline.sleep(Math.min(20 * (attempt + 1), 100));
    }
  }
}

/**
 * Runs a query, and runs it once more after registering closed shadow roots the in-page hook
 * could not see (declarative ones, or made before Deckhand attached) when it found nothing or an
 * XPath `//` step met a host that seemed to have no root.
 */
async function withClosedRoots<T>(
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
function staleHandle(error: unknown): boolean {
  return (
    error instanceof CdpProtocolError &&
    /Could not find object with given id|Cannot find context with specified id|Execution context was destroyed|No node with given id|should belong to the same JavaScript world/.test(
      error.message,
    )
  );
}

/** The reason of a point that could not be clicked (covered when nothing more precise is known). */
function failureOf(result: PointResult | undefined): FailureReason {
  return result && !result.ok ? result.reason : "covered";
}

const UNREACHED = "something the frame cannot see (the pointer there does not reach the frame)";

/** A call log line for a point that could not be used yet (what Playwright's log says, in ours). */
function retryLine(result: PointResult | undefined): string {
  if (!result || result.ok) return "element is not clickable yet";
  switch (result.reason) {
    case "detached":
      return "element was detached";
    case "not-visible":
      return "element is not visible";
    case "covered":
      return result.detail === UNREACHED
        ? "the pointer there does not reach the element's frame"
        : `${result.detail ?? "another element"} intercepts pointer events`;
    case "disabled":
      return "element is disabled";
    default:
      return result.detail ?? result.reason;
  }
}

function explain(result: PointResult | { ok: false; reason: string; detail?: string } | undefined): string {
  if (!result || result.ok) return "it never became clickable";
  switch (result.reason) {
    case "detached":
      return "the element was detached from the document";
    case "not-visible":
      return "the element is not visible (hidden, zero size, or scrolled out of reach)";
    case "covered":
      return `it is covered by another element: ${result.detail ?? "unknown"}`;
    case "disabled":
      return "the element is disabled";
    default:
      return result.detail ?? result.reason;
  }
}

const MIME: Record<string, string> = {
  txt: "text/plain",
  html: "text/html",
  json: "application/json",
  csv: "text/csv",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
};

function mimeTypeOf(path: string): string {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  return MIME[ext] ?? "application/octet-stream";
}
