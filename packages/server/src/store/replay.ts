// Turning operations into the replay record and back: what is stored for one action, and how a
// session's actions are grouped into pages (spec 2.3-2.6).

import { redactSecrets } from "../redact.ts";
import type { NewReplayAction, ReplayAction, ReplayResult, TokenUsage } from "./store.ts";

/** One stored action as both back ends read it back, in the order it was appended. */
export interface StoredAction {
  /** Set when read back from the store. */
  seq?: number;
  method: string;
  parameters: Record<string, unknown>;
  result: Record<string, unknown>;
  timestamp: number;
  endTime: number | null;
  pageUrl: string;
  inputTokens: number | null;
  outputTokens: number | null;
  timeMs: number | null;
  cost: number | null;
}

function asObject(value: unknown): Record<string, unknown> {
  if (value !== null && typeof value === "object" && !Array.isArray(value))
    return value as Record<string, unknown>;
  // Spec 2.5 requires an object. The types already ask callers for one; this keeps a stray array
  // or scalar from turning a successful operation into a failed write.
  return { value };
}

/** What gets written for one action: secrets removed, shapes made to fit spec 2.5. */
export function prepareAction(action: NewReplayAction): StoredAction {
  const usage = action.tokenUsage ?? {};
  return {
    method: action.method,
    parameters: redactSecrets(asObject(action.parameters)),
    result: redactSecrets(asObject(action.result)),
    timestamp: action.timestamp,
    endTime: action.endTime ?? null,
    pageUrl: action.pageUrl,
    inputTokens: usage.inputTokens ?? null,
    outputTokens: usage.outputTokens ?? null,
    timeMs: usage.timeMs ?? null,
    cost: usage.cost ?? null,
  };
}

export function toReplayAction(stored: StoredAction): ReplayAction {
  const action: ReplayAction = {
    method: stored.method,
    parameters: stored.parameters,
    result: stored.result,
    timestamp: stored.timestamp,
  };
  if (stored.endTime !== null) action.endTime = stored.endTime;
  const usage: TokenUsage = {};
  if (stored.inputTokens !== null) usage.inputTokens = stored.inputTokens;
  if (stored.outputTokens !== null) usage.outputTokens = stored.outputTokens;
  if (stored.timeMs !== null) usage.timeMs = stored.timeMs;
  if (stored.cost !== null) usage.cost = stored.cost;
  if (Object.keys(usage).length > 0) action.tokenUsage = usage;
  return action;
}

/**
 * Consecutive actions on the same URL form one page; going back to an earlier URL starts a new
 * page, so the pages read in the order the session visited them. A page's duration runs from its
 * first action's start to its last action's end (or start, when it has no end).
 */
export function groupIntoPages(actions: readonly StoredAction[], clientLanguage?: string): ReplayResult {
  const replay: ReplayResult = { pages: [] };
  let pageEnd = 0;
  for (const stored of actions) {
    let page = replay.pages.at(-1);
    if (!page || page.url !== stored.pageUrl) {
      page = { url: stored.pageUrl, timestamp: stored.timestamp, duration: 0, actions: [] };
      replay.pages.push(page);
      pageEnd = stored.timestamp;
    }
    page.actions.push(toReplayAction(stored));
    pageEnd = Math.max(pageEnd, stored.endTime ?? stored.timestamp);
    page.duration = pageEnd - page.timestamp;
  }
  if (clientLanguage !== undefined) replay.clientLanguage = clientLanguage;
  return replay;
}
