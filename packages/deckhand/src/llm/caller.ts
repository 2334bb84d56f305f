// The one way the operations call a model. ModelCaller picks the client (the caller's
// `llmClient`, or an AISdkClient for the configured model), adds the user's system prompt, checks
// the answer against the schema (asking once more when it does not fit), and accounts for every
// call: metrics, the log, and `logInferenceToFile`.

import {
  LLMResponseError,
  MissingLLMConfigurationError,
  ServiceCancelledError,
  ServiceError,
  UnsupportedModelError,
  ZodSchemaValidationError,
} from "../errors.ts";
import type { DeckhandLog } from "../log.ts";
import type { MetricsRecorder } from "../metrics.ts";
import type { ModelConfiguration } from "../types.ts";
import { AISdkClient, hasImage, LLMUnusableAnswerError, visionUnsupportedError } from "./ai-sdk-client.ts";
import { coerceToSchema, readJsonAnswer, splitThinking } from "./answer-reader.ts";
import type { LLMClient, LLMMessage, LLMRequest, LLMUsage } from "./client.ts";
import { InferenceFileLog, messagesWithoutImages } from "./inference-log.ts";
import {
  type InferSchema,
  type ResponseSchema,
  type SchemaInput,
  type SchemaMismatch,
  toResponseSchema,
} from "./schema.ts";

export type ModelOperation = LLMRequest["operation"];

export interface ModelCallerOptions {
  /** The model for every call that does not name its own. Unset: the `llmClient`, else the default model. */
  model?: ModelConfiguration;
  /** The caller's own client; used when no model is configured (a per-call `model` still wins). */
  llmClient?: LLMClient;
  /** The user's instructions, added to the system message of every call. */
  systemPrompt?: string;
  /** Logging (category "llm"); its redactor also cleans inference files and error messages. */
  log: DeckhandLog;
  metrics?: MetricsRecorder;
  /** Write one JSON file per call. */
  logInferenceToFile?: boolean;
  /** Directory for those files. Default `./inference_summary`. */
  inferenceLogDir?: string;
  /** Transport retries per call for AI SDK models. Default 2 (the model object's `maxRetries` wins). */
  maxRetries?: number;
  /** Where provider keys are read from. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

export interface ModelCall<S = undefined> {
  operation: ModelOperation;
  /** The operation's prompt; its system message gets the user's `systemPrompt` appended. */
  messages: LLMMessage[];
  /** The answer's schema: zod 4, zod 3, JSON Schema, or a prepared `ResponseSchema`. Without one the answer is text. */
  schema?: S;
  /** Name of the schema for providers that want one. Default: the operation name. */
  schemaName?: string;
  signal?: AbortSignal;
  /** A model for this call only. */
  model?: ModelConfiguration;
  /**
   * The operation whose metrics the call's tokens count under, when it is not `operation`: the
   * user called act(action), and act asked an observe-style question to find its element again.
   */
  metricsAs?: ModelOperation;
  /**
   * Applied to the parsed answer before the schema check: the operation's own reading of what a
   * model may say in other words (act's method synonyms). Must not guess.
   */
  normalize?: (answer: unknown) => unknown;
  /**
   * The operation's check of an answer that fits the schema (an element id that is not on the
   * page, say). A problem makes the model be asked once more with those words; when the second
   * answer has a problem too, it is returned with `problem` set, and the operation decides.
   */
  accept?: (
    answer: S extends undefined ? string : InferSchema<S>,
  ) => Promise<string | undefined> | string | undefined;
}

export interface ModelCallResult<T> {
  /** The validated answer (or the text, without a schema). */
  data: T;
  /** Usage of every attempt, summed. */
  usage: LLMUsage;
  /** Milliseconds spent waiting for the model, every attempt summed. */
  inferenceTimeMs: number;
  /** 1, or 2 when the first answer did not fit and the model was asked again. */
  attempts: number;
  modelName: string;
  /** What the tolerant reader repaired in the answer that was used (see docs/tolerant-reader.md). */
  repairs: string[];
  /** Set when the last answer fits the schema but the operation's `accept` still found this wrong. */
  problem?: string;
}

/** A problem with an answer, in words the model can act on when asked again. */
type AnswerProblem =
  | { kind: "mismatch"; mismatch: SchemaMismatch; answerText: string }
  | { kind: "unusable"; reason: string; answerText: string; cause: unknown; cutOff?: CutOff }
  | { kind: "rejected"; reason: string; answerText: string };

