// A page -> what a model sees: an outline of every frame (same-process, out-of-process, srcdoc,
// nested) and shadow root, with a short id on each node a model may act on or refer to, and a
// way back from each id to its element.
//
// Frames are captured one after another in document order so that each gets the next free ids
// and its indentation directly; the only Node-side text work is splicing each child frame's text
// in at its iframe's placeholder.

import { targetOf } from "../browser/element-target.ts";
import type { Frame } from "../browser/frame.ts";
import { type InPageFailure, isInPageFailure } from "../browser/injected/dom-runtime.ts";
import type { QuietState } from "../browser/injected/quiet.ts";
import type { ElementHandle } from "../browser/injected-script.ts";
import type { Page } from "../browser/page.ts";
import { parseDeepSelector } from "../browser/selectors.ts";
import { type PageState, readableNow, stateFrom, waitForSettled } from "../browser/settle.ts";
import { frameXPathPrefix } from "../browser/xpath.ts";
import { Deadline } from "../deadline.ts";
import { ServiceDomProcessError, ServiceElementNotFoundError, ServiceError } from "../errors.ts";
import { fitToBudget } from "./budget.ts";
import type { Target } from "./describe.ts";
import { outlineScript } from "./in-page.ts";
import {
  type CaptureResult,
  type ElementDescription,
  FRAME_MARKER_END,
  FRAME_MARKER_START,
  type RoleLookup,
} from "./injected/outline.ts";
import { installText } from "./injected/text.ts";
import { estimateTokens } from "./tokens.ts";

/** Default budget: leaves room in a 32k-token window for instructions and the answer. */
export const DEFAULT_TOKEN_BUDGET = 24_000;

export interface SnapshotOptions {
  /** Limit to one subtree: XPath, CSS, or `>>` across frames. */
  selector?: string;
  /** Leave these subtrees out (and frames inside them). */
  ignoreSelectors?: string[];
  /** What the caller wants to do; spent on choosing what to keep when the outline is cut. */
  instruction?: string;
  /** Token budget for the outline; `false` for no limit. Default 24,000. */
  tokenBudget?: number | false;
  /** Bound for waiting until the DOM stops changing (ms). Default 30,000. 0 skips the wait. */
  domSettleTimeout?: number;
  /** Stops the snapshot (its wait for the page to settle too) when it aborts, with its reason. */
  signal?: AbortSignal;
  /**
   * @internal The operation's deadline: the snapshot runs under it and writes to its call log
   * (`signal` is then not read). Without it, takeSnapshot starts one from `signal`.
   */
  deadline?: Deadline;
  /**
   * @internal The elements of these roles (and names, when given) are listed in the same call
   * per frame as the capture, so that withRoles() for them then costs no call (the explicit
   * attempt's look-up).
   */
  lookup?: { roles: readonly string[]; names?: readonly string[] };
}

/** Compares names as explicit instructions do (in the page too): spacing, case, a trailing ":" or "*" aside. */
export const { plainName, nameKey } = installText();

/** Elements the capture listed (SnapshotOptions.lookup); `names` as nameKey()s, none for any name. */
interface RoleRows {
  roles: ReadonlySet<string>;
  names: ReadonlySet<string> | undefined;
  rows: { id: number; role: string; name: string }[];
}

/** The in-page form of a look-up: names as nameKey()s. */
function inPageLookup(roles: readonly string[], names: readonly string[] | undefined): RoleLookup {
  return { roles: [...roles], ...(names ? { names: [...new Set(names.map(nameKey))] } : {}) };
}

/** What an id stands for. */
export interface ElementRef {
  id: number;
  frameId: string;
  /** Absolute: from the top document through iframes (`iframe[n]/html/...`) and shadow roots (`//`). */
  xpath: string;
  role: string;
  name: string;
  tag: string;
  /** For links: the absolute URL. */
  url?: string;
}

interface FrameSection {
  frame: Frame;
  first: number;
  last: number;
}

let generations = 0;

