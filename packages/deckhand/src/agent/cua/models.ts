// Which models can do computer use, and with which of their provider's tools. A model not in the
// table is refused before any call: its provider would answer with an error, or worse, the model
// would guess at a tool it was never trained on.

import type { CuaProvider } from "./types.ts";

/** The provider tool a model is driven with. */
export type CuaTool =
  /** OpenAI Responses API, `computer_use_preview` (computer-use-preview models). */
  | "openai-computer-use-preview"
  /** OpenAI Responses API, the GA `computer` tool with batched actions (gpt-5.4 and later). */
  | "openai-computer"
  /** Anthropic Messages API, the computer toolset `computer_toolset_20260801` (no beta; Opus 5.x, Sonnet 5, Fable 5, Opus 4.8). */
  | "anthropic-computer-toolset-20260801"
  /** Anthropic Messages API, computer tool `computer_20250124` (beta computer-use-2025-01-24). */
  | "anthropic-computer-20250124"
  /** Anthropic Messages API, computer tool `computer_20251124` (beta computer-use-2025-11-24). */
  | "anthropic-computer-20251124"
  /** Gemini generateContent, the `computer_use` tool (browser environment). */
  | "google-computer-use";

interface Entry {
  provider: CuaProvider;
  /** The model id (without "provider/"), matched from its start. */
  pattern: RegExp;
  tool: CuaTool;
}

const TABLE: readonly Entry[] = [
  { provider: "openai", pattern: /^computer-use-preview(-[\w-]+)?$/, tool: "openai-computer-use-preview" },
  {
    provider: "openai",
    pattern: /^gpt-5\.([4-9])(-mini|-pro)?(-\d{4}-\d{2}-\d{2})?$/,
    tool: "openai-computer",
  },
  // Claude: the computer toolset on the models that require it, the newest computer tool on the
  // models that take it, the 2025-01-24 one on the others.
  {
    provider: "anthropic",
    pattern: /^claude-(opus-5(-\d)?|sonnet-5(-\d)?|fable-5(-\d)?|opus-4-8)([-@][\w.-]+)?$/,
    tool: "anthropic-computer-toolset-20260801",
  },
  {
    provider: "anthropic",
    pattern: /^claude-(opus-4-[5-9]|sonnet-4-[6-9]|opus-4-1[0-9])([-@][\w.-]+)?$/,
    tool: "anthropic-computer-20251124",
  },
  {
    provider: "anthropic",
    pattern:
      /^claude-(sonnet-4|sonnet-4-5|opus-4|opus-4-1|haiku-4-5|3-7-sonnet)(-latest|-\d{8}|@\d{8}|-v\d+(:\d+)?)?$/,
    tool: "anthropic-computer-20250124",
  },
  {
    provider: "google",
    pattern: /^gemini-(2\.5-computer-use-preview|3(\.\d+)?-(pro|flash)-preview)([-\w.]*)?$/,
    tool: "google-computer-use",
  },
];

const PROVIDER_ALIASES: Readonly<Record<string, CuaProvider>> = {
  openai: "openai",
  anthropic: "anthropic",
  google: "google",
  gemini: "google",
};

/** The provider and the id of a model written "provider/id", or given as provider plus id. */
export function splitModel(
  model: string,
  provider?: string,
): { provider: CuaProvider | undefined; modelId: string } {
  const slash = model.indexOf("/");
  const named = provider ?? (slash > 0 ? model.slice(0, slash) : "");
  const prefix = `${named}/`;
  const modelId = model.startsWith(prefix)
    ? model.slice(prefix.length)
    : provider
      ? model
      : model.slice(slash + 1);
  return { provider: PROVIDER_ALIASES[named.toLowerCase()], modelId: modelId.trim() };
}

/** The computer-use tool for a model, if it has one. */
export function computerUseTool(model: string, provider?: string): CuaTool | undefined {
  const split = splitModel(model, provider);
  if (!split.provider) return undefined;
  return TABLE.find((e) => e.provider === split.provider && e.pattern.test(split.modelId))?.tool;
}

/** Whether `"provider/model"` can drive the browser in computer-use mode. */
export function supportsComputerUse(model: string): boolean {
  return computerUseTool(model) !== undefined;
}

/** Examples for messages. */
export const COMPUTER_USE_MODELS = [
  "openai/computer-use-preview",
  "openai/gpt-5.4",
  "anthropic/claude-sonnet-4-5",
  "anthropic/claude-opus-4-5",
  "anthropic/claude-haiku-4-5",
  "google/gemini-2.5-computer-use-preview-10-2025",
] as const;