const RETRY_ANSWER_LIMIT = 8_000;

/** An answer the server stopped at its output token limit, and how many tokens it had given. */
interface CutOff {
  completionTokens: number;
}

/**
 * The output limit of the question asked again after an answer was cut off at the server's limit:
 * twice what the cut answer used, and at least 4,096 tokens (more than an act or observe answer
 * and most extract answers need: the limit that cut them is a server default, such as an old
 * Ollama's 128 tokens). At most 32,768, so that it fits the context of the servers that check
 * prompt + limit against it; a server that still refuses it is asked under its own limit
 * (ai-sdk-client.ts).
 */
export function raisedOutputLimit(cut: CutOff): number {
  return Math.min(32_768, Math.max(4_096, 2 * cut.completionTokens));
}

function addUsage(a: LLMUsage, b: LLMUsage): LLMUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0),
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
  };
}

const NO_USAGE: LLMUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedInputTokens: 0 };

function normalizeUsage(usage: Partial<LLMUsage> | undefined): LLMUsage {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  return {
    promptTokens: n(usage?.promptTokens),
    completionTokens: n(usage?.completionTokens),
    reasoningTokens: n(usage?.reasoningTokens),
    cachedInputTokens: n(usage?.cachedInputTokens),
  };
}

function answerTextOf(answer: unknown): string {
  return typeof answer === "string" ? answer : (JSON.stringify(answer) ?? "");
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}... [${text.length - limit} more characters]` : text;
}

function retryMessage(problem: AnswerProblem, withSchema: boolean): string {
  if (problem.kind === "rejected") {
    return `Your answer cannot be used: ${problem.reason}. Answer again with the complete, corrected JSON object.`;
  }
  if (problem.kind === "mismatch") {
    const where = problem.mismatch.path ? `at \`${problem.mismatch.path}\`` : "at the root";
    return (
      `Your answer does not match the required schema ${where}: ${problem.mismatch.reason}. ` +
      "Answer again with the complete, corrected JSON object."
    );
  }
  if (problem.cutOff) {
    // Reasoning and prose spend the same output tokens as the answer: ask for the object alone.
    return withSchema
      ? "Your answer was cut off at the output token limit before its JSON object closed. Answer again with only the complete JSON object that matches the required schema: no reasoning, no prose, no code fence."
      : "Your answer was cut off at the output token limit. Answer again, complete and brief, with no reasoning.";
  }
  return withSchema
    ? `Your answer could not be used: ${problem.reason}. Answer again with only a JSON object that matches the required schema.`
    : `Your answer could not be used: ${problem.reason}. Answer again.`;
}

/** Appends the user's instructions to the first system message (or adds one). */
export function withSystemPrompt(
  messages: readonly LLMMessage[],
  systemPrompt: string | undefined,
): LLMMessage[] {
  const extra = systemPrompt?.trim();
  if (!extra) return [...messages];
  const addition = `Additional instructions from the user (follow them unless they conflict with the rules above):\n${extra}`;
  const index = messages.findIndex((m) => m.role === "system");
  if (index < 0) return [{ role: "system", content: addition }, ...messages];
  return messages.map((m, i) => {
    if (i !== index) return m;
    const content =
      typeof m.content === "string"
        ? `${m.content}\n\n${addition}`
        : [...m.content, { type: "text" as const, text: addition }];
    return { ...m, content };
  });
}

export class ModelCaller {
  readonly systemPrompt: string | undefined;
  private readonly options: ModelCallerOptions;
  private readonly log: DeckhandLog;
  private readonly fileLog: InferenceFileLog | undefined;
  private readonly clients = new Map<string, AISdkClient>();
  /**
   * The output limit a client's server was found to need: once it has cut an answer off at its own
   * limit, every later question to it carries the raised one (like the structured-output mode, for
   * the rest of the session), so that it does not cut the next answer first.
   */
  private readonly outputLimits = new WeakMap<LLMClient, number>();

  constructor(options: ModelCallerOptions) {
    this.options = options;
    this.systemPrompt = options.systemPrompt;
    this.log = options.log;
    this.fileLog = options.logInferenceToFile
      ? new InferenceFileLog(options.inferenceLogDir, options.log.redactor)
      : undefined;
    this.addSecret(typeof options.model === "object" ? options.model.apiKey : undefined);
  }

