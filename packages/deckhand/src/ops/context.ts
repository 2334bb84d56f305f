// What every operation needs: the page, the model, logging, and its deadline.

import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import type { ModelCaller } from "../llm/caller.ts";
import type { DeckhandLog, SecretRedactor } from "../log.ts";
import type { ModelConfiguration } from "../types.ts";
import type { ObservedTargets } from "./observed.ts";

export interface OperationContext {
  page: Page;
  caller: ModelCaller;
  log: DeckhandLog;
  redactor: SecretRedactor;
  /** The per-call model, if any. */
  model: ModelConfiguration | undefined;
  domSettleTimeout: number;
  selfHeal: boolean;
  /** Explicit instructions are carried out without a model when one element fits (explicit.ts). */
  explicitInstructions: boolean;
  /**
   * The operation's time limit and cancellation: every wait is bounded by it, every model call
   * aborts with it, and nothing acts on the page once it has aborted.
   */
  deadline: Deadline;
  /** What the Actions observe returned pointed at (act(action) checks its target against it). */
  observed: ObservedTargets;
}
