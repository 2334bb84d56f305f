// The contract of computer-use mode: what the agent hands runComputerUse, and what it gets back.

import type { Page } from "../../browser/page.ts";
import type { Deadline } from "../../deadline.ts";
import type { Variables } from "../../types.ts";

/** The providers whose own computer-use tool Deckhand drives. */
export type CuaProvider = "openai" | "anthropic" | "google";

export interface CuaModel {
  /** "openai", "anthropic" or "google" ("gemini" is taken for google). */
  provider: string;
  /** The model id, with or without the "provider/" prefix ("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"). */
  modelName: string;
  apiKey?: string;
  /** Where the provider's API lives (a proxy, or a test server); the provider's own address otherwise. */
  baseURL?: string;
  headers?: Record<string, string>;
}

/** What the model's computer did in one action, in viewport CSS pixels (after mapping from the model's space). */
export interface CuaAction {
  type: string;
  /** The model's words before this action, when it gave any. */
  reasoning?: string;
  [argument: string]: unknown;
}

/** One action run for the model, for the history and the replay record. */
export interface CuaStep {
  /** The provider's name of the action ("left_click", "click_at", "click"...). */
  tool: string;
  /** The action's arguments as the model gave them; typed text shows %name% for variables, never a value. */
  args: Record<string, unknown>;
  /** "ok", or what went wrong (the model is told the same). */
  result: string;
  durationMs: number;
  /** The tokens of the model call that asked for this action (on the call's first action only). */
  tokens?: { input: number; output: number };
  /** The PNG the model got after the action (the viewport, at the size the model was told). */
  screenshot?: Buffer;
}

export interface CuaUsage {
  input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cached_input_tokens: number;
  inference_time_ms: number;
}

/** A pending safety check the provider raised about the next action. */
export interface CuaSafetyCheck {
  id: string;
  code?: string;
  message?: string;
}

export interface CuaLogger {
  info(category: string, message: string, auxiliary?: Record<string, unknown>): void;
  debug(category: string, message: string, auxiliary?: Record<string, unknown>): void;
  warn(category: string, message: string, auxiliary?: Record<string, unknown>): void;
}

export interface CuaCallbacks {
  /** After each model turn and the actions it asked for. */
  onStepFinish?: (step: { actions: CuaAction[]; text: string; usage: CuaUsage }) => void | Promise<void>;
  /**
   * The provider flagged the next action (OpenAI pending_safety_checks, Gemini require_confirmation).
   * Return false to refuse: the run stops with success false. Without this callback checks are acknowledged.
   */
  onSafetyCheck?: (checks: CuaSafetyCheck[]) => boolean | Promise<boolean>;
}

export interface CuaRunContext {
  page: Page;
  model: CuaModel;
  instruction: string;
  /** Model turns at most. Default 10. */
  maxSteps?: number;
  /** Replaces the default system prompt. */
  systemPrompt?: string;
  signal?: AbortSignal;
  /** The agent operation's deadline: the run is a step of it (`signal` is then not read). */
  deadline?: Deadline;
  /** Values typed where the model writes %name%; the model sees the names (and descriptions) only. */
  variables?: Variables;
  /** Show where the pointer goes (a dot on the page that follows the mouse). */
  highlightCursor?: boolean;
  callbacks?: CuaCallbacks;
  recordStep?: (step: CuaStep) => void;
  addUsage?: (usage: CuaUsage) => void;
  logger?: CuaLogger;
}

export interface CuaRunResult {
  success: boolean;
  message: string;
  actions: CuaAction[];
  /** Whether the model finished on its own (answered without asking for another action). */
  completed: boolean;
  usage: CuaUsage;
  /** The conversation in the provider's wire form (screenshots left out), to look at or continue. */
  messages?: unknown[];
}