  /** Registers an API key with the redactor. Very short values (placeholders such as "none") are
   * not secrets, and redacting them would garble every log line that happens to contain them. */
  private addSecret(value: unknown): void {
    if (typeof value === "string" && value.length >= 8) this.log.redactor.add(value);
  }

  /** The directory inference files go to, when `logInferenceToFile` is on. */
  get inferenceLogDir(): string | undefined {
    return this.fileLog?.dir;
  }

  /**
   * The client a call with this `model` (or none) uses. Throws the configuration errors
   * (`InvalidAISDKModelFormatError`, `UnsupportedModelError`, `MissingLLMConfigurationError`)
   * without making a request.
   */
  clientFor(model?: ModelConfiguration): LLMClient {
    const config = model ?? this.options.model;
    if (config === undefined && this.options.llmClient) return this.options.llmClient;
    const key = config === undefined ? "" : typeof config === "string" ? config : JSON.stringify(config);
    let client = this.clients.get(key);
    if (!client) {
      client = new AISdkClient(config, {
        ...(this.options.env ? { env: this.options.env } : {}),
        ...(this.options.maxRetries !== undefined ? { maxRetries: this.options.maxRetries } : {}),
        log: this.log,
      });
      this.addSecret(client.model.apiKey);
      this.clients.set(key, client);
    }
    return client;
  }

  /**
   * Whether a call with this `model` (or none) has a model to go to, found without calling it:
   * false only when no model is configured and none can be (MissingLLMConfigurationError); any
   * other configuration error is for the call itself to report.
   */
  canCall(model?: ModelConfiguration): boolean {
    try {
      this.clientFor(model);
      return true;
    } catch (error) {
      if (error instanceof MissingLLMConfigurationError) return false;
      return true;
    }
  }

  /** Whether calls with this `model` (or the configured one) may carry images. */
  supportsVision(model?: ModelConfiguration): boolean {
    return this.clientFor(model).supportsVision === true;
  }