export class Snapshot {
  /** The outline, as the model sees it. */
  readonly text: string;
  /** Whether the outline was cut to fit the token budget. */
  readonly truncated: boolean;
  /** Estimated tokens of `text`. */
  readonly estimatedTokens: number;
  /** How many ids the outline has. */
  readonly elementCount: number;
  readonly url: string;
  readonly page: Page;
  /** @internal */
  readonly generation: number;
  /** @internal The page's state when it was read (how far each document had come), if it was looked at. */
  readonly pageState: PageState | undefined;
  private readonly sections: FrameSection[];
  private readonly listed: RoleRows | undefined;
  private readonly prefixes = new Map<Frame, Promise<string>>();
  private readonly described = new Map<number, Promise<ElementRef>>();

  /** @internal */
  constructor(init: {
    page: Page;
    generation: number;
    text: string;
    truncated: boolean;
    estimatedTokens: number;
    sections: FrameSection[];
    pageState?: PageState;
    listed?: RoleRows;
  }) {
    this.page = init.page;
    this.generation = init.generation;
    this.text = init.text;
    this.truncated = init.truncated;
    this.estimatedTokens = init.estimatedTokens;
    this.sections = init.sections;
    this.elementCount = init.sections.reduce((n, s) => n + (s.last - s.first + 1), 0);
    this.url = init.page.url();
    this.pageState = init.pageState;
    this.listed = init.listed;
  }

  /**
   * @internal This snapshot with its outline cut to `budget` tokens for `instruction`, as
   * takeSnapshot({ instruction }) would have made it: the same ids, the same page state. For a
   * snapshot read whole (tokenBudget: false) that another step then hands to the model.
   */
  fitted(instruction: string, budget: number = DEFAULT_TOKEN_BUDGET): Snapshot {
    if (this.truncated || this.estimatedTokens <= budget) return this;
    const text = fitToBudget(this.text, budget, instruction);
    return new Snapshot({
      page: this.page,
      generation: this.generation,
      text,
      truncated: true,
      estimatedTokens: estimateTokens(text),
      sections: this.sections,
      ...(this.pageState ? { pageState: this.pageState } : {}),
      ...(this.listed ? { listed: this.listed } : {}),
    });
  }

  /** Every id in the outline (including ones a budget cut left out of the text). */
  ids(): number[] {
    return this.sections.flatMap((s) => Array.from({ length: s.last - s.first + 1 }, (_, i) => s.first + i));
  }

  has(id: number): boolean {
    return this.section(id) !== undefined;
  }

  private section(id: number): FrameSection | undefined {
    return this.sections.find((s) => id >= s.first && id <= s.last);
  }

  /** The frame an id's element lives in. */
  frameOf(id: number): Frame {
    const section = this.section(id);
    if (!section)
      throw new ServiceElementNotFoundError(`[${id}]`, `(no such id in the snapshot of ${this.url})`);
    return section.frame;
  }

  /** Role, name, absolute XPath (and URL for links) of an id. */
  element(id: number): Promise<ElementRef> {
    let pending = this.described.get(id);
    if (!pending) {
      pending = this.describe([id]).then((refs) => refs[0]!);
      this.described.set(id, pending);
    }
    return pending;
  }

  /** Like element(), for many ids at once (one round trip per frame). */
  async elements(ids: number[]): Promise<ElementRef[]> {
    return this.describe(ids);
  }

  private async describe(ids: number[]): Promise<ElementRef[]> {
    const byFrame = new Map<FrameSection, number[]>();
    for (const id of ids) {
      const section = this.section(id);
      if (!section)
        throw new ServiceElementNotFoundError(`[${id}]`, `(no such id in the snapshot of ${this.url})`);
      byFrame.set(section, [...(byFrame.get(section) ?? []), id]);
    }
    const found = new Map<number, ElementRef>();
    await Promise.all(
      [...byFrame].map(async ([section, frameIds]) => {
        const [prefix, descriptions] = await Promise.all([
          this.framePrefix(section.frame),
          section.frame.invoke(
            outlineScript,
            "describe",
            this.generation,
            frameIds.map((id) => id - section.first),
          ),
        ]);
        if (isInPageFailure(descriptions)) throw this.stale(descriptions);
        (descriptions as ElementDescription[]).forEach((d, i) => {
          const id = frameIds[i]!;
          found.set(id, { id, frameId: section.frame.id, ...d, xpath: prefix + d.xpath });
        });
      }),
    );
    return ids.map((id) => found.get(id)!);
  }

