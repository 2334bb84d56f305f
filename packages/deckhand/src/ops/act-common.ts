// What the three ways of acting share (with the model, on an Action, from the cache): the record
// of a step performed, the result they give, the element a selector leads to now, and the one
// place a step is performed and recorded (performStep: the record-time locator check on the
// step's own element, then the step).

import { targetHandle } from "../browser/element-target.ts";
import { calmFor } from "../browser/settle.ts";
import { withoutCallLog } from "../deadline.ts";
import { type Target, targetAt } from "../snapshot/describe.ts";
import { recordLocators } from "../snapshot/locators.ts";
import {
  type Action,
  type ActResult,
  RECORDED_STEPS,
  type RecordedStep,
  type StepLocators,
  type Variables,
} from "../types.ts";
import type { OperationContext } from "./context.ts";
import { runStep, type StepTarget } from "./execute.ts";
import type { ActMethod } from "./methods.ts";

/** A step done: as the result reports it, and as it is recorded (the cache stores that record). */
export interface Performed {
  action: Action;
  step: RecordedStep;
}

/** An ActResult, carrying its recorded steps for the facade (RECORDED_STEPS, never sent as such). */
export function withRecordedSteps(result: ActResult, steps: RecordedStep[]): ActResult {
  Object.defineProperty(result, RECORDED_STEPS, { value: steps, enumerable: false });
  return result;
}

export function actResult(
  success: boolean,
  message: string,
  instruction: string,
  performed: Performed[],
): ActResult {
  return withRecordedSteps(
    { success, message, actionDescription: instruction, actions: performed.map((p) => p.action) },
    performed.map((p) => p.step),
  );
}

/**
 * An error as a result's sentence (or the model's next prompt): its message without the call log it
 * may end with; a failed act's result ends with the whole operation's log instead (LocalDriver.act).
 */
export function failureText(error: unknown): string {
  return withoutCallLog(error instanceof Error ? error.message : String(error));
}

/** How long an element that left the page has to come back (a re-render) before it counts as gone. */
const ELEMENT_RETURN_MS = 500;

/**
 * The element `selector` leads to now, found once (a target the caller releases with
 * releaseTarget), with its role and name and, when `xpath` is asked for, its absolute XPath;
 * undefined when nothing is there. Its callers act on it next (performStep), so the in-page count
 * of the record-time locator check is made here too, in the evaluation that reads the role and
 * name: the step costs no evaluation of its own for it.
 */
export async function whatIsAt(
  ctx: OperationContext,
  selector: string,
  options: { xpath: boolean },
): Promise<Target | undefined> {
  const describe = { ...options, locators: true };
  try {
    try {
      return await ctx.deadline.withLimit(`finding ${selector}`, 0, (once) =>
        targetAt(ctx.page, selector, { deadline: once }, describe),
      );
    } catch {
      ctx.deadline.check();
    }
    // Not there: the page may be re-rendering it, so it gets up to ELEMENT_RETURN_MS of the page's
    // calm to come back. A page calm for that long already will not bring it back by itself:
    // waiting there would only delay the self-heal.
    const wait = ELEMENT_RETURN_MS - (await calmFor(ctx.page, ctx.deadline));
    if (wait <= 0) return undefined;
    return await ctx.deadline.withLimit(`finding ${selector} again`, wait, (deadline) =>
      targetAt(ctx.page, selector, { deadline }, describe),
    );
  } catch (error) {
    ctx.deadline.check();
    if (ctx.deadline.aborted) throw error;
    return undefined;
  }
}

/**
 * The record-time locator check of the element a step is about to act on (see
 * snapshot/locators.ts). It runs before the step, on the page as the step finds it: that is the
 * page an exported script's locator will meet (after a click the element may be gone with its
 * page). A check that cannot be made leaves the step without locators; it never fails the step.
 */
async function locatorsBeforeStep(
  ctx: OperationContext,
  target: ActTarget,
): Promise<StepLocators | undefined> {
  try {
    // The element the step is about to act on, as found once for the action: the in-page count
    // made when it was described (act(action), the cache), or else one evaluation on its handle
    // (kept by the target, released by whoever made it), never a second resolution of the selector.
    const { element } = target;
    return await recordLocators(
      element.frame,
      { located: element.located, handle: () => targetHandle(element) },
      (text) => ctx.redactor.mask(text) !== text,
    );
  } catch (error) {
    ctx.deadline.check();
    if (ctx.deadline.aborted) throw error;
    ctx.log.debug("act", "the record-time locator check could not be made", { error: failureText(error) });
    return undefined;
  }
}

/** The element of a step as the acts find it: a snapshot Target (see StepTarget). */
export interface ActTarget extends StepTarget {
  element: Target;
}

/**
 * Performs one step and records it: the hook of the record-time locator check (first), then the
 * step itself (execute.ts runStep). Every way of acting goes through here, so every recorded step
 * carries the locators an export reads.
 */
export async function performStep(
  ctx: OperationContext,
  target: ActTarget | undefined,
  method: ActMethod,
  args: string[],
  variables: Variables | undefined,
  element: { description: string; role: string; name: string },
): Promise<RecordedStep> {
  const locators = target ? await locatorsBeforeStep(ctx, target) : undefined;
  await runStep(ctx, target, method, args, variables);
  return {
    selector: target?.selector ?? "",
    method,
    arguments: args,
    description: element.description,
    role: element.role,
    name: element.name,
    ...(locators ? { locators } : {}),
  };
}
