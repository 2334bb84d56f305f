// act(instruction): the model chooses the element, the method and its arguments from the page's
// outline, Deckhand does it with real input events, and asks again for the next step until the
// model says the instruction is done (at most MAX_STEPS). Success is claimed only when every step
// applied; a step that failed on an element that was gone or could not take it (with selfHeal)
// makes Deckhand read the page again and ask once more, saying what failed. With an action cache,
// an identical act is replayed from it first (act-cache.ts) and a successful one is stored.

import { z } from "zod";
import { releaseTarget } from "../browser/element-target.ts";
import { absoluteXPath } from "../browser/xpath.ts";
import type { ActionCache } from "../cache/action-cache.ts";
import { MissingLLMConfigurationError, ServiceElementNotFoundError } from "../errors.ts";
import { type Snapshot, takeSnapshot } from "../snapshot/snapshot.ts";
import type { ActResult, Variables } from "../types.ts";
import { replayFromCache } from "./act-cache.ts";
import { actResult, failureText, type Performed, performStep } from "./act-common.ts";
import type { OperationContext } from "./context.ts";
import { isRecoverable } from "./execute.ts";
import { actExplicitly, type ExplicitOutcome } from "./explicit.ts";
import { worthLookingAgain } from "./look-again.ts";
import { ACT_METHODS, methodSpec } from "./methods.ts";
import { idsNotInOutline, normalizeActAnswer, pressMeansClick } from "./model-words.ts";
import { ACT_SYSTEM, userMessage } from "./prompts.ts";
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

export interface ActParams {
  instruction: string;
  variables?: Variables;
  cache?: ActionCache;
  /**
   * Steps already carried out without a model (the explicit clauses of a multi-step instruction)
   * and what is left: the model is told they happened and asked only for the rest.
   */
  handOff?: { done: Performed[]; rest: string };
  /** The page's outline read whole just before (by the explicit attempt): the first step uses it. */
  outline?: Snapshot;
}

/**
 * act(instruction): an explicit instruction is carried out without a model when exactly one
 * visible element fits it (explicit.ts); otherwise the model chooses, Deckhand does.
 */
export async function actWithModel(ctx: OperationContext, params: ActParams): Promise<ActResult> {
  if (!ctx.explicitInstructions) return actByModel(ctx, params);
  const explicit = await actExplicitly(ctx, params.instruction, params.variables);
  if (explicit.resolved && !explicit.failed) {
    ctx.log.info("act", "explicit instruction carried out without a model (0 tokens)", {
      instruction: params.instruction,
    });
    return explicit.result;
  }
  ctx.log.debug("act", "not carried out without a model; asking the model", {
    why: explicit.resolved ? explicit.result.message : explicit.reason,
  });
  const handOff =
    !explicit.resolved && explicit.done.length > 0 ? { done: explicit.done, rest: explicit.rest } : undefined;
  if (handOff) {
    ctx.log.info("act", "explicit steps carried out without a model; the rest goes to the model", {
      done: handOff.done.length,
    });
  }
  try {
    const outline = explicit.resolved ? undefined : explicit.outline;
    return await actByModel(ctx, {
      ...params,
      ...(handOff ? { handOff } : {}),
      ...(outline ? { outline } : {}),
    });
  } catch (error) {
    if (!(error instanceof MissingLLMConfigurationError)) throw error;
    const fallback = needsModel(params.instruction, explicit, error);
    if (fallback instanceof Error) throw fallback;
    return fallback;
  }
}

/** With no model: the explicit attempt's failure as it was, or why this instruction needs one. */
function needsModel(
  instruction: string,
  explicit: ExplicitOutcome,
  error: MissingLLMConfigurationError,
): MissingLLMConfigurationError | ActResult {
  if (explicit.resolved) return explicit.result;
  const done = explicit.done.length
    ? ` Done before that, without a model: ${explicit.done.map((p) => p.action.description).join(", then ")}; ` +
      `left for a model: ${explicit.rest}.`
    : "";
  return new MissingLLMConfigurationError(
    `The instruction ${JSON.stringify(instruction)} needs a model: ${explicit.reason}.${done} ` +
      "Without a model, act() carries out only explicit instructions that name one visible element " +
      '(for example "click the Sign in button", "type %email% into the Email field"). ' +
      error.message,
    { cause: error },
  );
}