  /** Calls the model and returns its validated answer. */
  call<S extends SchemaInput | ResponseSchema<unknown>>(
    request: ModelCall<S> & { schema: S },
  ): Promise<ModelCallResult<InferSchema<S>>>;
  call(request: ModelCall<undefined>): Promise<ModelCallResult<string>>;
  async call(
    request: ModelCall<SchemaInput | ResponseSchema<unknown> | undefined>,
  ): Promise<ModelCallResult<unknown>> {
    const { operation, signal } = request;
    const client = this.clientFor(request.model);
    const schema = request.schema === undefined ? undefined : toResponseSchema(request.schema);
    const isOwnClient = !(client instanceof AISdkClient);

    if (hasImage(request.messages) && client.supportsVision !== true) {
      throw visionUnsupportedError(
        client.modelName,
        operation,
        isOwnClient
          ? "or set `supportsVision: true` on your llmClient if it accepts images."
          : "or, if this model does accept images, say so with `vision: true` in the model object.",
      );
    }

    let messages = withSystemPrompt(request.messages, this.systemPrompt);
    let maxOutputTokens = this.outputLimits.get(client);
    let usage = NO_USAGE;
    let inferenceTimeMs = 0;
    let problem: AnswerProblem | undefined;

    for (let attempt = 1; attempt <= 2; attempt++) {
      if (signal?.aborted) throw this.cancelled(signal, operation);
      const startedAt = new Date();
      const started = performance.now();
      let answer: unknown;
      let callUsage = NO_USAGE;
      let failure: unknown;
      try {
        const response = await client.generate({
          operation,
          messages,
          ...(schema ? { schema: schema.wireSchema, schemaName: request.schemaName ?? operation } : {}),
          ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
          ...(signal ? { signal } : {}),
        });
        answer = response.data;
        callUsage = normalizeUsage(response.usage);
      } catch (error) {
        failure = error;
        if (error instanceof LLMUnusableAnswerError) callUsage = normalizeUsage(error.usage);
      }
      const elapsed = Math.round(performance.now() - started);
      inferenceTimeMs += elapsed;
      usage = addUsage(usage, callUsage);
      this.options.metrics?.record(request.metricsAs ?? operation, callUsage, elapsed);

      const record = {
        operation,
        model: client.modelName,
        attempt,
        startedAt: startedAt.toISOString(),
        inferenceTimeMs: elapsed,
        messages,
        ...(schema ? { schema: schema.wireSchema } : {}),
        usage: callUsage,
      };

      if (failure !== undefined) {
        const unusable = failure instanceof LLMUnusableAnswerError ? failure : undefined;
        await this.account({ ...record, answer: unusable?.answerText, error: String(failure) });
        if (!unusable) throw this.transportError(failure, operation, signal);
        problem = {
          kind: "unusable",
          reason: unusable.problem,
          answerText: unusable.answerText,
          cause: unusable,
          ...(unusable.cutOff ? { cutOff: { completionTokens: callUsage.completionTokens } } : {}),
        };
      } else {
        let checked = await this.check(answer, schema, operation, request.normalize);
        let rejected: string | undefined;
        const fitted = checked;
        if (checked.ok && request.accept) {
          rejected = await request.accept(checked.value as never);
          if (rejected !== undefined) {
            checked = {
              ok: false,
              problem: { kind: "rejected", reason: rejected, answerText: answerTextOf(answer) },
            };
          }
        }
        await this.account({
          ...record,
          answer,
          ...(checked.ok ? {} : { error: this.describe(checked.problem) }),
          ...(checked.ok && checked.repairs.length ? { repairs: checked.repairs } : {}),
        });
        if (checked.ok) {
          if (checked.repairs.length) {
            this.log.info("llm", `read the ${operation} answer with repairs: ${checked.repairs.join("; ")}`);
          }
          return {
            data: checked.value,
            usage,
            inferenceTimeMs,
            attempts: attempt,
            modelName: client.modelName,
            repairs: checked.repairs,
          };
        }
        if (rejected !== undefined && attempt === 2 && fitted.ok) {
          // The operation decides what an answer it cannot use means (act: success false).
          return {
            data: fitted.value,
            usage,
            inferenceTimeMs,
            attempts: attempt,
            modelName: client.modelName,
            repairs: fitted.repairs,
            problem: rejected,
          };
        }
        problem = checked.problem;
      }

      if (attempt === 1) {
        this.log.info(
          "llm",
          `The ${operation} answer did not fit (${this.describe(problem)}); asking ${client.modelName} once more.`,
        );
        messages = [
          ...messages,
          // Some providers refuse an empty assistant message.
          { role: "assistant", content: clip(problem.answerText, RETRY_ANSWER_LIMIT) || "(no answer)" },
          { role: "user", content: retryMessage(problem, schema !== undefined) },
        ];
        // Cut off at the output limit: the same question under a larger one answers whole on a
        // server that cut because the limit it had was too small.
        if (problem.kind === "unusable" && problem.cutOff) {
          maxOutputTokens = Math.max(maxOutputTokens ?? 0, raisedOutputLimit(problem.cutOff));
          this.outputLimits.set(client, maxOutputTokens);
        }
      }
    }

    // Two answers, neither usable. Only extract's schema is the caller's own; for act, observe and
    // the agent a mismatch means the model's answer could not be used (spec section 7).
    if (problem?.kind === "mismatch" && operation === "extract") {
      throw new ZodSchemaValidationError(
        problem.mismatch.path,
        problem.mismatch.reason,
        problem.mismatch.issues,
      );
    }
    const reason =
      problem?.kind === "unusable" || problem?.kind === "rejected"
        ? problem.reason
        : problem?.kind === "mismatch"
          ? `the answer does not match the ${operation} answer schema at ${problem.mismatch.path || "(root)"}: ${problem.mismatch.reason}`
          : "no usable answer";
    throw new LLMResponseError(operation, `${reason} (asked twice)`, {
      cause: problem?.kind === "unusable" ? problem.cause : undefined,
    });
  }

