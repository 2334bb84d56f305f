// When the model finds nothing that fits, the page may not be finished: a document that is still
// young (content a timer renders a moment after load, results on their way) or one that changed
// since it was read. Then the operation looks once more, within its deadline, instead of failing
// at once; on an old, still page it fails at once as before.

import { changedSince, pageState } from "../browser/settle.ts";
import type { Snapshot } from "../snapshot/snapshot.ts";
import type { OperationContext } from "./context.ts";

/** A document younger than this (ms) may still render what it is about to show. */
export const YOUNG_DOCUMENT_MS = 2_000;
/** How often a young, still page is looked at for a change. */
const POLL_MS = 50;
/** Time a second look needs at least (a snapshot and a model call). */
const SECOND_LOOK_MS = 500;

/**
 * Whether to read the page again after the model found nothing in `snapshot`: true once the page
 * has changed since (waiting for a change while its document is young), false when it is old and
 * still, or when the deadline leaves no time for a second look.
 */
export async function worthLookingAgain(ctx: OperationContext, snapshot: Snapshot): Promise<boolean> {
  let before = snapshot.pageState;
  for (;;) {
    if (ctx.deadline.timeLeft() < SECOND_LOOK_MS) return false;
    const now = await pageState(ctx.page, ctx.deadline);
    if (before && changedSince(before, now)) return true;
    if (now.age >= YOUNG_DOCUMENT_MS) return false;
    before ??= now;
    await ctx.deadline.sleep(Math.min(POLL_MS, YOUNG_DOCUMENT_MS - now.age));
  }
}
