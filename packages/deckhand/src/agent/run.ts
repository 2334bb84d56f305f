// One agent run in DOM or hybrid mode: the AI SDK's tool loop (generateText, or streamText with
// `stream: true`) through the real provider code, with the tools of tools.ts. Around it: the
// context kept small (only the newest outline and the two newest screenshots in full), the agent's
// own tokens counted under `agent*`, loop detection, a "done" that is checked before it is
// believed, and replay of a stored run without a model (replay.ts).

import {
  generateText,
  type LanguageModelUsage,
  type ModelMessage,
  type StepResult,
  stepCountIs,
  streamText,
  type ToolSet,
} from "ai";
import type { Page } from "../browser/page.ts";
import { waitForSettled } from "../browser/settle.ts";
import type { Deadline } from "../deadline.ts";
import { ServiceInvalidArgumentError } from "../errors.ts";
import { toLLMUsage } from "../llm/ai-sdk-client.ts";
import { loadLanguageModel, resolveModel } from "../llm/resolve-model.ts";
import { type ResponseSchema, toResponseSchema } from "../llm/schema.ts";
import type { DeckhandMetrics, ModelConfiguration } from "../types.ts";
import { runCuaMode } from "./cua-mode.ts";
import { mcpTools } from "./mcp.ts";
import { agentSystemPrompt, verifyInstruction } from "./prompts.ts";
import { type AgentRunRecord, replayRun, storeRun } from "./replay.ts";
import { LoopDetector } from "./stuck.ts";
import { buildTools, newRunState, type RunState } from "./tools.ts";
import type {
  AgentAction,
  AgentConfig,
  AgentExecuteOptions,
  AgentHost,
  AgentResult,
  AgentStreamResult,
  AgentUsage,
} from "./types.ts";

export const DEFAULT_MAX_STEPS = 20;
export const DEFAULT_TOOL_TIMEOUT_MS = 45_000;
/** Screenshots kept in full in the conversation; older ones become a line of text. */
const SCREENSHOTS_KEPT = 2;

export interface AgentRun {
  host: AgentHost;
  page: Page;
  config: AgentConfig;
  options: AgentExecuteOptions;
  deadline: Deadline;
}

/** The tokens spent between two metrics records (the agent's own calls and its tools'). */
function usageBetween(before: DeckhandMetrics, after: DeckhandMetrics): AgentUsage {
  return {
    input_tokens: after.totalPromptTokens - before.totalPromptTokens,
    output_tokens: after.totalCompletionTokens - before.totalCompletionTokens,
    reasoning_tokens: after.totalReasoningTokens - before.totalReasoningTokens,
    cached_input_tokens: after.totalCachedInputTokens - before.totalCachedInputTokens,
    inference_time_ms: Math.round(after.totalInferenceTimeMs - before.totalInferenceTimeMs),
  };
}

const SCREENSHOT_MESSAGE = "[screenshot of tool call ";

function isScreenshotMessage(message: ModelMessage): boolean {
  if (message.role !== "user" || !Array.isArray(message.content)) return false;
  const first = message.content[0];
  return first?.type === "text" && first.text.startsWith(SCREENSHOT_MESSAGE);
}

/**
 * Keeps the conversation small: only the newest outline and the two newest screenshots stay in
 * full. A screenshot goes to the model as an image in a user message right after the tool answer
 * that took it (`images`: base64 PNGs by tool call id); older ones are left out.
 */
export function compactMessages(
  messages: ModelMessage[],
  images: ReadonlyMap<string, string> = new Map(),
): ModelMessage[] {
  const out = messages.filter((m) => !isScreenshotMessage(m));
  let outlines = 0;
  const kept = new Set(
    [...images.keys()]
      .filter((id) =>
        out.some(
          (m) => m.role === "tool" && m.content.some((p) => p.type === "tool-result" && p.toolCallId === id),
        ),
      )
      .slice(-SCREENSHOTS_KEPT),
  );
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    if (message.role !== "tool") continue;
    let changed = false;
    const attach: string[] = [];
    const content = message.content.map((part) => {
      if (part.type !== "tool-result") return part;
      if (part.toolName === "ariaTree" && part.output.type === "json") {
        outlines++;
        if (outlines > 1) {
          changed = true;
          return {
            ...part,
            output: { type: "text" as const, value: "[an older outline; see the newest one]" },
          };
        }
      }
      if (images.has(part.toolCallId)) {
        if (kept.has(part.toolCallId)) attach.push(part.toolCallId);
        else {
          changed = true;
          return { ...part, output: { type: "text" as const, value: "[an older screenshot, left out]" } };
        }
      }
      return part;
    });
    if (changed) out[i] = { ...message, content };
    if (attach.length) {
      out.splice(
        i + 1,
        0,
        ...attach.map(
          (id): ModelMessage => ({
            role: "user",
            content: [
              { type: "text", text: `${SCREENSHOT_MESSAGE}${id}]` },
              { type: "image", image: images.get(id)!, mediaType: "image/png" },
            ],
          }),
        ),
      );
    }
  }
  return out;
}

