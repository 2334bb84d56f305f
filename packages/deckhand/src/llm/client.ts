// The contract between the operations and a model. Deckhand's own AI SDK client implements it,
// and so can a user who brings any other model (`llmClient` option).

/** A part of a user message: text, or an image (PNG bytes or base64). */
export type LLMContentPart =
  | { type: "text"; text: string }
  | { type: "image"; image: Uint8Array | string; mediaType?: string };

export interface LLMMessage {
  role: "system" | "user" | "assistant";
  content: string | LLMContentPart[];
}

/** A JSON Schema (draft 2020-12 / 7 subset) describing the object the model must return. */
export type JSONSchema = Record<string, unknown>;

export interface LLMUsage {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

export interface LLMRequest {
  /** Which operation asks: recorded in metrics, useful for routing. */
  operation: "act" | "extract" | "observe" | "agent";
  messages: LLMMessage[];
  /** When present the answer must be an object matching it; when absent the answer is text. */
  schema?: JSONSchema;
  /** Name for the schema (some providers want one). */
  schemaName?: string;
  signal?: AbortSignal;
  /**
   * A limit on the answer's output tokens. Unset on a first question (the server's own limit
   * applies); set when the question is asked again because the first answer was cut off at the
   * output token limit. A client may ignore it.
   */
  maxOutputTokens?: number;
}

export interface LLMResponse<T = unknown> {
  /** The parsed object (with a schema) or the text (without). */
  data: T;
  usage: LLMUsage;
}

/**
 * Bring your own model: implement `generate` and pass the object as `llmClient`.
 * Deckhand validates `data` against the schema it asked for and retries once on a mismatch.
 */
export interface LLMClient {
  /** Shown in logs and metrics, e.g. "my-org/llama-3-70b". */
  readonly modelName: string;
  /** Whether the model accepts images (extract with `screenshot: true`). Default false. */
  readonly supportsVision?: boolean;
  generate<T = unknown>(request: LLMRequest): Promise<LLMResponse<T>>;
}