  /**
   * The id, role and name of every element of the snapshot whose role is one of `roles` (one
   * round trip per frame, no XPath): for looking elements up by role and name on a large page
   * without describing each one. With `names`, only the elements whose name is one of them,
   * compared by nameKey() (case and spacing aside). What the capture listed already
   * (SnapshotOptions.lookup) costs no call.
   */
  async withRoles(
    roles: readonly string[],
    names?: readonly string[],
  ): Promise<{ id: number; role: string; name: string }[]> {
    const lookup = inPageLookup(roles, names);
    const listed = this.listed;
    const listedNames = listed?.names;
    if (
      listed &&
      lookup.roles.every((r) => listed.roles.has(r)) &&
      // Listed by name: only a look-up by some of those names can be answered from the list.
      (!listedNames || lookup.names?.every((n) => listedNames.has(n)))
    ) {
      const wantedRoles = new Set(lookup.roles);
      const wantedNames = lookup.names ? new Set(lookup.names) : undefined;
      return listed.rows.filter(
        (row) => wantedRoles.has(row.role) && (!wantedNames || wantedNames.has(nameKey(row.name))),
      );
    }
    const found = await Promise.all(
      this.sections.map(async (section) => {
        const rows = await section.frame.invoke(outlineScript, "withRoles", this.generation, lookup);
        if (isInPageFailure(rows)) throw this.stale(rows);
        return rows.map(([local, role, name]) => ({ id: section.first + local, role, name }));
      }),
    );
    return found.flat();
  }

  /** The URL of every link in the snapshot, by id (for extraction of URL fields). */
  async urls(): Promise<Map<number, string>> {
    const map = new Map<number, string>();
    await Promise.all(
      this.sections.map(async (section) => {
        const pairs = await section.frame.invoke(outlineScript, "urls", this.generation);
        if (isInPageFailure(pairs)) throw this.stale(pairs);
        for (const [local, url] of pairs) map.set(section.first + local, url);
      }),
    );
    return map;
  }

  /** A handle to the element of an id, while it is still in the page. */
  async handle(id: number): Promise<{ frame: Frame; handle: ElementHandle }> {
    const section = this.section(id);
    if (!section)
      throw new ServiceElementNotFoundError(`[${id}]`, `(no such id in the snapshot of ${this.url})`);
    const handle = await section.frame.invokeForElement(
      outlineScript,
      "element",
      this.generation,
      id - section.first,
    );
    if (isInPageFailure(handle)) throw this.stale(handle);
    if (!handle)
      throw new ServiceElementNotFoundError(`[${id}]`, "(the element left the page after the snapshot)");
    return { frame: section.frame, handle };
  }

  /**
   * The element target of an id: its frame, backend node id and a handle (the caller releases it
   * with releaseTarget), with the outline's role and name and its absolute XPath.
   */
  async target(id: number): Promise<Target> {
    const [ref, found] = await Promise.allSettled([this.element(id), this.handle(id)]);
    if (found.status === "rejected") throw found.reason;
    const { frame, handle } = found.value;
    try {
      if (ref.status === "rejected") throw ref.reason;
      const target = await targetOf(frame, handle);
      return { ...target, role: ref.value.role, name: ref.value.name, xpath: ref.value.xpath };
    } catch (error) {
      void frame.release(handle);
      throw error;
    }
  }

  /** The protocol's backend node id of an id's element. */
  async backendNodeId(id: number): Promise<number> {
    const { frame, handle } = await this.handle(id);
    try {
      return await frame.backendNodeId(handle);
    } finally {
      void frame.release(handle);
    }
  }

  /** The error of ids that no longer stand for elements (the page navigated or re-rendered). */
  private stale(failure: InPageFailure): ServiceDomProcessError {
    return new ServiceDomProcessError(
      `The snapshot of ${this.url} no longer matches the page (it navigated or re-rendered). Take a new snapshot.`,
      { reason: failure.failed },
    );
  }

