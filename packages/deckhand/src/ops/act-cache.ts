// An act served from the action cache: the stored steps are replayed without the model once each
// stored element is checked to still be there and still be what it was (role and name). A step
// whose element changed, or that fails on it, means the page no longer fits: the caller asks the
// model instead (and stores what it does).

import { releaseTarget } from "../browser/element-target.ts";
import type { ActionCache, CachedStep } from "../cache/action-cache.ts";
import type { Variables } from "../types.ts";
import { type Performed, performStep, whatIsAt } from "./act-common.ts";
import type { OperationContext } from "./context.ts";
import { isRecoverable } from "./execute.ts";
import { knownMethod, normalizeMethod } from "./methods.ts";

/** The cached steps for `key`, replayed, or undefined when there is no usable entry or the page changed. */
export async function replayFromCache(
  ctx: OperationContext,
  cache: ActionCache,
  key: string,
  variables: Variables | undefined,
): Promise<Performed[] | undefined> {
  const entry = await cache.get(key);
  if (!entry) return undefined;
  const unknown = entry.steps.find((s) => !knownMethod(s.method));
  if (unknown) {
    cache.reject(key, `unknown method ${JSON.stringify(unknown.method)}`);
    return undefined;
  }
  const replayed = await replayCached(ctx, entry.steps, variables);
  if (replayed)
    ctx.log.info("cache", `act served from the action cache (${entry.steps.length} step(s), no model call)`);
  else ctx.log.info("cache", "the cached action no longer matches the page; asking the model");
  return replayed;
}

/** Replays cached steps if every element is still what it was; undefined when the page changed. */
async function replayCached(
  ctx: OperationContext,
  steps: CachedStep[],
  variables: Variables | undefined,
): Promise<Performed[] | undefined> {
  const performed: Performed[] = [];
  for (const step of steps) {
    // The stored XPath is what the result names: it is not written again, only checked.
    const now = step.selector ? await whatIsAt(ctx, step.selector, { xpath: false }) : undefined;
    let recorded: CachedStep;
    try {
      if (step.selector && (!now || now.role !== step.role || ctx.redactor.mask(now.name) !== step.name))
        return undefined;
      // Recorded again: the locators are checked on the page as it is now.
      recorded = await performStep(
        ctx,
        now ? { element: now, selector: step.selector } : undefined,
        normalizeMethod(step.method),
        step.arguments,
        variables,
        step,
      );
    } catch (error) {
      if (isRecoverable(error)) return undefined;
      throw error;
    } finally {
      releaseTarget(now);
    }
    performed.push({
      action: {
        selector: step.selector,
        description: step.description,
        method: step.method,
        arguments: step.arguments,
      },
      step: { ...recorded, method: step.method },
    });
  }
  return performed;
}
