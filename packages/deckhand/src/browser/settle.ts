// Waiting for a page to stop changing before it is read. A page that is already quiet costs one
// round trip per frame; there is no fixed idle delay.
//
// "Quiet" adapts to the page: after a one-off change, QUIET_MS of calm is enough (YOUNG_QUIET_MS
// while the document is under a second old, when pages start their timers); a page that has
// been changing every so often (a ticker every 50 ms) must stay calm for twice its rhythm; and a
// page that has been changing non-stop for longer than ENDLESS_MS (an animation, a clock) is not
// waited for at all. The caller's bound (domSettleTimeout) caps everything.

import { Deadline } from "../deadline.ts";
import { domRuntime } from "./in-page.ts";
import type { Page } from "./page.ts";

/** Calm after a one-off change (about two animation frames). */
export const QUIET_MS = 30;
/** Calm required of a document younger than YOUNG_MS: pages start timers as they load. */
const YOUNG_QUIET_MS = 100;
const YOUNG_MS = 1_000;
/** Most calm ever required. */
const MAX_QUIET_MS = 500;
/** A burst of changes longer than this is an animation, not loading. */
const ENDLESS_MS = 2_000;
/** Requests of these types keep a page "loading"; images, fonts and media do not change the DOM. */
const DOM_AFFECTING = new Set(["Document", "Script", "XHR", "Fetch", "Other"]);
/** A request older than this is treated as background (long poll, beacon) and not waited for. */
const STALE_REQUEST_MS = 2_000;

export interface SettleResult {
  settled: boolean;
  waitedMs: number;
}

/**
 * Waits up to `timeoutMs` for the page to stop changing (running out is no error: the page is read
 * as it is). `deadline` is the operation's: when it aborts, so does the wait.
 */
export async function waitForSettled(
  page: Page,
  timeoutMs: number,
  deadline: Deadline = Deadline.none("settle"),
): Promise<SettleResult> {
  const started = Date.now();
  const until = started + timeoutMs;
  for (;;) {
    const now = Date.now();
    const busyNetwork = page
      .inflightRequests()
      .some((r) => DOM_AFFECTING.has(r.type) && now - r.startedAt < STALE_REQUEST_MS);
    let wait = 0;
    let loading = false;
    if (!busyNetwork) {
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
        if (check.readyState === "loading") loading = true;
        if (check.burstAge > ENDLESS_MS) continue;
        const floor = check.age < YOUNG_MS ? YOUNG_QUIET_MS : QUIET_MS;
        const needed =
          check.interval === null ? floor : Math.min(MAX_QUIET_MS, Math.max(floor, 2 * check.interval));
        wait = Math.max(wait, needed - check.sinceMutation);
      }
      if (!loading && wait <= 0) return { settled: true, waitedMs: Date.now() - started };
    }
    const left = until - Date.now();
    if (left <= 0) return { settled: false, waitedMs: Date.now() - started };
    const pause = busyNetwork || loading ? 20 : Math.max(5, wait);
    await deadline.sleep(Math.min(pause, left));
  }
}
