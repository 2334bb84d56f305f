// Waiting for a page to stop changing before it is read, from real signals only:
//
// - requests in flight that can change the DOM (documents, scripts, XHR, fetch), unless they are
//   old enough to be background traffic (a long poll, a beacon): as the browser reports them, and
//   as the page counts its scripts' own (which covers the moment between a response's arrival and
//   the script that renders it, and a request the browser has not reported yet);
// - navigations asked for and not committed yet, documents still being parsed, and timeouts a
//   young document set for its first second (content it renders a moment after loading);
// - DOM changes (after parsing) and Deckhand's own input events within a short quiet window:
//   a click handler that renders a moment later is waited for; a page that has been changing on
//   its own at a rhythm (a ticker every 50 ms, not the answer to a click) must stay calm for twice
//   that rhythm.
//
// A still page costs one round trip per frame. A page that has been changing non-stop for longer
// than ENDLESS_MS (an animation, a clock) is not waited for. Content a page renders by itself later
// than its first second is not waited for either: the operations look once more when the model
// finds nothing on a young or changing document (ops/look-again.ts). The caller's bound
// (domSettleTimeout) caps everything.

import type { Deadline } from "../deadline.ts";
import { domRuntime } from "./in-page.ts";
import type { QuietState } from "./injected/quiet.ts";
import type { Page } from "./page.ts";

/** Calm after a change or an input event before the page counts as still. */
export const QUIET_MS = 15;
/** Most calm ever required of a page with a rhythm. */
const MAX_QUIET_MS = 500;
/** A burst of changes longer than this is an animation, not loading. */
const ENDLESS_MS = 2_000;
/**
 * Requests of these types keep a page "loading": a document, a script, or data a script asked
 * for. Images, fonts and media do not change the DOM, and neither does what the browser fetches
 * for itself (type Other: the tab's favicon, which never reports an end to the page).
 */
const DOM_AFFECTING = new Set(["Document", "Script", "XHR", "Fetch"]);
/** A request (or a navigation asked for) older than this is treated as background and not waited for. */
const STALE_MS = 2_000;
/** How often a busy page is looked at again. */
const POLL_MS = 10;

export interface SettleResult {
  settled: boolean;
  waitedMs: number;
  /** What the page looked like when the wait ended (see pageState), when it was looked at. */
  state: PageState | undefined;
}

/**
 * How far each frame's document has come: how many changes it has had (after loading) and its
 * age. Two states of a page tell whether it changed in between (ops look once more then).
 */
export interface PageState {
  /** Changes per frame id. */
  changes: Map<string, number>;
  /** Age (ms) of the main frame's document. */
  age: number;
}

/** The page's state now (one round trip per frame). */
export async function pageState(page: Page, deadline: Deadline): Promise<PageState> {
  const frames = page.frames().filter((f) => f.hasDocument);
  const checks = await deadline.race(
    Promise.all(frames.map((f) => f.invoke(domRuntime, "quiet").catch(() => null))),
  );
  return stateOf(page, frames, checks);
}

function stateOf(
  page: Page,
  frames: readonly { id: string }[],
  checks: readonly ({ changes: number; age: number } | null)[],
): PageState {
  const changes = new Map<string, number>();
  let age = 0;
  checks.forEach((check, i) => {
    if (!check) return;
    const id = frames[i]!.id;
    changes.set(id, check.changes);
    if (id === page.mainFrame().id) age = check.age;
  });
  return { changes, age };
}

/**
 * Whether a page changed between two of its states: a frame of the first went away or changed.
 * (The first may cover fewer frames, those a snapshot read: frames it did not read, hidden ones,
 * do not count.)
 */
export function changedSince(before: PageState, now: PageState): boolean {
  for (const [id, n] of before.changes) if (now.changes.get(id) !== n) return true;
  return false;
}

/**
 * How long (ms) the page has been calm: no DOM change in any frame, no input of Deckhand's, and
 * nothing under way that may change it (0 while a request, a navigation, a young document's timer
 * or a frame's loading is). One round trip per frame.
 */
