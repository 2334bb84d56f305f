// OpenAI's GA computer tool (`computer`, batched actions) on the models that have it built in
// (gpt-5.4 and later), through the AI SDK's OpenAI provider (`openai.tools.computer()`, the
// Responses API). Turns are chained with previousResponseId, so each request carries only the
// new screenshots, as with computer-use-preview.

import {
  APICallError,
  generateText,
  type JSONValue,
  type LanguageModel,
  type ModelMessage,
  RetryError,
} from "ai";
import { loadLanguageModel, resolveModel } from "../../llm/resolve-model.ts";
import { actionOf, dataUrl } from "./openai.ts";
import {
  type CuaCall,
  type CuaCallResult,
  CuaProviderError,
  type CuaSession,
  type CuaSessionOptions,
  type CuaTurn,
  errorMessageOf,
  mapActions,
  resultsText,
  usageOfSdk,
} from "./session.ts";
import type { CuaSafetyCheck } from "./types.ts";

type Json = Record<string, unknown>;

export class OpenAIComputerToolSession implements CuaSession {
  private readonly options: CuaSessionOptions;
  private model: LanguageModel | undefined;
  private previousResponseId: string | undefined;
  private pending: ModelMessage[];
  private readonly log: ModelMessage[] = [];

  constructor(options: CuaSessionOptions) {
    this.options = options;
    this.pending = [
      {
        role: "user",
        content: [
          { type: "text", text: options.instruction },
          { type: "file", mediaType: "image/png", data: options.firstScreenshot.toString("base64") },
        ],
      },
    ];
  }

  async next(signal: AbortSignal): Promise<CuaTurn> {
    const { options } = this;
    if (!this.model) {
      this.model = await loadLanguageModel(
        resolveModel({
          modelName: `openai/${options.modelId}`,
          api: "responses",
          ...(options.apiKey ? { apiKey: options.apiKey } : {}),
          ...(options.baseURL ? { baseURL: options.baseURL } : {}),
          ...(options.headers ? { headers: options.headers } : {}),
        }),
      );
    }
    const model = this.model;
    const { openai } = await import("@ai-sdk/openai");
    const messages = this.pending;
    const ask = () =>
      generateText({
        model,
        system: options.system,
        messages,
        tools: { computer: openai.tools.computer() },
        abortSignal: signal,
        maxRetries: 1,
        providerOptions: {
          openai: {
            truncation: "auto",
            ...(this.previousResponseId ? { previousResponseId: this.previousResponseId } : {}),
          },
        },
      });
    let result: Awaited<ReturnType<typeof ask>>;
    try {
      result = await ask();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const cause = RetryError.isInstance(error) ? error.lastError : error;
      const status = APICallError.isInstance(cause) ? cause.statusCode : undefined;
      throw new CuaProviderError(`OpenAI's API failed: ${errorMessageOf(cause)}`, status, { cause });
    }
    this.log.push(...messages, ...result.response.messages);
    this.pending = [];
    const responseId = result.providerMetadata?.openai?.responseId;
    this.previousResponseId = typeof responseId === "string" ? responseId : result.response.id;

    const calls = result.toolCalls.map((call): CuaCall => {
      const input = (call.input ?? {}) as { actions?: Json[]; pendingSafetyChecks?: CuaSafetyCheck[] };
      const actions = input.actions ?? [];
      return {
        id: call.toolCallId,
        name: actions.map((a) => String(a.type)).join(",") || "screenshot",
        args: actions.length === 1 ? (actions[0] as Json) : { actions },
        // The AI SDK names the scroll amounts scrollX / scrollY; the mapping reads both spellings.
        ...mapActions(() => actions.map((a) => actionOf(a, options.screen))),
        safetyChecks: input.pendingSafetyChecks ?? [],
      };
    });
    return {
      text: [result.reasoningText, result.text].filter(Boolean).join("\n"),
      calls,
      usage: usageOfSdk(result.usage),
    };
  }

  answer(results: CuaCallResult[]): void {
    this.pending.push({
      role: "tool",
      content: results.map((r) => ({
        type: "tool-result" as const,
        toolCallId: r.call.id,
        toolName: "computer",
        output: {
          type: "json" as const,
          value: {
            output: { type: "computer_screenshot", imageUrl: dataUrl(r.screenshot) },
            ...(r.acknowledged.length
              ? { acknowledgedSafetyChecks: r.acknowledged.map((c) => ({ ...c })) as JSONValue[] }
              : {}),
          },
        },
      })),
    });
    const text = resultsText(results);
    if (text) this.pending.push({ role: "user", content: [{ type: "text", text }] });
  }

  messages(): unknown[] {
    return [...this.log, ...this.pending];
  }
}
