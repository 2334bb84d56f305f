// Deckhand's own LLMClient: any provider the Vercel AI SDK serves, resolved from a
// `ModelConfiguration`. It sends the prompt (images included), asks for structured output when a
// schema is given, and reports usage. Checking the answer against the schema is the caller's job
// (ModelCaller); this client only guarantees that `data` is parsed JSON.

import {
  APICallError,
  type FilePart,
  generateText,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  type Output,
  RetryError,
  type TextPart,
} from "ai";
import { LLMResponseError, ServiceCancelledError, ServiceError, UnsupportedModelError } from "../errors.ts";
import type { DeckhandLog } from "../log.ts";
import type { ModelConfiguration } from "../types.ts";
import { readJsonAnswer } from "./answer-reader.ts";
import type { LLMClient, LLMContentPart, LLMMessage, LLMRequest, LLMResponse, LLMUsage } from "./client.ts";
import {
  loadLanguageModel,
  type ResolvedModel,
  resolveModel,
  type StructuredOutputMode,
} from "./resolve-model.ts";
import { isStrictCompatible } from "./schema.ts";
import { textOnlyFamily, VISION_MODEL_SUGGESTIONS } from "./vision.ts";

/** The model answered, but not with something usable (not JSON, empty, cut off). Carries what it
 * did answer and what that cost, so the caller can retry and still count the tokens. */
export class LLMUnusableAnswerError extends LLMResponseError {
  /** What was wrong with the answer, in words the model can act on when asked again. */
  readonly problem: string;
  readonly answerText: string;
  readonly usage: LLMUsage;
  /**
   * The server stopped the answer at its output token limit (finish reason `length`): a problem of
   * the limit, not of the model's judgement, so the caller asks again with a larger one.
   */
  readonly cutOff: boolean;

