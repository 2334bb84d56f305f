// The agent's public shapes: its configuration, the options of one run, and the result. The
// field names follow the v3 API the spec comes from, so that programs written for it port.

import type { ModelMessage, streamText, ToolSet } from "ai";
import type { Page } from "../browser/page.ts";
import type { AnyPage } from "../browser/third-party.ts";
import type { ActionCacheStore } from "../cache/action-cache.ts";
import type { Deadline } from "../deadline.ts";
import type { SchemaInput } from "../llm/schema.ts";
import type { DeckhandLog, SecretRedactor } from "../log.ts";
import type { MetricsRecorder } from "../metrics.ts";
import type { Action, ActResult, ModelConfiguration, Variables } from "../types.ts";

export type AgentMode = "dom" | "hybrid" | "cua";

/** An MCP client as the MCP SDK makes it (listTools + callTool), or the URL of an MCP server. */
export type AgentIntegration = string | URL | McpClientLike;

/** What the agent needs of an MCP client (the official SDK's `Client` has both methods). */
export interface McpClientLike {
  listTools(): Promise<{ tools: { name: string; description?: string; inputSchema: unknown }[] }>;
  callTool(request: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

export interface AgentConfig {
  /** The agent's own model (`provider/model` or an object). Default: the instance's model. */
  model?: ModelConfiguration;
  /** The model of the act/extract calls its tools make. Default: `model`. */
  executionModel?: ModelConfiguration;
  /** Added to the agent's instructions (in computer-use mode it replaces them). */
  systemPrompt?: string;
  /** `dom` (default): the page outline and act; `hybrid`: also coordinate tools; `cua`: the provider's computer-use tool. */
  mode?: AgentMode;
  /** @deprecated use `mode: "cua"`. */
  cua?: boolean;
  /** Extra AI SDK tools the model may call (LOCAL only). */
  tools?: ToolSet;
  /** MCP clients or MCP server URLs whose tools the model may call (LOCAL only). */
  integrations?: AgentIntegration[];
  /** `execute` returns the AI SDK stream result plus a `result` promise. */
  stream?: boolean;
}

/** One step as the run reports it: the tool, its arguments (variable values never), its outcome. */
export interface AgentAction {
  /** The tool: act, ariaTree, extract, fillForm, goto, keys, navback, screenshot, scroll, think, wait, done, ... */
  type: string;
  /** The tool call's arguments, with `%name%` where a variable goes. */
  arguments?: Record<string, unknown>;
  /** What the tool answered (short; outlines and images are left out). */
  result?: unknown;
  success?: boolean;
  reasoning?: string;
  taskCompleted?: boolean;
  /** The page's URL after the step. */
  pageUrl?: string;
  /** Milliseconds the tool took. */
  durationMs?: number;
  /** Tokens of the model call that asked for this step (on the first action of the call). */
  tokens?: { input: number; output: number };
  /** The step's screenshot, when one was taken: a name for it (never the image). */
  screenshot?: string;
  /** Replays: the Actions act performed, to be done again without a model. */
  playwrightArguments?: unknown;
  [key: string]: unknown;
}

export interface AgentUsage {
  input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cached_input_tokens: number;
  inference_time_ms: number;
}

export interface AgentResult<O = unknown> {
  success: boolean;
  message: string;
  actions: AgentAction[];
  /** Whether the agent finished (called done, or was stopped) rather than running out of steps. */
  completed: boolean;
  metadata?: Record<string, unknown>;
  usage?: AgentUsage;
  /** The conversation, to continue it with a later `execute({ messages })`. */
  messages?: ModelMessage[];
  /** The final answer shaped by `output`. */
  output?: O;
}

/** What `onStepFinish` gets after each model call and the tools it asked for. */
export interface AgentStepEvent {
  stepNumber: number;
  actions: AgentAction[];
  text: string;
  usage: { input_tokens: number; output_tokens: number };
}

export interface AgentCallbacks {
  onStepFinish?: (step: AgentStepEvent) => void | Promise<void>;
  /** With `stream: true`: each chunk of the AI SDK stream. */
  onChunk?: (chunk: unknown) => void | Promise<void>;
  /** With `stream: true`: the stream failed. */
  onError?: (error: unknown) => void | Promise<void>;
  /** With `stream: true`: the stream ended. */
  onFinish?: (result: AgentResult) => void | Promise<void>;
  /**
   * Computer-use mode: safety checks the provider raised about the next action (OpenAI
   * pending_safety_checks, Gemini require_confirmation). Answer false to stop the run; without
   * this callback they are acknowledged.
   */
  onSafetyCheck?: (checks: { id: string; code?: string; message?: string }[]) => boolean | Promise<boolean>;
}

export interface AgentExecuteOptions {
  /** The task, in plain words. */
  instruction: string;
  /** Most model calls before the run stops. Default 20 (10 in computer-use mode). */
  maxSteps?: number;
  /** The page to work on (any supported page object). Default: the active page. */
  page?: AnyPage;
  /** `%name%` values: the model sees names and descriptions, never values. */
  variables?: Variables;
  signal?: AbortSignal;
  /** Milliseconds per tool call (default 45 000): a tool that takes longer answers the model with an error. */
  toolTimeout?: number;
  /** A zod or JSON schema for the final answer (`result.output`). */
  output?: SchemaInput;
  /** Tool names the model does not get. */
  excludeTools?: string[];
  /** An earlier run's `messages`, to continue it. */
  messages?: ModelMessage[];
  /** Show where the pointer acts (hybrid and computer-use modes). */
  highlightCursor?: boolean;
  callbacks?: AgentCallbacks;
}

// ---------- what the agent needs from the Deckhand instance it runs in ----------
// The facade gives it its own public act and extract (so every call the agent's tools make is
// checked, recorded in the history and counted in the metrics as if the caller had made it), its
// log, its secrets and its metrics. Declared here, with the other shapes the facade and the
// drivers pass around, so that neither reaches into the agent's code for a type.

export interface HostCallOptions {
  page: Page;
  model?: ModelConfiguration;
  /**
   * The agent's deadline for the call (a tool call's, or the run's): the operation runs as a step
   * of it, so its waits and retries write to that deadline's call log and it ends when that does.
   */
  deadline: Deadline;
}

export interface AgentHost {
  act(input: string | Action, options: HostCallOptions & { variables?: Variables }): Promise<ActResult>;
  extract(instruction: string, schema: SchemaInput | undefined, options: HostCallOptions): Promise<unknown>;
  log: DeckhandLog;
  redactor: SecretRedactor;
  metrics: MetricsRecorder;
  /** The instance's model (the agent's default). */
  defaultModel: ModelConfiguration | undefined;
  /** Where successful runs are stored for replay (`cacheDir` / `actionCache`). */
  cacheStore: ActionCacheStore | undefined;
  domSettleTimeout: number | undefined;
}

/** What `stream: true` gives: the AI SDK stream result plus the run's result. */
export type AgentStreamResult = ReturnType<typeof streamText> & { result: Promise<AgentResult> };
