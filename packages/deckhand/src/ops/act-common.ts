// What the three ways of acting share (with the model, on an Action, from the cache): the record
// of a step performed, the result they give, and what a selector leads to now.

import type { CachedStep } from "../cache/action-cache.ts";
import { describeElement, type ElementFacts } from "../snapshot/describe.ts";
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

/** Role, name, node and absolute XPath of what a selector leads to now; undefined when nothing. */
export async function whatIsAt(ctx: OperationContext, selector: string): Promise<ElementFacts | undefined> {
  try {
    const { frame, handle } = await ctx.page
      .deepLocator(selector)
      .resolve({ timeout: ctx.deadline.cap(500), signal: ctx.deadline.signal });
    try {
      return await describeElement(frame, handle);
    } finally {
      void frame.release(handle);
    }
  } catch (error) {
    ctx.deadline.check();
    if (ctx.deadline.aborted) throw error;
    return undefined;
  }
}
