// Token usage of one operation for the replay record: the change of the session's metrics across
// the operation (a session's operations never overlap, so the change is exactly this operation's),
// and its cost where the model's price is known.
//
// Prices are APPROXIMATE list prices in US dollars per million tokens, as published by the
// providers in 2025, without cached-input or batch discounts. They are for an order of magnitude in
// a replay, not for billing; a model not listed gets no cost.

import type { DeckhandMetrics } from "deckhand";
import type { TokenUsage } from "../store/store.ts";

interface Price {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

const PRICES: Record<string, Price> = {
  "openai/gpt-4.1": { input: 2.0, output: 8.0 },
  "openai/gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "openai/gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "openai/gpt-4o": { input: 2.5, output: 10.0 },
  "openai/gpt-4o-mini": { input: 0.15, output: 0.6 },
  "openai/o4-mini": { input: 1.1, output: 4.4 },
  "openai/o3": { input: 2.0, output: 8.0 },
  "openai/gpt-5": { input: 1.25, output: 10.0 },
  "openai/gpt-5-mini": { input: 0.25, output: 2.0 },
  "openai/gpt-5-nano": { input: 0.05, output: 0.4 },
  "anthropic/claude-opus-4-1": { input: 15.0, output: 75.0 },
  "anthropic/claude-opus-4": { input: 15.0, output: 75.0 },
  "anthropic/claude-sonnet-4-5": { input: 3.0, output: 15.0 },
  "anthropic/claude-sonnet-4": { input: 3.0, output: 15.0 },
  "anthropic/claude-3-7-sonnet": { input: 3.0, output: 15.0 },
  "anthropic/claude-haiku-4-5": { input: 1.0, output: 5.0 },
  "anthropic/claude-3-5-haiku": { input: 0.8, output: 4.0 },
  "google/gemini-2.5-pro": { input: 1.25, output: 10.0 },
  "google/gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "google/gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "google/gemini-2.0-flash": { input: 0.1, output: 0.4 },
};

const PROVIDER_ALIASES: Record<string, string> = { gemini: "google" };

/** The price of a "provider/model" name: dated snapshots (`-2025-04-14`, `-20250929`) and `-latest` count as their model. */
export function priceOf(modelName: string): Price | undefined {
  const slash = modelName.indexOf("/");
  if (slash <= 0) return undefined;
  const provider = modelName.slice(0, slash).toLowerCase();
  const model = modelName
    .slice(slash + 1)
    .toLowerCase()
    .replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/, "");
  return PRICES[`${PROVIDER_ALIASES[provider] ?? provider}/${model}`];
}

/** USD for the tokens, rounded to a millionth of a dollar; undefined when the price is unknown. */
export function costOf(modelName: string, inputTokens: number, outputTokens: number): number | undefined {
  if (inputTokens === 0 && outputTokens === 0) return 0;
  const price = priceOf(modelName);
  if (!price) return undefined;
  const dollars = (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** The usage between two snapshots of a session's metrics. */
export function usageBetween(before: DeckhandMetrics, after: DeckhandMetrics, modelName: string): TokenUsage {
  const inputTokens = after.totalPromptTokens - before.totalPromptTokens;
  const outputTokens = after.totalCompletionTokens - before.totalCompletionTokens;
  const usage: TokenUsage = {
    inputTokens,
    outputTokens,
    timeMs: Math.round(after.totalInferenceTimeMs - before.totalInferenceTimeMs),
  };
  const cost = costOf(modelName, inputTokens, outputTokens);
  if (cost !== undefined) usage.cost = cost;
  return usage;
}
