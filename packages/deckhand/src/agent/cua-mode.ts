// `mode: "cua"` (or the deprecated `cua: true`): the provider's own computer-use tool drives the
// page (agent/cua/). Here the run is fitted into the agent's contract: a model that cannot do
// computer use is an UnsupportedModelError before any call, its steps become AgentActions, its
// tokens count under agent*, and the result has the agent's shape.

import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import { UnsupportedModelError } from "../errors.ts";
import type { ModelConfiguration } from "../types.ts";
import {
  COMPUTER_USE_MODELS,
  DEFAULT_CUA_MAX_STEPS,
  runComputerUse,
  supportsComputerUse,
} from "./cua/index.ts";
import type { CuaModel } from "./cua/types.ts";
import type { AgentAction, AgentConfig, AgentExecuteOptions, AgentHost, AgentResult } from "./types.ts";

/** The model config as computer-use mode takes it ("provider/model", key, address, headers). */
function cuaModel(config: ModelConfiguration | undefined): CuaModel {
  if (config === undefined)
    throw new UnsupportedModelError(
      `Computer-use mode needs a computer-use model: pass agent({ mode: "cua", model: "..." }) with one of ${COMPUTER_USE_MODELS.join(", ")}.`,
    );
  const object = typeof config === "string" ? { modelName: config } : config;
  const modelName = String(object.modelName);
  const provider =
    typeof object.provider === "string"
      ? object.provider
      : modelName.slice(0, Math.max(0, modelName.indexOf("/")));
  const full = modelName.startsWith(`${provider}/`) ? modelName : `${provider}/${modelName}`;
  if (!provider || !supportsComputerUse(full))
    throw new UnsupportedModelError(
      `${full} cannot do computer use (mode "cua"). Use a computer-use model such as ${COMPUTER_USE_MODELS.join(", ")}, or mode "dom" / "hybrid".`,
    );
  return {
    provider,
    modelName: full,
    ...(typeof object.apiKey === "string" ? { apiKey: object.apiKey } : {}),
    ...(typeof object.baseURL === "string" ? { baseURL: object.baseURL } : {}),
    ...(object.headers ? { headers: object.headers as Record<string, string> } : {}),
  };
}

/** Throws UnsupportedModelError unless the agent's model can do computer use (no call made). */
export function checkComputerUseModel(
  config: AgentConfig,
  defaultModel: ModelConfiguration | undefined,
): void {
  cuaModel(config.model ?? defaultModel);
}

export async function runCuaMode(
  host: AgentHost,
  page: Page,
  config: AgentConfig,
  options: AgentExecuteOptions,
  deadline: Deadline,
): Promise<AgentResult> {
  const model = cuaModel(config.model ?? host.defaultModel);
  host.redactor.add(model.apiKey);
  const actions: AgentAction[] = [];
  let shots = 0;
  const started = performance.now();
  const result = await runComputerUse({
    page,
    model,
    instruction: options.instruction,
    maxSteps: options.maxSteps ?? DEFAULT_CUA_MAX_STEPS,
    ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}),
    deadline,
    ...(options.variables ? { variables: options.variables } : {}),
    ...(options.highlightCursor !== undefined ? { highlightCursor: options.highlightCursor } : {}),
    callbacks: {
      onStepFinish: async (step) => {
        await options.callbacks?.onStepFinish?.({
          stepNumber: actions.length,
          actions: step.actions.map((a) => ({ ...a })),
          text: step.text,
          usage: { input_tokens: step.usage.input_tokens, output_tokens: step.usage.output_tokens },
        });
      },
      ...(options.callbacks?.onSafetyCheck ? { onSafetyCheck: options.callbacks.onSafetyCheck } : {}),
    },
    recordStep: (step) => {
      actions.push({
        type: step.tool,
        arguments: host.redactor.maskValue(step.args),
        result: host.redactor.mask(step.result),
        success: step.result === "ok",
        pageUrl: page.isClosed() ? undefined : page.url(),
        durationMs: step.durationMs,
        ...(step.tokens ? { tokens: step.tokens } : {}),
        ...(step.screenshot ? { screenshot: `screenshot-${++shots}` } : {}),
      });
    },
    addUsage: (usage) =>
      host.metrics.add("agent", {
        promptTokens: usage.input_tokens,
        completionTokens: usage.output_tokens,
        reasoningTokens: usage.reasoning_tokens,
        cachedInputTokens: usage.cached_input_tokens,
        inferenceTimeMs: usage.inference_time_ms,
      }),
    logger: {
      info: (category, message, auxiliary) => host.log.info(category, message, auxiliary),
      debug: (category, message, auxiliary) => host.log.debug(category, message, auxiliary),
      warn: (category, message, auxiliary) => host.log.warn(category, message, auxiliary),
    },
  });
  return {
    success: result.success,
    message: host.redactor.mask(result.message),
    actions,
    completed: result.completed,
    usage: result.usage,
    metadata: { mode: "cua", durationMs: Math.round(performance.now() - started) },
    ...(result.messages ? { messages: result.messages as AgentResult["messages"] } : {}),
  };
}
