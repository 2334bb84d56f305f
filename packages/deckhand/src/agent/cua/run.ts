// The computer-use loop: show the model the page, run the actions it asks for with real input
// events, answer with a new screenshot, until it answers without an action or the steps run out.

import { Deadline } from "../../deadline.ts";
import { ServiceInvalidArgumentError, UnsupportedModelError } from "../../errors.ts";
import { resolveModel } from "../../llm/resolve-model.ts";
import { SecretRedactor } from "../../log.ts";
import { AnthropicComputerUseSession } from "./anthropic.ts";
import { Computer, type ComputerAction } from "./computer.ts";
import { GoogleComputerUseSession } from "./google.ts";
import { COMPUTER_USE_MODELS, computerUseTool, splitModel } from "./models.ts";
import { OpenAIComputerUseSession } from "./openai.ts";
import { OpenAIComputerToolSession } from "./openai-computer.ts";
import { defaultSystemPrompt, variableNotes } from "./prompt.ts";
import {
  type CuaCall,
  type CuaCallResult,
  CuaProviderError,
  type CuaSession,
  type CuaSessionOptions,
  errorMessageOf,
  SHOT_LIMITS,
  withoutImages,
} from "./session.ts";
import type { CuaAction, CuaRunContext, CuaRunResult, CuaSafetyCheck, CuaUsage } from "./types.ts";

export const DEFAULT_CUA_MAX_STEPS = 10;

const emptyUsage = (): CuaUsage => ({
  input_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  cached_input_tokens: 0,
  inference_time_ms: 0,
});

/**
 * Runs an instruction with the model's own computer-use tool. A model that cannot do computer use
 * is an UnsupportedModelError before any call; an abort (ctx.signal) rejects with the signal's
 * typed error; anything else that goes wrong (the provider's API, the page) ends the run with
 * `success: false` and a message.
 */
