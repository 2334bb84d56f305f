// act: carry out an instruction (or a given Action) on the page with real input events.
//
// Success is claimed only when the action landed on the chosen element: the locator's hit test
// refuses a covered element, the node is checked to be the one the snapshot meant, and typed text
// is read back. On a recoverable failure (element gone, covered, replaced) with selfHeal on, the
// page is read again and the same intent resolved once more.

import { z } from "zod";
import { absoluteXPath } from "../browser/xpath.ts";
import type { ActionCache, CachedStep } from "../cache/action-cache.ts";
import { MissingLLMConfigurationError, ServiceElementNotFoundError } from "../errors.ts";
import { describeElement, type ElementFacts } from "../snapshot/describe.ts";
import { type Snapshot, takeSnapshot } from "../snapshot/snapshot.ts";
import type { Action, ActResult, Variables } from "../types.ts";
import type { OperationContext } from "./context.ts";
import { isRecoverable, normalizeMethod, runStep, type StepTarget } from "./execute.ts";
import { observe, observedTarget } from "./observe.ts";
import { ACT_METHODS, ACT_SYSTEM, type ActMethod, userMessage } from "./prompts.ts";
import { describeVariables } from "./variables.ts";

/** Steps one instruction may take (open a menu, pick from it, ...). */
const MAX_STEPS = 4;

export const actAnswer = z.object({
  elementId: z.number().int().describe("The id of the element to act on, or -1."),
  method: z.enum(ACT_METHODS),
  arguments: z.array(z.string()).describe("Arguments of the method (see the methods); [] when none."),
  description: z.string().describe("What this step does, e.g. 'click the Sign in button'."),
  completed: z.boolean().describe("Whether this step finishes the instruction."),
});
type ActAnswer = z.infer<typeof actAnswer>;

interface Performed {
  action: Action;
  step: CachedStep;
}

export interface ActParams {
  instruction: string;
  variables?: Variables;
  cache?: ActionCache;
}

function result(success: boolean, message: string, instruction: string, performed: Performed[]): ActResult {
  return { success, message, actionDescription: instruction, actions: performed.map((p) => p.action) };
}

function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** act(instruction): the model chooses, Deckhand does. */
export async function actWithModel(ctx: OperationContext, params: ActParams): Promise<ActResult> {
  const { instruction, variables } = params;
  const startUrl = ctx.page.url();
  const cacheKey = params.cache?.key(instruction, startUrl, variables);

  if (params.cache && cacheKey) {
    const replayed = await replayFromCache(ctx, params.cache, cacheKey, variables);
    if (replayed) {
      return result(
        true,
        `Done from the action cache: ${replayed.map((p) => p.step.description).join(", then ")}.`,
        instruction,
        replayed,
      );
    }
  }

  const performed: Performed[] = [];
  let healedFrom: string | undefined;
  let failureNote: string | undefined;
  let finished = false;
  for (let step = 0; step < MAX_STEPS && !finished; ) {
    const snapshot = await takeSnapshot(ctx.page, {
      instruction,
      domSettleTimeout: ctx.domSettleTimeout,
      signal: ctx.deadline.signal,
    });
    ctx.deadline.check();
    const answer = await askForStep(ctx, snapshot, instruction, variables, performed, failureNote);
    ctx.deadline.check();
    if (answer.elementId >= 0 && !snapshot.has(answer.elementId)) {
      return result(
        false,
        `The model chose element [${answer.elementId}], which is not on the page.`,
        instruction,
        performed,
      );
    }
    const pageLevel = answer.elementId < 0 && (answer.method === "press" || answer.method === "scrollByPage");
    if (answer.elementId < 0 && !pageLevel) {
      return result(
        false,
        `No element on the page fits the instruction: ${answer.description}`,
        instruction,
        performed,
      );
    }
    try {
      const done = await performAnswer(ctx, snapshot, answer, variables);
      performed.push(done);
      failureNote = undefined;
      step++;
      finished = answer.completed;
    } catch (error) {
      if (!isRecoverable(error)) throw error;
      if (!ctx.selfHeal || healedFrom !== undefined) {
        return result(
          false,
          `Could not ${answer.description}: ${failureText(error)}`,
          instruction,
          performed,
        );
      }
      healedFrom = failureText(error);
      failureNote = `The previous attempt (${answer.description}) failed: ${healedFrom}`;
      ctx.log.info("act", "self-healing: reading the page again after a failed step", { error: healedFrom });
    }
  }
  if (performed.length === 0) return result(false, "Nothing was done.", instruction, performed);
  if (!finished) {
    // The model never said the instruction was done: what was done is reported, not claimed.
    return result(
      false,
      `Stopped after ${MAX_STEPS} steps without finishing: ${performed.map((p) => p.action.description).join(", then ")}.`,
      instruction,
      performed,
    );
  }
  const message =
    `Done: ${performed.map((p) => p.action.description).join(", then ")}.` +
    (healedFrom ? ` (Self-healed: the first attempt failed with "${healedFrom}".)` : "");
  if (params.cache && cacheKey) {
    await params.cache.put(cacheKey, {
      instruction,
      url: startUrl,
      variables: Object.keys(variables ?? {}).sort(),
      steps: performed.map((p) => p.step),
    });
  }
  return result(true, message, instruction, performed);
}

