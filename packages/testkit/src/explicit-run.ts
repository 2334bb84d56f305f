// Runs one labelled explicit instruction (explicit-cases.ts, explicit-heldout.ts) on its fixture
// page with no model, reads from the page what happened (which element each input event reached,
// hits.js; the scroll position; the address) and judges it against the label. Shared by the test
// (packages/deckhand/test/ops/explicit-set.test.ts) and the `explicit` benchmark.

import type { ExplicitCase } from "./explicit-cases.ts";

/** The part of a Deckhand client the runner uses. */
export interface ExplicitClient {
  act(
    instruction: string,
    options?: { variables?: Record<string, string> },
  ): Promise<{ success: boolean; message: string; actions?: { selector: string }[] }>;
  page: {
    goto(url: string): Promise<unknown>;
    /** Used by ExplicitRunOptions.reusePage to move the pointer off the previous case's element. */
    mouse?: { move(x: number, y: number): Promise<void> };
    evaluate<R = unknown, A = unknown>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R>;
  };
}

/** What the act did, as the page shows it. */
export interface ExplicitObservation {
  /** "done": act() returned success; "failed": act() returned failure; "model": it needs a model. */
  result: "done" | "failed" | "model";
  message: string;
  /** Ids that received the case's kind of event, in the order they first did. */
  ids: string[];
  /**
   * For a step that needed no input event (checking a radio that is already checked): the ids of
   * the elements the result's actions name (top document only).
   */
  named: string[];
  /** A key went to the page. */
  key: boolean;
  scrollY: number;
  /** For a "scroll:ID" label: whether ID's box is in the viewport. */
  inView: boolean;
  path: string;
  search: string;
  ms: number;
}

/**
 * "as-labelled": what the label says; "refused": left to the model (or stopped after correct
 * steps) where the label says it is explicit, which costs a model call and is never wrong;
 * "wrong": acted on an element, or in a way, the label does not allow.
 */
export type ExplicitVerdict = "as-labelled" | "refused" | "wrong";

interface Hit {
  type: string;
  id: string | null;
}

const KINDS = {
  default: ["click", "dblclick", "keydown", "input", "change"],
  hover: ["mouseover"],
  focus: ["focusin"],
};

/** The ids the label says are acted on, in order (for "model", the steps before the handoff). */
export function expectedIds(c: ExplicitCase): readonly string[] {
  if (Array.isArray(c.expect)) return c.expect;
  const e = c.expect as string;
  if (e === "model") return c.before ?? [];
  if (["page", "not-done", "scroll", "back"].includes(e) || /^(?:scroll|goto):/.test(e)) return [];
  return [e];
}

/** Whether the label says the instruction is carried out without a model. */
export function labelledExplicit(c: ExplicitCase): boolean {
  return c.expect !== "model" && c.expect !== "not-done";
}

/** The instruction as sent: `{site}` replaced by the fixture site's origin. */
export function instructionOf(c: ExplicitCase, origin: string): string {
  return c.instruction.replaceAll("{site}", origin);
}

export interface ExplicitRunOptions {
  /**
   * Reuse the page the previous case left when it is still the case's page and the page can be
   * put back exactly: its body is replaced by a copy of the body it had when it loaded, scrolled
   * to the top, instead of opening the page again. Only for a page whose one script is hits.js
   * (its listeners sit on the document, which stays) and that has no frame or dialog (a copy
   * would load the frame again, and a copied dialog is not modal). A navigation is most of a
   * case's time; the test runs its 420 cases this way, the benchmark opens each page afresh.
   */
  reusePage?: boolean;
}

/** Opens the case's page, or puts the open one back as it loaded (ExplicitRunOptions.reusePage). */
async function freshPage(
  dh: ExplicitClient,
  pageUrl: string,
  c: ExplicitCase,
  reuse: boolean,
): Promise<void> {
  const mouse = dh.page.mouse;
  // The pointer still rests where the previous case left it; once the body is replaced, Chrome
  // sends the new element under it a mouseover, which a hover case would count. It is parked in
  // the corner first, over the page itself (no element with an id there, or no reuse).
  if (reuse && mouse && c.expect !== "back") await mouse.move(0, 0);
  const restored =
    reuse &&
    mouse !== undefined &&
    c.expect !== "back" &&
    (await dh.page.evaluate((href: string) => {
      const w = window as unknown as { __pristine?: HTMLElement; __hits: unknown[] };
      if (location.href !== href || !w.__pristine) return false;
      if (document.elementFromPoint(0, 0)?.closest("[id]")) return false;
      document.body.replaceWith(w.__pristine.cloneNode(true));
      window.scrollTo(0, 0);
      w.__hits.length = 0;
      return true;
    }, pageUrl));
  if (restored) return;
  if (c.expect === "back") await dh.page.goto(`${pageUrl}?from=history`);
  await dh.page.goto(pageUrl);
  await dh.page.evaluate((keep: boolean) => {
    const w = window as unknown as { __pristine?: HTMLElement; __hits: unknown[] };
    w.__hits.length = 0;
    const resettable =
      document.querySelectorAll('script:not([src="hits.js"]), iframe, frame, dialog').length === 0 &&
      document.querySelectorAll("script").length === 1;
    if (keep && resettable) w.__pristine = document.body.cloneNode(true) as HTMLElement;
  }, reuse);
}