  constructor(
    operation: string,
    reason: string,
    answerText: string,
    usage: LLMUsage,
    options?: { cause?: unknown; cutOff?: boolean },
  ) {
    super(operation, reason, options);
    this.problem = reason;
    this.answerText = answerText;
    this.usage = usage;
    this.cutOff = options?.cutOff ?? false;
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

/**
 * The output specification of a call with a schema: it asks for the shape the way `mode` says and
 * hands back the text as it is, for the tolerant reader (the AI SDK's own parsing would refuse a
 * fenced or slightly broken answer that can be read in one way only).
 */
function answerText(
  mode: StructuredOutputMode,
  schema: Record<string, unknown>,
  name: string | undefined,
): Output.Output<string, string, never> {
  const format =
    mode === "json_schema"
      ? { type: "json" as const, schema: schema as never, ...(name ? { name } : {}) }
      : mode === "json_object"
        ? { type: "json" as const, ...(name ? { name } : {}) }
        : { type: "text" as const };
  return {
    name: "text",
    responseFormat: Promise.resolve(format),
    async parseCompleteOutput({ text }) {
      return text;
    },
    async parsePartialOutput({ text }) {
      return { partial: text };
    },
    createElementStreamTransform() {
      return undefined;
    },
  };
}

/** Whether an error is a server's refusal of the response format (a 4xx that names it). */
export function refusesResponseFormat(error: unknown): boolean {
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (!APICallError.isInstance(last)) return false;
  const status = last.statusCode ?? 0;
  if (status !== 400 && status !== 422 && status !== 415 && status !== 501) return false;
  const text = `${last.message} ${last.responseBody ?? ""}`;
  return /response_format|json_schema|json_object|structured output|response format|guided_json|grammar/i.test(
    text,
  );
}

/**
 * Whether an error is the server's refusal of the request itself (400 or 422), whatever its words.
 * A question asked again under a raised output limit differs from the first one, which the server
 * took, by that limit and the answer it quotes; its refusal is most likely the limit (vLLM refuses
 * prompt + max_tokens beyond the model's context), and through the service the words of a caller's
 * own endpoint are not passed on, so the words are not what is looked at.
 */
export function refusesRequest(error: unknown): boolean {
  const last = RetryError.isInstance(error) ? error.lastError : error;
  return APICallError.isInstance(last) && (last.statusCode === 400 || last.statusCode === 422);
}

/**
 * Reasoning tokens as the server counted them or, when it counted none but the model did reason
 * (a `<think>` block in the content, which local servers do not count apart), an estimate from the
 * reasoning's length: about four characters a token, never more than the output tokens.
 */
function withReasoningEstimate(usage: LLMUsage, reasoning: string | undefined): LLMUsage {
  if ((usage.reasoningTokens ?? 0) > 0 || !reasoning) return usage;
  const estimate = Math.ceil(reasoning.length / 4);
  return {
    ...usage,
    reasoningTokens: usage.completionTokens > 0 ? Math.min(estimate, usage.completionTokens) : estimate,
  };
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
  private structuredMode: StructuredOutputMode;
  /** The server refused a question for its output limit once: later ones go under its own limit. */
  private outputLimitRefused = false;

  /** Resolves the configuration now (so configuration errors surface here); the provider package loads on first use. */
  constructor(model: ModelConfiguration | undefined, options: AISdkClientOptions = {}) {
    this.model = resolveModel(model, options.env, (message) => options.log?.warn("llm", message));
    this.modelName = this.model.modelName;
    this.supportsVision = this.model.vision;
    this.maxRetries = options.maxRetries ?? this.model.maxRetries ?? 2;
    this.log = options.log;
    this.structuredMode = this.model.structuredOutputs;
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

  /** How this client asks for an answer's shape now: it steps down when the server refuses one. */
  get structuredOutputMode(): StructuredOutputMode {
    return this.structuredMode;
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
    const name = schema ? schemaName(request.schemaName, operation) : undefined;

    // Dropped when the server refuses it: the question is then asked under the server's own limit,
    // and so are the later ones.
    let maxOutputTokens = this.outputLimitRefused ? undefined : request.maxOutputTokens;
    for (;;) {
      const mode = this.structuredMode;
      let system = instructions;
      if (schema && (mode !== "json_schema" || this.model.schemaInPrompt)) {
        system +=
          `${system ? "\n\n" : ""}Answer with one JSON object and nothing else (no prose, no code fences). ` +
          `It must match this JSON Schema:\n${JSON.stringify(schema)}`;
      }
      const common = {
        model,
        ...(system ? { instructions: system } : {}),
        messages,
        maxRetries: this.maxRetries,
        ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
        ...(signal ? { abortSignal: signal } : {}),
      };
      try {
        const providerOptions = this.providerOptions(
          schema && mode === "json_schema" ? isStrictCompatible(schema) : undefined,
        );
        const result = await generateText({
          ...common,
          ...(providerOptions ? { providerOptions } : {}),
          ...(schema ? { output: answerText(mode, schema, name) } : {}),
        });
        this.logWarnings(result.warnings);
        const usage = withReasoningEstimate(toLLMUsage(result.usage), result.reasoningText);
        const cutOff = result.finishReason === "length";
        const cutOffWords = cutOff ? " (it was cut off at the output token limit)" : "";
        if (result.text.trim() === "") {
          throw new LLMUnusableAnswerError(
            operation,
            result.reasoningText
              ? `the answer holds only reasoning and no answer${cutOffWords}`
              : `the model returned an empty answer${cutOffWords || ` (finish reason: ${result.finishReason})`}`,
            result.text,
            usage,
            { cutOff },
          );
        }
        if (schema) {
          // A clean answer is handed on parsed; any other goes as text to the caller's tolerant
          // reader (answer-reader.ts), which repairs or refuses it and says why.
          const read = readJsonAnswer(result.text);
          if (!read.ok) {
            // The start of what it said, so that a person can see why (secrets are removed from
            // error messages wherever they are reported).
            const said = result.text.trim();
            const excerpt = said.length > 200 ? `${said.slice(0, 200)}...` : said;
            throw new LLMUnusableAnswerError(
              operation,
              `${read.reason}${cutOffWords}; it answered: ${excerpt}`,
              result.text,
              usage,
              { cutOff },
            );
          }
          if (read.repairs.length === 0) return { data: read.value as T, usage };
        }
        return { data: result.text as T, usage };
      } catch (error) {
        if (error instanceof ServiceError) throw error;
        if (signal?.aborted) throw abortError(signal, operation);
        if (maxOutputTokens !== undefined && refusesRequest(error)) {
          // Asked once more under the server's own limit: a refusal for another cause comes back
          // then, and is reported as it would have been.
          this.log?.info(
            "llm",
            `${this.modelName} refused the question with an output limit of ${maxOutputTokens} tokens; asking under its own limit`,
          );
          maxOutputTokens = undefined;
          this.outputLimitRefused = true;
          continue;
        }
        const next = schema ? this.stepDown(error, mode) : undefined;
        if (next) continue;
        throw new LLMResponseError(operation, describeTransportError(error, this.model), { cause: error });
      }
    }
  }

  /**
   * After a server's 400 that names the response format: the next way down (json_schema ->
   * json_object -> prompt), remembered for the rest of the session. Undefined for any other error.
   */
  private stepDown(error: unknown, mode: StructuredOutputMode): StructuredOutputMode | undefined {
    if (mode === "prompt" || !refusesResponseFormat(error)) return undefined;
    const next: StructuredOutputMode = mode === "json_schema" ? "json_object" : "prompt";
    this.structuredMode = next;
    this.log?.info(
      "llm",
      `${this.modelName} refused the ${mode} response format; asking with ${next === "prompt" ? "the schema in the prompt only" : next} from now on`,
      { status: APICallError.isInstance(error) ? error.statusCode : undefined },
    );
    return next;
  }

  private logWarnings(warnings: readonly unknown[] | undefined): void {
    if (!this.log || !warnings?.length) return;
    this.log.debug("llm", `AI SDK warnings for ${this.modelName}`, { warnings });
  }
}
