// What the three ways of acting share (with the model, on an Action, from the cache): the record
// of a step performed, the result they give, and the element a selector leads to now.

import type { CachedStep } from "../cache/action-cache.ts";
import { type Target, targetAt } from "../snapshot/describe.ts";
import type { Action, ActResult } from "../types.ts";
import type { OperationContext } from "./context.ts";

/** A step done: as the result reports it, and as the cache stores it. */
export interface Performed {
  action: Action;
  step: CachedStep;
}

export function actResult(
  success: boolean,
  message: string,
  instruction: string,
  performed: Performed[],
): ActResult {
  return { success, message, actionDescription: instruction, actions: performed.map((p) => p.action) };
}

export function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The element `selector` leads to now, found once (a target the caller releases with
 * releaseTarget), with its role and name and, when `xpath` is asked for, its absolute XPath;
 * undefined when nothing is there.
 */
export async function whatIsAt(
  ctx: OperationContext,
  selector: string,
  options: { xpath: boolean },
): Promise<Target | undefined> {
  try {
    return await targetAt(
      ctx.page,
      selector,
      { timeout: ctx.deadline.cap(500), signal: ctx.deadline.signal },
      options,
    );
  } catch (error) {
    ctx.deadline.check();
    if (ctx.deadline.aborted) throw error;
    return undefined;
  }
}