  private async check(
    answer: unknown,
    schema: ResponseSchema<unknown> | undefined,
    operation: ModelOperation,
    normalize: ((answer: unknown) => unknown) | undefined,
  ): Promise<{ ok: true; value: unknown; repairs: string[] } | { ok: false; problem: AnswerProblem }> {
    if (!schema) {
      const text =
        typeof answer === "string"
          ? splitThinking(answer).answer
          : answer === undefined || answer === null
            ? ""
            : JSON.stringify(answer);
      if (text.trim() === "") {
        return {
          ok: false,
          problem: {
            kind: "unusable",
            reason: "the model returned an empty answer",
            answerText: "",
            cause: undefined,
          },
        };
      }
      return { ok: true, value: text, repairs: [] };
    }
    // A custom client may hand back the raw text instead of parsed JSON.
    let value = answer;
    const answerText = answerTextOf(answer);
    const repairs: string[] = [];
    if (typeof answer === "string") {
      const parsed = readJsonAnswer(answer);
      if (!parsed.ok)
        return {
          ok: false,
          problem: { kind: "unusable", reason: parsed.reason, answerText, cause: undefined },
        };
      value = parsed.value;
      repairs.push(...parsed.repairs);
    } else if (answer === undefined || answer === null) {
      return {
        ok: false,
        problem: {
          kind: "unusable",
          reason: "the model returned no answer",
          answerText: "",
          cause: undefined,
        },
      };
    }
    const coerced = coerceToSchema(value, schema.wireSchema);
    value = coerced.value;
    repairs.push(...coerced.repairs);
    if (normalize) value = normalize(value);
    let result: Awaited<ReturnType<ResponseSchema<unknown>["parse"]>>;
    try {
      result = await schema.parse(value);
    } catch (error) {
      // A refinement or transform in the caller's schema threw.
      throw new LLMResponseError(
        operation,
        `checking the answer against the schema failed: ${String(error)}`,
        { cause: error },
      );
    }
    if (result.ok) return { ok: true, value: result.value, repairs };
    return { ok: false, problem: { kind: "mismatch", mismatch: result, answerText } };
  }

  private describe(problem: AnswerProblem): string {
    if (problem.kind === "unusable" || problem.kind === "rejected") return problem.reason;
    return `${problem.mismatch.path || "(root)"}: ${problem.mismatch.reason}`;
  }

  private cancelled(signal: AbortSignal, operation: ModelOperation): ServiceError {
    const reason: unknown = signal.reason;
    if (reason instanceof ServiceError) return reason;
    return new ServiceCancelledError(`The ${operation} model call was cancelled.`, { cause: reason });
  }

  private transportError(
    error: unknown,
    operation: ModelOperation,
    signal: AbortSignal | undefined,
  ): ServiceError {
    if (signal?.aborted) return this.cancelled(signal, operation);
    if (error instanceof ServiceError) {
      if (error instanceof LLMResponseError || error instanceof UnsupportedModelError) {
        // Provider messages can echo what was sent; make sure no registered secret survives.
        const message = this.log.redactor.redact(error.message);
        if (message !== error.message) error.message = message;
      }
      return error;
    }
    const message = error instanceof Error ? error.message : String(error);
    return new LLMResponseError(operation, this.log.redactor.redact(`the llmClient failed: ${message}`), {
      cause: error,
    });
  }

  /** Metrics are recorded by the caller; this logs the call and writes its inference file. */
  private async account(record: {
    operation: ModelOperation;
    model: string;
    attempt: number;
    startedAt: string;
    inferenceTimeMs: number;
    messages: LLMMessage[];
    schema?: Record<string, unknown>;
    usage: LLMUsage;
    answer?: unknown;
    error?: string;
    repairs?: string[];
  }): Promise<void> {
    const { operation, model, attempt, inferenceTimeMs, usage } = record;
    this.log.info(
      "llm",
      `${operation}: ${model} answered in ${inferenceTimeMs} ms${attempt > 1 ? ` (attempt ${attempt})` : ""}`,
      {
        model,
        operation,
        attempt,
        inferenceTimeMs,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        reasoningTokens: usage.reasoningTokens,
        cachedInputTokens: usage.cachedInputTokens,
        ...(record.error ? { problem: record.error } : {}),
      },
    );
    if (this.log.enabled(2)) {
      this.log.debug("llm", `${operation} prompt and answer`, {
        messages: messagesWithoutImages(record.messages),
        ...(record.schema ? { schema: record.schema } : {}),
        answer: record.answer,
      });
    }
    if (this.fileLog) {
      try {
        await this.fileLog.write(record);
      } catch (error) {
        this.log.warn("llm", `Could not write the inference file to ${this.fileLog.dir}: ${String(error)}`);
      }
    }
  }
}