/**
 * The caller's tools and the MCP tools, each call recorded as an action (so that it shows in the
 * result, and so that a run that used one is not stored for replay: it cannot be checked).
 */
function recordedTools(tools: ToolSet, state: RunState, host: AgentHost): ToolSet {
  const out: ToolSet = {};
  for (const [name, original] of Object.entries(tools)) {
    const execute = original.execute;
    if (!execute) {
      out[name] = original;
      continue;
    }
    out[name] = {
      ...original,
      execute: async (input: unknown, options: Parameters<typeof execute>[1]) => {
        const started = performance.now();
        const action: AgentAction = {
          type: name,
          arguments: host.redactor.maskValue(input as Record<string, unknown>),
        };
        state.actions.push(action);
        try {
          const result = await execute(input, options);
          action.success = true;
          return result;
        } catch (error) {
          action.success = false;
          action.result = host.redactor.mask(error instanceof Error ? error.message : String(error));
          throw error;
        } finally {
          action.durationMs = Math.round(performance.now() - started);
        }
      },
    } as typeof original;
  }
  return out;
}

function modeOf(config: AgentConfig): "dom" | "hybrid" | "cua" {
  // `mode` wins over the deprecated `cua: true` when both are given, as in the reference library.
  const mode = config.mode ?? (config.cua === true ? "cua" : "dom");
  if (!["dom", "hybrid", "cua"].includes(mode))
    throw new ServiceInvalidArgumentError(
      `agent mode must be "dom", "hybrid" or "cua", got ${JSON.stringify(mode)}.`,
    );
  return mode;
}

/** Checks the execute options; throws ServiceInvalidArgumentError naming what is wrong. */
export function checkExecuteOptions(options: AgentExecuteOptions): void {
  if (!options || typeof options.instruction !== "string" || !options.instruction.trim())
    throw new ServiceInvalidArgumentError(
      'agent().execute() needs an instruction: execute("...") or execute({ instruction: "..." }).',
    );
  const { maxSteps, toolTimeout } = options;
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > 1000))
    throw new ServiceInvalidArgumentError(
      `maxSteps must be a whole number from 1 to 1000, got ${JSON.stringify(maxSteps)}.`,
    );
  if (toolTimeout !== undefined && (!Number.isFinite(toolTimeout) || toolTimeout <= 0))
    throw new ServiceInvalidArgumentError(
      `toolTimeout must be a positive number of milliseconds, got ${JSON.stringify(toolTimeout)}.`,
    );
  if (options.excludeTools !== undefined && !Array.isArray(options.excludeTools))
    throw new ServiceInvalidArgumentError("excludeTools must be an array of tool names.");
}

/** What identifies a run for replay: task, start page, options, model (no secrets), variable names. */
function runRecord(
  run: AgentRun,
  modelName: string,
  mode: string,
  output: ResponseSchema<unknown> | undefined,
): AgentRunRecord {
  return {
    instruction: run.options.instruction.trim(),
    url: run.page.url(),
    mode,
    modelName,
    variables: Object.keys(run.options.variables ?? {}).sort(),
    output: output ? output.jsonSchema : undefined,
    maxSteps: run.options.maxSteps ?? DEFAULT_MAX_STEPS,
  };
}

