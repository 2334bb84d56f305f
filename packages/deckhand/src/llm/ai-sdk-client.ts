// Deckhand's own LLMClient: any provider the Vercel AI SDK serves, resolved from a
// `ModelConfiguration`. It sends the prompt (images included), asks for structured output when a
// schema is given, and reports usage. Checking the answer against the schema is the caller's job
// (ModelCaller); this client only guarantees that `data` is parsed JSON.

import {
  APICallError,
  type FilePart,
  generateText,
  jsonSchema,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  NoObjectGeneratedError,
  NoOutputGeneratedError,
  Output,
  RetryError,
  type TextPart,
} from "ai";
import { LLMResponseError, ServiceCancelledError, ServiceError, UnsupportedModelError } from "../errors.ts";
import type { DeckhandLog } from "../log.ts";
import type { ModelConfiguration } from "../types.ts";
import type { LLMClient, LLMContentPart, LLMMessage, LLMRequest, LLMResponse, LLMUsage } from "./client.ts";
import { loadLanguageModel, type ResolvedModel, resolveModel } from "./resolve-model.ts";
import { isStrictCompatible } from "./schema.ts";
import { textOnlyFamily, VISION_MODEL_SUGGESTIONS } from "./vision.ts";

/** The model answered, but not with something usable (not JSON, empty, cut off). Carries what it
 * did answer and what that cost, so the caller can retry and still count the tokens. */
export class LLMUnusableAnswerError extends LLMResponseError {
  /** What was wrong with the answer, in words the model can act on when asked again. */
  readonly problem: string;
  readonly answerText: string;
  readonly usage: LLMUsage;

  constructor(
    operation: string,
    reason: string,
    answerText: string,
    usage: LLMUsage,
    options?: { cause?: unknown },
  ) {
    super(operation, reason, options);
    this.problem = reason;
    this.answerText = answerText;
    this.usage = usage;
  }
}

export function toLLMUsage(usage: LanguageModelUsage | undefined): LLMUsage {
  return {
    promptTokens: usage?.inputTokens ?? 0,
    completionTokens: usage?.outputTokens ?? 0,
    reasoningTokens: usage?.outputTokenDetails?.reasoningTokens ?? 0,
    cachedInputTokens: usage?.inputTokenDetails?.cacheReadTokens ?? 0,
  };
}

export function hasImage(messages: readonly LLMMessage[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((part) => part.type === "image"));
}

/** The error for an image sent to a model that cannot read it. */
export function visionUnsupportedError(
  modelName: string,
  operation: string,
  how: string,
): UnsupportedModelError {
  const family = textOnlyFamily(modelName.slice(modelName.indexOf("/") + 1));
  return new UnsupportedModelError(
    `${modelName} cannot read images${family ? ` (${family} models take text only)` : ""}, and this ${operation} call sends one ` +
      `(for example extract with \`screenshot: true\`). Use a vision-capable model such as ${VISION_MODEL_SUGGESTIONS.join(", ")}; ${how}`,
  );
}

function imagePart(part: Extract<LLMContentPart, { type: "image" }>): FilePart {
  const { image } = part;
  if (typeof image === "string") {
    const dataUrl = image.match(/^data:([^;,]+)?(;base64)?,(.*)$/s);
    if (dataUrl) {
      return { type: "file", data: dataUrl[3] ?? "", mediaType: part.mediaType ?? dataUrl[1] ?? "image/png" };
    }
    if (/^https?:\/\//i.test(image))
      return { type: "file", data: new URL(image), mediaType: part.mediaType ?? "image/*" };
  }
  return { type: "file", data: image, mediaType: part.mediaType ?? "image/png" };
}

function textOf(content: LLMMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "[image]")).join("\n");
}

/** Splits Deckhand messages into the AI SDK's instructions (system text) and messages. */
export function toModelMessages(messages: readonly LLMMessage[]): {
  instructions: string;
  messages: ModelMessage[];
} {
  const system: string[] = [];
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === "system") system.push(textOf(message.content));
    else if (message.role === "assistant") out.push({ role: "assistant", content: textOf(message.content) });
    else if (typeof message.content === "string") out.push({ role: "user", content: message.content });
    else {
      const parts: (TextPart | FilePart)[] = message.content.map((part) =>
        part.type === "text" ? { type: "text", text: part.text } : imagePart(part),
      );
      out.push({ role: "user", content: parts });
    }
  }
  return { instructions: system.join("\n\n"), messages: out };
}

function schemaName(name: string | undefined, operation: string): string {
  // The Responses API allows [a-zA-Z0-9_-]{1,64}.
  const cleaned = (name ?? operation).replace(/[^a-zA-Z0-9_-]+/g, "_").slice(0, 64);
  return cleaned || "answer";
}

function describeTransportError(error: unknown, model: ResolvedModel): string {
  let attempts = 1;
  let last = error;
  if (RetryError.isInstance(error)) {
    attempts = error.errors.length;
    last = error.lastError;
  }
  const after = attempts > 1 ? ` (after ${attempts} attempts)` : "";
  if (APICallError.isInstance(last)) {
    if (last.statusCode !== undefined) {
      return `${model.modelName} answered HTTP ${last.statusCode}${after}: ${last.message}`;
    }
    return `could not reach ${model.provider.name} at ${model.baseURL ?? "its default address"}${after}: ${last.message}`;
  }
  return `${model.modelName} request failed${after}: ${last instanceof Error ? last.message : String(last)}`;
}