export async function runExplicitCase(
  dh: ExplicitClient,
  url: (path: string) => string,
  c: ExplicitCase,
  isModelError: (error: unknown) => boolean,
  options: ExplicitRunOptions = {},
): Promise<ExplicitObservation> {
  const pageUrl = url(`explicit/${c.page}.html`);
  await freshPage(dh, pageUrl, c, options.reusePage === true);
  const origin = new URL(pageUrl).origin;
  const started = performance.now();
  let result: ExplicitObservation["result"];
  let message = "";
  let selectors: string[] = [];
  try {
    const done = await dh.act(instructionOf(c, origin), c.variables ? { variables: c.variables } : {});
    result = done.success ? "done" : "failed";
    message = done.message;
    selectors = (done.actions ?? []).map((a) => a.selector).filter((x) => x && !/iframe|\/\/.*\/\//.test(x));
  } catch (error) {
    if (!isModelError(error)) throw error;
    result = "model";
    message = (error as Error).message;
  }
  const ms = performance.now() - started;
  const scrollTarget =
    typeof c.expect === "string" && c.expect.startsWith("scroll:") ? c.expect.slice(7) : "";
  const seen = await dh.page.evaluate(
    ({ target, selectors }: { target: string; selectors: string[] }) => {
      const w = window as unknown as { __hits?: Hit[] };
      const el = target ? document.getElementById(target) : null;
      const box = el?.getBoundingClientRect();
      return {
        hits: w.__hits ?? [],
        scrollY: window.scrollY,
        inView: !!box && box.bottom > 0 && box.top < window.innerHeight,
        path: location.pathname,
        search: location.search,
        named: selectors.map((x) => {
          const node = document.evaluate(
            x,
            document,
            null,
            XPathResult.FIRST_ORDERED_NODE_TYPE,
            null,
          ).singleNodeValue;
          return node instanceof Element ? node.id : "";
        }),
      };
    },
    { target: scrollTarget, selectors },
  );
  // A key "on the page" goes to whatever has focus: only clicks and input count against it.
  const kinds = KINDS[c.events ?? "default"].filter((k) => c.expect !== "page" || k !== "keydown");
  const ids = [...new Set(seen.hits.filter((h) => kinds.includes(h.type) && h.id).map((h) => h.id!))];
  return {
    result,
    message,
    ids,
    named: seen.named,
    key: seen.hits.some((h) => h.type === "keydown"),
    scrollY: seen.scrollY,
    inView: seen.inView,
    path: seen.path,
    search: seen.search,
    ms,
  };
}

function isPrefix(ids: readonly string[], of: readonly string[]): boolean {
  return ids.length <= of.length && ids.every((id, i) => of[i] === id);
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && isPrefix(a, b);
}

/** Judges an observation against the case's label. */
export function judgeExplicit(c: ExplicitCase, o: ExplicitObservation): ExplicitVerdict {
  const expected = expectedIds(c);
  const stayed = o.path.endsWith(`/explicit/${c.page}.html`);
  if (o.result === "model") {
    if (!isPrefix(o.ids, expected) || !stayed) return "wrong";
    return c.expect === "model" && same(o.ids, expected) ? "as-labelled" : "refused";
  }
  if (o.result === "failed") {
    if (!isPrefix(o.ids, expected) || !stayed) return "wrong";
    return c.expect === "not-done" && o.ids.length === 0 ? "as-labelled" : "refused";
  }
  // done
  if (!labelledExplicit(c)) return "wrong";
  const e = typeof c.expect === "string" ? c.expect : "";
  if (e.startsWith("goto:")) return o.path === e.slice(5) && o.ids.length === 0 ? "as-labelled" : "wrong";
  if (!stayed) return "wrong";
  if (e === "back") return o.search === "?from=history" && o.ids.length === 0 ? "as-labelled" : "wrong";
  if (o.search !== "") return "wrong";
  if (e === "page") return o.ids.length === 0 && o.key ? "as-labelled" : "wrong";
  if (e === "scroll") return o.ids.length === 0 && o.scrollY > 0 ? "as-labelled" : "wrong";
  if (e.startsWith("scroll:"))
    return o.ids.length === 0 && o.inView && o.scrollY > 0 ? "as-labelled" : "wrong";
  if (o.ids.length === 0 && expected.length === 1 && same(o.named, expected)) return "as-labelled";
  return same(o.ids, expected) ? "as-labelled" : "wrong";
}