export async function runAgent(run: AgentRun): Promise<AgentResult | AgentStreamResult> {
  const { host, page, config, options, deadline } = run;
  checkExecuteOptions(options);
  const mode = modeOf(config);
  if (mode === "cua") {
    const local = [
      config.tools && Object.keys(config.tools).length ? "tools" : "",
      config.integrations?.length ? "integrations" : "",
      config.stream ? "stream" : "",
      options.output ? "output" : "",
      options.messages?.length ? "messages" : "",
    ].filter(Boolean);
    if (local.length)
      throw new ServiceInvalidArgumentError(
        `Computer-use mode drives the page with the provider's own tool only; it does not take ${local.join(", ")}. Use mode "dom" or "hybrid" for them.`,
      );
    return runCuaMode(host, page, config, options, deadline);
  }
  const modelConfig: ModelConfiguration | undefined = config.model ?? host.defaultModel;
  if (typeof modelConfig === "object") host.redactor.add(modelConfig.apiKey);
  if (typeof config.executionModel === "object") host.redactor.add(config.executionModel.apiKey);
  const resolved = resolveModel(modelConfig);
  const output = options.output ? toResponseSchema(options.output) : undefined;
  const record = runRecord(run, resolved.modelName, mode, output);

  // A stored run of the same task replays with no model call.
  if (host.cacheStore && !options.messages && !config.stream) {
    const replayed = await replayRun(host, page, record, options, deadline);
    if (replayed) return replayed;
  }

  const model = await loadLanguageModel(resolved, (message) => host.log.info("agent", message));
  const state = newRunState();
  const loop = new LoopDetector();
  const builtIn = buildTools({
    host,
    page,
    mode,
    variables: options.variables,
    executionModel: config.executionModel ?? config.model,
    toolTimeout: options.toolTimeout ?? DEFAULT_TOOL_TIMEOUT_MS,
    deadline,
    output,
    loop,
    state,
  });
  const mcp = await mcpTools(config.integrations, deadline.signal);
  const extra = recordedTools({ ...(config.tools ?? {}), ...mcp.tools }, state, host);
  const tools: ToolSet = { ...extra, ...builtIn };
  for (const name of options.excludeTools ?? []) if (name !== "done") delete tools[name];

  const system = agentSystemPrompt({
    mode,
    url: page.url(),
    variables: options.variables,
    customInstructions: config.systemPrompt,
    hasOutput: output !== undefined,
    tools: Object.keys(tools),
  });
  const messages: ModelMessage[] = [
    ...(options.messages ?? []),
    { role: "user", content: options.instruction },
  ];
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const before = host.metrics.snapshot();
  const started = performance.now();
  let stepStart = 0;

  const onStepFinish = async (step: StepResult<ToolSet>) => {
    const usage = toLLMUsage(step.usage as LanguageModelUsage);
    host.metrics.add("agent", { ...usage, inferenceTimeMs: step.performance?.responseTimeMs ?? 0 });
    const stepActions = state.actions.slice(stepStart);
    stepStart = state.actions.length;
    const first = stepActions[0];
    if (first) first.tokens = { input: usage.promptTokens, output: usage.completionTokens };
    host.log.info(
      "agent",
      `step ${step.stepNumber + 1}: ${stepActions.map((a) => a.type).join(", ") || "(no tool)"}`,
      {
        actions: stepActions.map((a) => ({ type: a.type, arguments: a.arguments, success: a.success })),
      },
    );
    await options.callbacks?.onStepFinish?.({
      stepNumber: step.stepNumber,
      actions: stepActions,
      text: host.redactor.mask(step.text),
      usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
    });
  };

  const common = {
    model,
    system,
    messages,
    tools,
    stopWhen: [stepCountIs(maxSteps), () => state.done !== undefined || state.stuck !== undefined],
    prepareStep: ({ messages: current }: { messages: ModelMessage[] }) => ({
      messages: compactMessages(current, state.images),
    }),
    abortSignal: deadline.signal,
    maxRetries: resolved.maxRetries ?? 2,
    ...(resolved.providerOptions ? { providerOptions: resolved.providerOptions as never } : {}),
    onStepFinish,
  };

  const finish = async (
    steps: number,
    responseMessages: ModelMessage[],
    text: string,
  ): Promise<AgentResult> => {
    const result = await conclude(run, state, steps >= maxSteps, text);
    result.usage = usageBetween(before, host.metrics.snapshot());
    result.metadata = { ...result.metadata, durationMs: Math.round(performance.now() - started), steps };
    result.messages = [...messages, ...responseMessages];
    if (result.success && host.cacheStore) await storeRun(host, record, state.actions, result);
    return result;
  };

  if (config.stream) {
    const stream = streamText({
      ...common,
      ...(options.callbacks?.onChunk
        ? { onChunk: ({ chunk }: { chunk: unknown }) => options.callbacks?.onChunk?.(chunk) }
        : {}),
      ...(options.callbacks?.onError
        ? { onError: ({ error }: { error: unknown }) => options.callbacks?.onError?.(error) }
        : {}),
    } as Parameters<typeof streamText>[0]);
    const result = (async () => {
      try {
        const [steps, responseMessages, text] = await Promise.all([
          stream.steps,
          stream.responseMessages,
          stream.text,
        ]);
        const out = await finish(steps.length, responseMessages, text);
        await options.callbacks?.onFinish?.(out);
        return out;
      } finally {
        await mcp.close();
      }
    })();
    result.catch(() => undefined);
    return Object.assign(stream, { result });
  }

  try {
    const generated = await generateText(common as Parameters<typeof generateText>[0]);
    return await finish(generated.steps.length, generated.responseMessages, generated.text);
  } catch (error) {
    if (deadline.aborted) throw deadline.signal.reason;
    // A failure inside the run (the model's API, a tool's own error) is a result, not a throw.
    const message = host.redactor.mask(error instanceof Error ? error.message : String(error));
    host.log.error("agent", `the run failed: ${message}`);
    return {
      success: false,
      message: `The agent run failed: ${message}`,
      actions: state.actions,
      completed: false,
      usage: usageBetween(before, host.metrics.snapshot()),
    };
  } finally {
    await mcp.close();
  }
}

