// act(action): no model. The selector must still lead to what observe saw (the same node, or an
// element with the same role and name); otherwise, with selfHeal, it is found again from its
// description (one question to the model, counted under act). It never acts silently on a
// different element, and an element that cannot take the method is a failure, not a heal.

import { releaseTarget } from "../browser/element-target.ts";
import { MissingLLMConfigurationError, ServiceElementNotFoundError } from "../errors.ts";
import type { Target } from "../snapshot/describe.ts";
import type { Action, ActResult, RecordedStep, Variables } from "../types.ts";
import { failureText, performStep, whatIsAt, withRecordedSteps } from "./act-common.ts";
import type { OperationContext } from "./context.ts";
import { elementMoved, isRecoverable } from "./execute.ts";
import { normalizeMethod } from "./methods.ts";
import { observe } from "./observe.ts";

export async function actOnAction(
  ctx: OperationContext,
  action: Action,
  variables: Variables | undefined,
): Promise<ActResult> {
  const method = normalizeMethod(action.method);
  const args = action.arguments ?? [];
  const remembered = ctx.observed.find(action);
  const description = action.description || `${method} ${action.selector}`;
  const one = (
    success: boolean,
    message: string,
    selector = action.selector,
    recorded?: RecordedStep,
  ): ActResult =>
    withRecordedSteps(
      {
        success,
        message,
        actionDescription: description,
        actions: [{ selector, description, method, arguments: args }],
      },
      recorded ? [recorded] : [],
    );
  /** What the element is, for the record (a variable's value in its name kept as its %name%). */
  const identity = (facts: { role: string; name: string } | undefined) => ({
    description,
    role: facts?.role ?? "",
    name: ctx.redactor.mask(facts?.name ?? ""),
  });

  /** The element, found once: checked here, recorded and acted on by performStep, released at the end. */
  let now: Target | undefined;
  let problem: string | undefined;
  /** Whether finding the element again could help (it moved), as opposed to it not taking the method. */
  let moved = true;
  // Whatever kind of selector came in, the result names the element by its XPath.
  let performedAt = action.selector;
  try {
    if (action.selector) {
      now = await whatIsAt(ctx, action.selector, { xpath: true });
      if (!now) problem = `${JSON.stringify(action.selector)} no longer leads to an element`;
      else if (
        remembered &&
        now.backendNodeId !== remembered.backendNodeId &&
        (now.role !== remembered.role || now.name !== remembered.name)
      ) {
        problem = `${JSON.stringify(action.selector)} now leads to ${now.role} "${now.name}", not ${remembered.role} "${remembered.name}"`;
      } else {
        performedAt = now.xpath ?? action.selector;
      }
    }

    if (!problem) {
      try {
        const target = now ? { element: now, selector: action.selector } : undefined;
        const recorded = await performStep(ctx, target, method, args, variables, identity(now));
        return one(true, `Done: ${description}.`, performedAt, { ...recorded, selector: performedAt });
      } catch (error) {
        if (!isRecoverable(error)) throw error;
        problem = failureText(error);
        moved = elementMoved(error);
      }
    }
  } finally {
    releaseTarget(now);
  }
  if (!ctx.selfHeal || !moved) return one(false, `Not done: ${problem}.`);
  // Self-heal: find the element again from its description (this needs a model).
  let healed: Target | undefined;
  try {
    // The user called act: the tokens of this question count under act in metrics.
    const [found] = await observe(ctx, { instruction: `Find: ${description}`, variables, metricsAs: "act" });
    if (!found) return one(false, `Not done: ${problem}, and nothing on the page matches "${description}".`);
    healed = await whatIsAt(ctx, found.selector, { xpath: false });
    if (!healed)
      throw new ServiceElementNotFoundError(found.selector, "(it left the page after it was found again)");
    const recorded = await performStep(
      ctx,
      { element: healed, selector: found.selector },
      method,
      args,
      variables,
      identity(healed),
    );
    return one(
      true,
      `Done: ${description}. (Self-healed: ${problem}; found it again at ${found.selector}.)`,
      found.selector,
      recorded,
    );
  } catch (error) {
    if (error instanceof MissingLLMConfigurationError)
      return one(false, `Not done: ${problem} (no model to find it again).`);
    if (isRecoverable(error))
      return one(false, `Not done: ${problem}; finding it again failed: ${failureText(error)}`);
    throw error;
  } finally {
    releaseTarget(healed);
  }
}