export async function calmFor(page: Page, deadline: Deadline): Promise<number> {
  const now = Date.now();
  if (trafficBusy(page, now)) return 0;
  const frames = page.frames().filter((f) => f.hasDocument);
  const checks = await deadline.race(
    Promise.all(frames.map((f) => f.invoke(domRuntime, "quiet").catch(() => null))),
  );
  let calm = now - page.lastInputAt;
  for (const check of checks) {
    if (!check || frameWait(check) === "loading") return 0;
    calm = Math.min(calm, check.sinceChange);
  }
  return calm;
}

/** Whether the page's own traffic says it is busy: DOM-affecting requests or navigations in flight. */
function trafficBusy(page: Page, now: number): boolean {
  return (
    page.pendingNavigations(STALE_MS) > 0 ||
    page.inflightRequests().some((r) => DOM_AFFECTING.has(r.type) && now - r.startedAt < STALE_MS)
  );
}

/** Milliseconds of calm one frame still needs (0: none), or "loading" while it must be waited for. */
function frameWait(check: QuietState): number | "loading" {
  if (check.readyState === "loading" || check.timersDue !== null || check.requests > 0) return "loading";
  if (check.burstAge > ENDLESS_MS) return 0;
  const needed =
    check.rhythm === null ? QUIET_MS : Math.min(MAX_QUIET_MS, Math.max(QUIET_MS, 2 * check.rhythm));
  return Math.max(0, needed - check.sinceChange);
}

/**
 * Whether a page can be read without waiting: nothing in flight, Deckhand's own input far enough
 * back, and each frame's state (as a capture reported it) calm. The snapshot reads optimistically
 * and waits only when this says no, so a still page costs one round trip per frame.
 */
export function readableNow(page: Page, frameStates: readonly (QuietState | null)[]): boolean {
  const now = Date.now();
  if (trafficBusy(page, now) || now - page.lastInputAt < QUIET_MS) return false;
  return frameStates.every((state) => state !== null && frameWait(state) === 0);
}

/** The page's state from states its frames reported (see PageState). */
export function stateFrom(
  page: Page,
  frames: readonly { id: string }[],
  states: readonly (QuietState | null)[],
): PageState {
  return stateOf(page, frames, states);
}

/**
 * Waits up to `timeoutMs` for the page to stop changing (running out is no error: the page is read
 * as it is). `deadline` is the operation's: when it aborts, so does the wait.
 */
export async function waitForSettled(
  page: Page,
  timeoutMs: number,
  deadline: Deadline,
): Promise<SettleResult> {
  const started = Date.now();
  const until = started + timeoutMs;
  for (;;) {
    const now = Date.now();
    const busy = trafficBusy(page, now);
    let wait = Math.max(0, QUIET_MS - (now - page.lastInputAt));
    let loading = false;
    if (!busy) {
      const frames = page.frames();
      const checks = await deadline.race(
        Promise.all(
          frames.map((f) =>
            f.hasDocument ? f.invoke(domRuntime, "quiet").catch(() => null) : Promise.resolve(null),
          ),
        ),
      );
      for (const [i, check] of checks.entries()) {
        if (!check) {
          if (!frames[i]!.detached) loading = true;
          continue;
        }
        const frame = frameWait(check);
        if (frame === "loading") loading = true;
        else wait = Math.max(wait, frame);
      }
      if (!loading && wait <= 0)
        return { settled: true, waitedMs: Date.now() - started, state: stateOf(page, frames, checks) };
    }
    const left = until - Date.now();
    if (left <= 0) return { settled: false, waitedMs: Date.now() - started, state: undefined };
    deadline.log(
      busy
        ? "waiting for requests in flight to end"
        : loading
          ? "waiting for a document to load"
          : "waiting for the page to settle",
    );
    await deadline.sleep(Math.min(busy || loading ? POLL_MS : Math.max(1, wait), left));
  }
}