async function askForStep(
  ctx: OperationContext,
  snapshot: Snapshot,
  instruction: string,
  variables: Variables | undefined,
  performed: Performed[],
  failureNote: string | undefined,
): Promise<ActAnswer> {
  const { data } = await ctx.caller.call({
    operation: "act",
    model: ctx.model,
    signal: ctx.deadline.signal,
    schema: actAnswer,
    messages: [
      { role: "system", content: ACT_SYSTEM },
      {
        role: "user",
        content: userMessage([
          `Instruction: ${instruction}`,
          describeVariables(variables),
          performed.length
            ? `Steps already done:\n${performed.map((p, i) => `${i + 1}. ${p.action.description}`).join("\n")}`
            : undefined,
          failureNote,
          `Page outline:\n${snapshot.text}`,
        ]),
      },
    ],
  });
  return data;
}

async function performAnswer(
  ctx: OperationContext,
  snapshot: Snapshot,
  answer: ActAnswer,
  variables: Variables | undefined,
): Promise<Performed> {
  const method = answer.method as ActMethod;
  let target: StepTarget | undefined;
  let role = "";
  let name = "";
  if (answer.elementId >= 0) {
    const [ref, node] = await Promise.all([
      snapshot.element(answer.elementId),
      snapshot.backendNodeId(answer.elementId),
    ]);
    target = { selector: ref.xpath, expectedNode: node };
    role = ref.role;
    name = ref.name;
  }
  const args = [...answer.arguments];
  if (method === "dragAndDrop" && args[0])
    args[0] = await dropTargetXPath(snapshot, answer.elementId, args[0]);
  await runStep(ctx, target, method, args, variables);
  return {
    action: { selector: target?.selector ?? "", description: answer.description, method, arguments: args },
    step: {
      selector: target?.selector ?? "",
      method,
      arguments: args,
      description: answer.description,
      role,
      name,
    },
  };
}

/**
 * The drop target of a dragAndDrop answer as an XPath (that is how it is recorded and replayed).
 * The model names it by id or, since a drop zone is often a plain container with no id, by its
 * text; text is looked up in the frame of the dragged element.
 */
async function dropTargetXPath(snapshot: Snapshot, sourceId: number, target: string): Promise<string> {
  const id = /^\s*\[?(\d+)\]?\s*$/.exec(target);
  if (id) {
    const dropId = Number(id[1]);
    if (!snapshot.has(dropId))
      throw new ServiceElementNotFoundError(`[${dropId}]`, "(the drop target is not on the page)");
    return (await snapshot.element(dropId)).xpath;
  }
  const frame = sourceId >= 0 ? snapshot.frameOf(sourceId) : snapshot.page.mainFrame();
  const { handle } = await frame.locator(`text=${JSON.stringify(target.trim())}`).resolve({ timeout: 500 });
  try {
    return await absoluteXPath(frame, handle);
  } finally {
    void frame.release(handle);
  }
}

