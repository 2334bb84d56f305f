// Shared set-up for the model-layer tests: a log that collects lines, and model objects that point
// the real provider code at the scripted model server.

import type { ScriptedModel } from "@deckhand/testkit";
import { DeckhandLog } from "../../src/log.ts";
import type { LogLine } from "../../src/types.ts";

export const OPTION_KEY = "sk-test-option-key-1234567890";

export function collectingLog(verbose: 0 | 1 | 2 = 1): { log: DeckhandLog; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { log: new DeckhandLog({ verbose, logger: (line) => lines.push(line) }), lines };
}

/** `openai/gpt-4.1-mini` served by the scripted server (Chat Completions, as with any custom baseURL). */
export function openaiModel(server: ScriptedModel, extra: Record<string, unknown> = {}) {
  return { modelName: "openai/gpt-4.1-mini", apiKey: OPTION_KEY, baseURL: server.baseURL, ...extra };
}

/** `ollama/<model>` served by the scripted server through the OpenAI-compatible provider. */
export function ollamaModel(server: ScriptedModel, model = "qwen2.5vl", extra: Record<string, unknown> = {}) {
  return { modelName: `ollama/${model}`, baseURL: server.baseURL, ...extra };
}

export const TINY_PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
]);

/** Follows `keys` into a parsed JSON value (for reading schemas in assertions). */
export function dig(value: unknown, ...keys: string[]): Record<string, unknown> {
  let current = value;
  for (const key of keys) current = (current as Record<string, unknown> | undefined)?.[key];
  return (current ?? {}) as Record<string, unknown>;
}