  /** XPath of the <iframe> chain above a frame ('' for the main frame). */
  private framePrefix(frame: Frame): Promise<string> {
    let pending = this.prefixes.get(frame);
    if (!pending) {
      pending = frameXPathPrefix(frame, (parent) => this.framePrefix(parent));
      this.prefixes.set(frame, pending);
    }
    return pending;
  }
}

/** Resolves ignoreSelectors: plain CSS applies in every frame; XPath and `>>` selectors name elements. */
async function resolveIgnored(
  page: Page,
  selectors: string[],
  deadline: Deadline,
): Promise<{ css: string[]; handles: Map<Frame, ElementHandle[]> }> {
  const css: string[] = [];
  const handles = new Map<Frame, ElementHandle[]>();
  for (const selector of selectors) {
    const steps = parseDeepSelector(selector);
    if (steps.length === 1 && steps[0]!.kind === "css") {
      css.push(steps[0]!.value);
      continue;
    }
    const locator = page.deepLocator(selector);
    const count = await locator.count().catch(() => 0);
    for (let i = 0; i < count; i++) {
      // One try (a limit of 0): the elements there now are the ones to leave out.
      const el = await deadline
        .withLimit("finding an ignored element", 0, (once) => locator.nth(i).resolve({ deadline: once }))
        .catch(() => undefined);
      if (el) handles.set(el.frame, [...(handles.get(el.frame) ?? []), el.handle]);
    }
  }
  return { css, handles };
}

/** Takes a snapshot of the page (all frames), or of the subtree `selector` names. */
export async function takeSnapshot(page: Page, options: SnapshotOptions = {}): Promise<Snapshot> {
  if (options.deadline) {
    options.deadline.check();
    return options.deadline.race(snapshotOf(page, options, options.deadline));
  }
  const deadline = Deadline.start("takeSnapshot()", { signal: options.signal });
  try {
    return await deadline.race(snapshotOf(page, options, deadline));
  } finally {
    deadline.dispose();
  }
}

/**
 * Reads the page once it is still. A page that looks still is read at once, and the read counts
 * when every frame it captured was calm as the capture began and did not change during it (one
 * round trip per frame, the common case); otherwise Deckhand waits for it to settle and reads it
 * again.
 */
async function snapshotOf(page: Page, options: SnapshotOptions, deadline: Deadline): Promise<Snapshot> {
  const bound = options.domSettleTimeout ?? 30_000;
  if (bound === 0) return (await readPage(page, options, deadline, { optimistic: false })).snapshot!;
  const first = await readPage(page, options, deadline, { optimistic: true });
  if (first.snapshot) return first.snapshot;
  const settled = await waitForSettled(page, bound, deadline);
  return (await readPage(page, options, deadline, { optimistic: false, pageState: settled.state })).snapshot!;
}

/**
 * One read of the page. An optimistic one gives no snapshot when the page turned out not to be
 * calm (see readableNow); `pageState` is the state a settle wait ended on.
 */