/** act(instruction) by the model: it chooses, Deckhand does. */
async function actByModel(ctx: OperationContext, params: ActParams): Promise<ActResult> {
  const { instruction, variables } = params;
  const startUrl = ctx.page.url();
  const cacheKey = params.cache?.key(instruction, startUrl, variables);

  // After explicit steps, a cached replay would do them again: the cache is for whole instructions.
  if (params.cache && cacheKey && !params.handOff) {
    const replayed = await replayFromCache(ctx, params.cache, cacheKey, variables);
    if (replayed) {
      return actResult(
        true,
        `Done from the action cache: ${replayed.map((p) => p.step.description).join(", then ")}.`,
        instruction,
        replayed,
      );
    }
  }

  const performed: Performed[] = [...(params.handOff?.done ?? [])];
  let healedFrom: string | undefined;
  let failureNote: string | undefined;
  let lookedAgain = false;
  let finished = false;
  // The first look may be the outline the explicit attempt has just read (nothing was done since);
  // every later one (a next step, a look again, a self-heal) is a new read of the page.
  let unread = params.outline;
  for (let step = 0; step < MAX_STEPS && !finished; ) {
    const reused = unread;
    unread = undefined;
    const snapshot = reused
      ? reused.fitted(instruction)
      : await takeSnapshot(ctx.page, {
          instruction,
          domSettleTimeout: ctx.domSettleTimeout,
          deadline: ctx.deadline,
        });
    ctx.deadline.check();
    const { answer, problem } = await askForStep(
      ctx,
      snapshot,
      instruction,
      variables,
      performed,
      failureNote,
      params.handOff?.rest,
    );
    ctx.deadline.check();
    // Asked twice, and still an answer that cannot be carried out: never corrected, refused.
    if (problem !== undefined || (answer.elementId >= 0 && !snapshot.has(answer.elementId))) {
      return actResult(
        false,
        answer.elementId >= 0 && !snapshot.has(answer.elementId)
          ? `The model chose element [${answer.elementId}], which is not on the page (asked twice).`
          : `The model's answer could not be carried out (asked twice): ${problem}`,
        instruction,
        performed,
      );
    }
    const pageLevel = answer.elementId < 0 && methodSpec(answer.method).element === "optional";
    if (answer.elementId < 0 && !pageLevel) {
      // A young or changing page may yet show what fits: one more look before giving up.
      if (!lookedAgain && (await worthLookingAgain(ctx, snapshot))) {
        lookedAgain = true;
        ctx.log.info("act", "nothing fits yet; the page is young or changed, so it is read once more");
        continue;
      }
      return actResult(
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
        return actResult(
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
  if (performed.length === 0) return actResult(false, "Nothing was done.", instruction, performed);
  if (!finished) {
    // The model never said the instruction was done: what was done is reported, not claimed.
    return actResult(
      false,
      `Stopped after ${MAX_STEPS} steps without finishing: ${performed.map((p) => p.action.description).join(", then ")}.`,
      instruction,
      performed,
    );
  }
  const message =
    `Done: ${performed.map((p) => p.action.description).join(", then ")}.` +
    (healedFrom ? ` (Self-healed: the first attempt failed with "${healedFrom}".)` : "");
  if (params.cache && cacheKey && !params.handOff) {
    await params.cache.put(cacheKey, {
      instruction,
      url: startUrl,
      variables: Object.keys(variables ?? {}).sort(),
      steps: performed.map((p) => p.step),
    });
  }
  return actResult(true, message, instruction, performed);
}

async function askForStep(
  ctx: OperationContext,
  snapshot: Snapshot,
  instruction: string,
  variables: Variables | undefined,
  performed: Performed[],
  failureNote: string | undefined,
  rest: string | undefined,
): Promise<{ answer: ActAnswer; problem: string | undefined }> {
  const outline = ctx.redactor.mask(snapshot.text);
  const { data, problem } = await ctx.caller.call({
    operation: "act",
    model: ctx.model,
    signal: ctx.deadline.signal,
    schema: actAnswer,
    normalize: normalizeActAnswer,
    accept: (answer) => checkStep(snapshot, outline, answer),
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
          rest
            ? `The steps already done carried out the start of the instruction. Do only the rest: ${rest}`
            : undefined,
          failureNote,
          `Page outline:\n${outline}`,
        ]),
      },
    ],
  });
  return { answer: data, problem };
}