function abortError(signal: AbortSignal, operation: string): ServiceError {
  const reason: unknown = signal.reason;
  if (reason instanceof ServiceError) return reason;
  return new ServiceCancelledError(`The ${operation} model call was cancelled.`, { cause: reason });
}

type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]["providerOptions"]>;

export interface AISdkClientOptions {
  /** Where provider keys and base URLs are read from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Transport retries per call (408, 409, 429, 5xx, network). Default 2, or the model object's `maxRetries`. */
  maxRetries?: number;
  /** Receives the AI SDK's warnings (unsupported settings, ...) at debug level. */
  log?: DeckhandLog;
}

/** An LLMClient for any model the AI SDK providers serve. */
export class AISdkClient implements LLMClient {
  readonly modelName: string;
  readonly supportsVision: boolean;
  readonly model: ResolvedModel;
  private readonly maxRetries: number;
  private readonly log: DeckhandLog | undefined;
  private languageModel: Promise<LanguageModel> | undefined;

  /** Resolves the configuration now (so configuration errors surface here); the provider package loads on first use. */
  constructor(model: ModelConfiguration | undefined, options: AISdkClientOptions = {}) {
    this.model = resolveModel(model, options.env, (message) => options.log?.warn("llm", message));
    this.modelName = this.model.modelName;
    this.supportsVision = this.model.vision;
    this.maxRetries = options.maxRetries ?? this.model.maxRetries ?? 2;
    this.log = options.log;
  }

  private load(): Promise<LanguageModel> {
    this.languageModel ??= loadLanguageModel(this.model).catch((error: unknown) => {
      this.languageModel = undefined;
      throw error;
    });
    return this.languageModel;
  }

  private providerOptions(strict: boolean | undefined): ProviderOptions | undefined {
    const own = this.model.providerOptions as ProviderOptions | undefined;
    if (strict === undefined) return own;
    const key =
      this.model.provider.name === "openai"
        ? "openai"
        : this.model.provider.package === "@ai-sdk/openai-compatible"
          ? "openaiCompatible"
          : undefined;
    if (!key) return own;
    return { ...own, [key]: { strictJsonSchema: strict, ...own?.[key] } };
  }

  async generate<T = unknown>(request: LLMRequest): Promise<LLMResponse<T>> {
    const { operation, schema, signal } = request;
    if (hasImage(request.messages) && !this.supportsVision) {
      throw visionUnsupportedError(
        this.modelName,
        operation,
        "or, if this model does accept images, say so with `vision: true` in the model object.",
      );
    }
    if (signal?.aborted) throw abortError(signal, operation);
    const model = await this.load();
    const { instructions, messages } = toModelMessages(request.messages);
    let system = instructions;
    if (schema && !this.model.structuredOutputs) {
      system +=
        `${system ? "\n\n" : ""}Answer with one JSON object and nothing else (no prose, no code fences). ` +
        `It must match this JSON Schema:\n${JSON.stringify(schema)}`;
    }
    const name = schema ? schemaName(request.schemaName, operation) : undefined;
    const common = {
      model,
      ...(system ? { instructions: system } : {}),
      messages,
      maxRetries: this.maxRetries,
      ...(signal ? { abortSignal: signal } : {}),
    };

    try {
      if (!schema) {
        const providerOptions = this.providerOptions(undefined);
        const result = await generateText({ ...common, ...(providerOptions ? { providerOptions } : {}) });
        this.logWarnings(result.warnings);
        const usage = toLLMUsage(result.usage);
        if (result.text.trim() === "") {
          throw new LLMUnusableAnswerError(
            operation,
            `the model returned an empty answer (finish reason: ${result.finishReason})`,
            result.text,
            usage,
          );
        }
        return { data: result.text as T, usage };
      }

      const providerOptions = this.providerOptions(isStrictCompatible(schema));
      const result = await generateText({
        ...common,
        ...(providerOptions ? { providerOptions } : {}),
        // Without schema support the schema is in the prompt already; JSON mode keeps the answer parseable.
        output: this.model.structuredOutputs
          ? Output.object({ schema: jsonSchema<unknown>(schema as Parameters<typeof jsonSchema>[0]), name })
          : Output.json({ name }),
      });
      this.logWarnings(result.warnings);
      const usage = toLLMUsage(result.usage);
      let data: unknown;
      try {
        data = result.output;
      } catch (error) {
        if (!NoOutputGeneratedError.isInstance(error)) throw error;
        throw new LLMUnusableAnswerError(
          operation,
          `the model returned no answer (finish reason: ${result.finishReason})`,
          result.text,
          usage,
        );
      }
      return { data: data as T, usage };
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (signal?.aborted) throw abortError(signal, operation);
      if (NoObjectGeneratedError.isInstance(error)) {
        const text = error.text ?? "";
        const cutOff = error.finishReason === "length" ? " (it was cut off at the output token limit)" : "";
        const reason =
          text.trim() === ""
            ? `the model returned an empty answer${cutOff}`
            : `the answer is not valid JSON${cutOff}: ${error.cause instanceof Error ? error.cause.message : error.message}`;
        throw new LLMUnusableAnswerError(operation, reason, text, toLLMUsage(error.usage), { cause: error });
      }
      throw new LLMResponseError(operation, describeTransportError(error, this.model), { cause: error });
    }
  }

  private logWarnings(warnings: readonly unknown[] | undefined): void {
    if (!this.log || !warnings?.length) return;
    this.log.debug("llm", `AI SDK warnings for ${this.modelName}`, { warnings });
  }
}