/**
 * What the run achieved. A done that says complete is believed only when the last action that
 * changed the page worked, the output fits its schema (done checked that), and the page itself
 * shows the goal reached (one question to the execution model about the page as it is now).
 */
async function conclude(
  run: AgentRun,
  state: RunState,
  outOfSteps: boolean,
  text: string,
): Promise<AgentResult> {
  const { host, page, options, config } = run;
  const actions = state.actions;
  if (state.stuck) return { success: false, message: state.stuck, actions, completed: true };
  const done = state.done;
  if (!done) {
    const why = outOfSteps
      ? `The agent used all ${options.maxSteps ?? DEFAULT_MAX_STEPS} steps (maxSteps) without finishing the task.`
      : "The agent stopped without calling done.";
    return {
      success: false,
      message: text ? `${why} Its last words: ${host.redactor.mask(text)}` : why,
      actions,
      completed: false,
    };
  }
  const reasoning = host.redactor.mask(done.reasoning);
  if (!done.taskComplete) return { success: false, message: reasoning, actions, completed: true };
  if (state.lastEffect && !state.lastEffect.success) {
    return {
      success: false,
      message: `The agent said the task was complete, but its last action (${state.lastEffect.type}) failed: ${host.redactor.mask(state.lastEffect.message)}`,
      actions,
      completed: true,
    };
  }
  // A last action that started a navigation: the check reads the page where it lands.
  await waitForSettled(page, Math.min(host.domSettleTimeout ?? 5_000, 5_000), run.deadline);
  const verdict = (await host.extract(
    verifyInstruction(options.instruction, reasoning),
    {
      type: "object",
      properties: { goalReached: { type: "boolean" }, evidence: { type: "string" } },
      required: ["goalReached", "evidence"],
      additionalProperties: false,
    },
    {
      page,
      deadline: run.deadline,
      ...((config.executionModel ?? config.model) !== undefined
        ? { model: config.executionModel ?? config.model }
        : {}),
    },
  )) as { goalReached: boolean; evidence: string };
  actions.push({ type: "verify", result: host.redactor.maskValue(verdict), success: verdict.goalReached });
  if (!verdict.goalReached) {
    return {
      success: false,
      message: `The agent said the task was complete ("${reasoning}"), but the page does not show it: ${host.redactor.mask(verdict.evidence)}`,
      actions,
      completed: true,
    };
  }
  return {
    success: true,
    message: reasoning,
    actions,
    completed: true,
    ...(done.output !== undefined ? { output: done.output } : {}),
  };
}