async function readPage(
  page: Page,
  options: SnapshotOptions,
  deadline: Deadline,
  read: { optimistic: boolean; pageState?: PageState },
): Promise<{ snapshot: Snapshot | undefined }> {
  const frameStates: { frame: Frame; state: QuietState | null; changed: boolean }[] = [];
  const generation = ++generations;
  let root: { frame: Frame; handle: ElementHandle } | undefined;
  if (options.selector) {
    try {
      // One try (a limit of 0): the subtree is read as the page is now.
      root = await deadline.withLimit("finding the subtree", 0, (once) =>
        page.deepLocator(options.selector!).resolve({ deadline: once }),
      );
    } catch (error) {
      if (error instanceof ServiceError && !(error instanceof ServiceElementNotFoundError)) {
        throw new ServiceElementNotFoundError(options.selector, `(${error.message})`);
      }
      throw error;
    }
  }
  const ignored = await resolveIgnored(page, options.ignoreSelectors ?? [], deadline);
  const sections: FrameSection[] = [];
  const lookup = options.lookup ? inPageLookup(options.lookup.roles, options.lookup.names) : undefined;
  const listed: RoleRows | undefined = lookup
    ? { roles: new Set(lookup.roles), names: lookup.names && new Set(lookup.names), rows: [] }
    : undefined;
  let nextId = 1;

  const capture = async (frame: Frame, scope: ElementHandle | null, baseDepth: number): Promise<string> => {
    const excluded = ignored.handles.get(frame) ?? [];
    const run = () =>
      frame.invoke(
        outlineScript,
        "capture",
        {
          generation,
          idOffset: nextId - 1,
          baseDepth,
          ignoreCss: ignored.css,
          ...(lookup ? { lookup } : {}),
        },
        scope,
        ...excluded,
      ) as Promise<CaptureResult>;
    let result = await run();
    // Custom elements the page hook never saw get a closed root attached? Ask the protocol once.
    if (result.unknownHosts > 0 && (await frame.discoverClosedShadowRoots()) > 0) result = await run();
    frameStates.push({ frame, state: result.quiet, changed: result.changesAfter !== result.quiet.changes });
    if (result.count > 0) sections.push({ frame, first: nextId, last: nextId + result.count - 1 });
    for (const [local, role, name] of result.withRoles ?? [])
      listed?.rows.push({ id: nextId + local, role, name });
    nextId += result.count;
    if (result.iframeDepths.length === 0) return result.text;

    const children = await Promise.all(
      result.iframeDepths.map(async (_, k) => {
        const iframe = await frame.invokeForElement(outlineScript, "iframeAt", generation, k);
        if (!iframe || isInPageFailure(iframe)) return undefined;
        try {
          return await page.contentFrame(frame, iframe);
        } finally {
          void frame.release(iframe);
        }
      }),
    );
    // Placeholder lines are spliced out (with their indentation): the child's text is indented already.
    const pieces = result.text.split(new RegExp(` *${FRAME_MARKER_START}(\\d+)${FRAME_MARKER_END}`));
    let text = pieces[0]!;
    for (let i = 1; i < pieces.length; i += 2) {
      const k = Number(pieces[i]);
      const child = children[k];
      let childText = "";
      if (child && !child.detached) {
        childText = await capture(child, null, result.iframeDepths[k]!).catch((error: unknown) => {
          // A frame that navigates away mid-capture is shown empty rather than failing the snapshot.
          if (child.detached || (error instanceof ServiceError && error.reason === "target-closed"))
            return "";
          throw error;
        });
      }
      let after = pieces[i + 1]!;
      if (!childText) {
        // Drop the placeholder's line entirely.
        if (text.endsWith("\n")) text = text.slice(0, -1);
        else if (after.startsWith("\n")) after = after.slice(1);
      }
      text += childText + after;
    }
    return text;
  };

  let text: string;
  try {
    text = await capture(root?.frame ?? page.mainFrame(), root?.handle ?? null, 0);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceDomProcessError(`Could not read the page ${page.url()}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    if (root) void root.frame.release(root.handle);
    for (const [frame, list] of ignored.handles) for (const h of list) void frame.release(h);
  }

  let pageState = read.pageState;
  if (read.optimistic) {
    const states = frameStates.map((f) => f.state);
    if (!readableNow(page, states) || frameStates.some((f) => f.changed)) return { snapshot: undefined };
    pageState = stateFrom(
      page,
      frameStates.map((f) => f.frame),
      states,
    );
  }

  const budget = options.tokenBudget === undefined ? DEFAULT_TOKEN_BUDGET : options.tokenBudget;
  let estimated = estimateTokens(text);
  let truncated = false;
  if (budget !== false && estimated > budget) {
    text = fitToBudget(text, budget, options.instruction ?? "");
    estimated = estimateTokens(text);
    truncated = true;
  }
  return {
    snapshot: new Snapshot({
      page,
      generation,
      text,
      truncated,
      estimatedTokens: estimated,
      sections,
      pageState,
      ...(listed ? { listed } : {}),
    }),
  };
}