/**
 * Act's check of an answer that fits the schema: its element must be one of the outline's (an id
 * that is not is never taken for a nearby one: the model is asked again). A `press` on a button
 * that names no key is read as the click it means (the answer is changed in place).
 */
async function checkStep(
  snapshot: Snapshot,
  outline: string,
  answer: ActAnswer,
): Promise<string | undefined> {
  if (answer.elementId < 0) return undefined;
  if (!snapshot.has(answer.elementId)) {
    return (
      `${idsNotInOutline([answer.elementId], outline)}. Use only an id that the outline shows ` +
      "in [brackets], for the element the instruction means, or -1 when no element fits"
    );
  }
  if (answer.method === "press") {
    const ref = await snapshot.element(answer.elementId);
    if (pressMeansClick(ref.role, answer.arguments)) {
      answer.method = "click";
      answer.arguments = [];
    }
  }
  return undefined;
}

async function performAnswer(
  ctx: OperationContext,
  snapshot: Snapshot,
  answer: ActAnswer,
  variables: Variables | undefined,
): Promise<Performed> {
  const method = answer.method;
  // The element of the chosen id, found once: recorded and acted on by performStep, its XPath is
  // what the result and the action cache record.
  const target = answer.elementId >= 0 ? await snapshot.target(answer.elementId) : undefined;
  try {
    const selector = target?.xpath ?? "";
    const args = [...answer.arguments];
    if (method === "dragAndDrop" && args[0])
      args[0] = await dropTargetXPath(ctx, snapshot, answer.elementId, args[0]);
    const stepTarget = target ? { element: target, selector } : undefined;
    const step = await performStep(ctx, stepTarget, method, args, variables, {
      description: answer.description,
      role: target?.role ?? "",
      // Stored in the action cache: a variable's value in an element's name is kept as its %name%.
      name: target ? ctx.redactor.mask(target.name) : "",
    });
    return {
      action: { selector, description: answer.description, method, arguments: args },
      step,
    };
  } finally {
    releaseTarget(target);
  }
}

/**
 * The drop target of a dragAndDrop answer as an XPath (that is how it is recorded and replayed).
 * The model names it by id or, since a drop zone is often a plain container with no id, by its
 * text; text is looked up in the frame of the dragged element.
 */
async function dropTargetXPath(
  ctx: OperationContext,
  snapshot: Snapshot,
  sourceId: number,
  target: string,
): Promise<string> {
  const id = /^\s*\[?(\d+)\]?\s*$/.exec(target);
  if (id) {
    const dropId = Number(id[1]);
    if (!snapshot.has(dropId))
      throw new ServiceElementNotFoundError(`[${dropId}]`, "(the drop target is not on the page)");
    return (await snapshot.element(dropId)).xpath;
  }
  const frame = sourceId >= 0 ? snapshot.frameOf(sourceId) : snapshot.page.mainFrame();
  const { handle } = await ctx.deadline.withLimit("finding the drop target", 500, (deadline) =>
    frame.locator(`text=${JSON.stringify(target.trim())}`).resolve({ deadline }),
  );
  try {
    return await absoluteXPath(frame, handle);
  } finally {
    void frame.release(handle);
  }
}