/** Role, name and absolute XPath of what a selector leads to now, or undefined when it leads nowhere. */
async function whatIsAt(ctx: OperationContext, selector: string): Promise<ElementFacts | undefined> {
  try {
    const { frame, handle } = await ctx.page
      .deepLocator(selector)
      .resolve({ timeout: ctx.deadline.cap(500), signal: ctx.deadline.signal });
    try {
      return await describeElement(frame, handle);
    } finally {
      void frame.release(handle);
    }
  } catch {
    return undefined;
  }
}

/** The cached steps for `key`, replayed, or undefined when there is no usable entry or the page changed. */
async function replayFromCache(
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

function knownMethod(method: string): boolean {
  try {
    normalizeMethod(method);
    return true;
  } catch {
    return false;
  }
}

/** Replays cached steps if every element is still what it was; undefined when the page changed. */
async function replayCached(
  ctx: OperationContext,
  steps: CachedStep[],
  variables: Variables | undefined,
): Promise<Performed[] | undefined> {
  const performed: Performed[] = [];
  for (const step of steps) {
    let target: StepTarget | undefined;
    if (step.selector) {
      const now = await whatIsAt(ctx, step.selector);
      if (!now || now.role !== step.role || now.name !== step.name) return undefined;
      target = { selector: step.selector, expectedNode: now.node };
    }
    try {
      await runStep(ctx, target, normalizeMethod(step.method), step.arguments, variables);
    } catch (error) {
      if (isRecoverable(error)) return undefined;
      throw error;
    }
    performed.push({
      action: {
        selector: step.selector,
        description: step.description,
        method: step.method,
        arguments: step.arguments,
      },
      step,
    });
  }
  return performed;
}

/**
 * act(action): no model. The selector must still lead to what observe saw (the same node, or an
 * element with the same role and name); otherwise, with selfHeal, it is found again from its
 * description. It never acts silently on a different element.
 */
export async function actOnAction(
  ctx: OperationContext,
  action: Action,
  variables: Variables | undefined,
): Promise<ActResult> {
  const method = normalizeMethod(action.method);
  const args = action.arguments ?? [];
  const remembered = observedTarget(action);
  const description = action.description || `${method} ${action.selector}`;
  const one = (success: boolean, message: string, selector = action.selector): ActResult => ({
    success,
    message,
    actionDescription: description,
    actions: [{ selector, description, method, arguments: args }],
  });

  let target: StepTarget | undefined;
  let problem: string | undefined;
  // Whatever kind of selector came in, the result names the element by its XPath.
  let performedAt = action.selector;
  if (action.selector) {
    const now = await whatIsAt(ctx, action.selector);
    if (!now) problem = `${JSON.stringify(action.selector)} no longer leads to an element`;
    else if (
      remembered &&
      now.node !== remembered.backendNodeId &&
      (now.role !== remembered.role || now.name !== remembered.name)
    ) {
      problem = `${JSON.stringify(action.selector)} now leads to ${now.role} "${now.name}", not ${remembered.role} "${remembered.name}"`;
    } else {
      target = { selector: action.selector, expectedNode: now.node };
      performedAt = now.xpath;
    }
  }

  if (!problem) {
    try {
      await runStep(ctx, target, method, args, variables);
      return one(true, `Done: ${description}.`, performedAt);
    } catch (error) {
      if (!isRecoverable(error)) throw error;
      problem = failureText(error);
    }
  }
  if (!ctx.selfHeal) return one(false, `Not done: ${problem}.`);
  // Self-heal: find the element again from its description (this needs a model).
  try {
    // The user called act: the tokens of this question count under act in metrics.
    const [found] = await observe(ctx, { instruction: `Find: ${description}`, variables, metricsAs: "act" });
    if (!found) return one(false, `Not done: ${problem}, and nothing on the page matches "${description}".`);
    const healed = await whatIsAt(ctx, found.selector);
    await runStep(ctx, { selector: found.selector, expectedNode: healed?.node }, method, args, variables);
    return one(
      true,
      `Done: ${description}. (Self-healed: ${problem}; found it again at ${found.selector}.)`,
      found.selector,
    );
  } catch (error) {
    if (error instanceof MissingLLMConfigurationError)
      return one(false, `Not done: ${problem} (no model to find it again).`);
    if (isRecoverable(error))
      return one(false, `Not done: ${problem}; finding it again failed: ${failureText(error)}`);
    throw error;
  }
}