export async function runComputerUse(ctx: CuaRunContext): Promise<CuaRunResult> {
  const { provider, modelId } = splitModel(ctx.model.modelName, ctx.model.provider);
  const tool = computerUseTool(modelId, provider);
  if (!provider || !tool) {
    throw new UnsupportedModelError(
      `${ctx.model.provider}/${modelId} cannot do computer use (mode "cua"). Use a computer-use model such as ` +
        `${COMPUTER_USE_MODELS.join(", ")}, or mode "dom" / "hybrid".`,
    );
  }
  const maxSteps = ctx.maxSteps ?? DEFAULT_CUA_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new ServiceInvalidArgumentError(
      `maxSteps must be a whole number of 1 or more, got ${JSON.stringify(ctx.maxSteps)}.`,
    );
  }
  // The key and address as for any model: the option, else the provider's environment variables;
  // no key is a MissingLLMConfigurationError here, before any request.
  const resolved = resolveModel({
    modelName: `${provider}/${modelId}`,
    ...(ctx.model.apiKey ? { apiKey: ctx.model.apiKey } : {}),
    ...(ctx.model.baseURL ? { baseURL: ctx.model.baseURL } : {}),
    ...(ctx.model.headers ? { headers: ctx.model.headers } : {}),
  });
  // Under the agent operation's deadline when it runs for the facade; a caller that gave none (its
  // own tests) starts one here from its signal.
  const deadline = ctx.deadline
    ? ctx.deadline.child("agent.execute (computer use)")
    : Deadline.start("agent.execute (computer use)", ctx.signal ? { signal: ctx.signal } : {});
  const values = variableValues(ctx.variables);
  const substitute = (text: string) => {
    let secret = false;
    const replaced = text.replace(/%(\w+)%/g, (all, name: string) => {
      const value = values.get(name);
      if (value === undefined) return all;
      secret = true;
      return value;
    });
    return { text: replaced, secret };
  };
  // Variables' values as %name% (and the key as [redacted]) in whatever Deckhand passes on of what
  // the page or the model said, by the library's one rule for secrets in text.
  const redactor = new SecretRedactor();
  for (const [name, value] of values) redactor.add(value, name);
  redactor.add(resolved.apiKey);
  const hideSecrets = (text: string) => redactor.mask(text);
  const computer = new Computer(ctx.page, deadline, {
    substitute,
    hideSecrets,
    highlightCursor: ctx.highlightCursor ?? false,
    confirmDialog: (type, message) =>
      ctx.callbacks?.onSafetyCheck
        ? ctx.callbacks.onSafetyCheck([{ id: `dialog-${type}`, code: `${type}_dialog`, message }])
        : true,
  });
  const usage = emptyUsage();
  const actions: CuaAction[] = [];
  let session: CuaSession | undefined;
  const finish = (success: boolean, completed: boolean, message: string): CuaRunResult => ({
    success,
    completed,
    message,
    actions,
    usage,
    ...(session
      ? { messages: JSON.parse(hideSecrets(JSON.stringify(withoutImages(session.messages())))) }
      : {}),
  });

  try {
    await computer.settle();
    const screen = await computer.screen(SHOT_LIMITS[provider]);
    const options: CuaSessionOptions = {
      modelId,
      apiKey: resolved.apiKey,
      baseURL: resolved.baseURL,
      headers: resolved.headers,
      system: (ctx.systemPrompt ?? defaultSystemPrompt(computer.page.url())) + variableNotes(ctx.variables),
      instruction: ctx.instruction,
      screen,
      firstScreenshot: await computer.screenshot(screen),
      url: computer.page.url(),
    };
    session =
      tool === "openai-computer"
        ? new OpenAIComputerToolSession(options)
        : provider === "openai"
          ? new OpenAIComputerUseSession(options)
          : provider === "anthropic"
            ? new AnthropicComputerUseSession(options, tool)
            : new GoogleComputerUseSession(options);

    for (let step = 1; step <= maxSteps; step++) {
      deadline.check();
      const started = Date.now();
      const turn = await session.next(deadline.signal);
      // The model never gets a value, but it reads the page, which may echo one: what it says is
      // passed on with values shown as %name%.
      const text = hideSecrets(turn.text);
      const turnUsage: CuaUsage = { ...turn.usage, inference_time_ms: Date.now() - started };
      for (const key of Object.keys(usage) as (keyof CuaUsage)[]) usage[key] += turnUsage[key];
      ctx.addUsage?.(turnUsage);
      ctx.logger?.debug(
        "agent",
        `computer use step ${step}: ${turn.calls.map((c) => c.name).join(", ") || "done"}`,
        {
          step,
          calls: turn.calls.length,
        },
      );

      if (turn.calls.length === 0) {
        await ctx.callbacks?.onStepFinish?.({ actions: [], text, usage: turnUsage });
        return finish(true, true, text || "The model finished without a message.");
      }

      const checks = turn.calls.flatMap((c) => c.safetyChecks);
      if (checks.length > 0) {
        const approved = ctx.callbacks?.onSafetyCheck ? await ctx.callbacks.onSafetyCheck(checks) : true;
        ctx.logger?.info("agent", `computer use safety check ${approved ? "acknowledged" : "refused"}`, {
          checks: checks.map((c) => c.code ?? c.id),
        });
        if (!approved) {
          return finish(
            false,
            false,
            `Stopped: the safety check was not acknowledged (${describeChecks(checks)}).`,
          );
        }
      }

      const results: CuaCallResult[] = [];
      const stepActions: CuaAction[] = [];
      for (const [index, call] of turn.calls.entries()) {
        const callStarted = Date.now();
        const error = call.problem ?? (await runCall(computer, call));
        const screenshot = await computer.screenshot(screen);
        const note = computer.takeNotes();
        results.push({
          call,
          screenshot,
          url: computer.page.url(),
          acknowledged: call.safetyChecks,
          ...(error ? { error } : {}),
          ...(note ? { note } : {}),
        });
        for (const action of call.actions) {
          const recorded = recordedAction(action, index === 0 && text ? text : undefined);
          stepActions.push(recorded);
        }
        ctx.recordStep?.({
          tool: call.name,
          args: call.args,
          result: error ?? "ok",
          durationMs: Date.now() - callStarted,
          ...(index === 0
            ? { tokens: { input: turnUsage.input_tokens, output: turnUsage.output_tokens } }
            : {}),
          screenshot,
        });
      }
      actions.push(...stepActions);
      session.answer(results);
      await ctx.callbacks?.onStepFinish?.({ actions: stepActions, text, usage: turnUsage });
    }
    return finish(
      false,
      false,
      `The model did not finish within maxSteps (${maxSteps}); raise maxSteps to let it go on.`,
    );
  } catch (error) {
    if (deadline.aborted) throw deadline.signal.reason;
    if (error instanceof CuaProviderError) return finish(false, false, error.message);
    return finish(false, false, `Computer use failed: ${errorMessageOf(error)}`);
  } finally {
    computer.dispose();
    deadline.dispose();
  }
}

/** Runs a call's actions; the error for the model, or undefined. An abort is not caught. */
async function runCall(computer: Computer, call: CuaCall): Promise<string | undefined> {
  try {
    for (const action of call.actions) await computer.run(action);
    return undefined;
  } catch (error) {
    if (computer.aborted) throw error;
    return errorMessageOf(error);
  }
}

function recordedAction(action: ComputerAction, reasoning: string | undefined): CuaAction {
  const { type, ...args } = action;
  return { type, ...args, ...(reasoning ? { reasoning } : {}) };
}

function describeChecks(checks: CuaSafetyCheck[]): string {
  return checks.map((c) => [c.code, c.message].filter(Boolean).join(": ") || c.id).join("; ");
}

function variableValues(variables: CuaRunContext["variables"]): Map<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(variables ?? {}))
    values.set(name, String(typeof value === "object" ? value.value : value));
  return values;
}
