// The shapes a test sees when it scripts the model server: the parsed request, the rules, and the
// replies. Kept free of HTTP details so a test reads as "when the model is asked X, it answers Y".

/** Token counts the server reports for one answer. */
export interface ScriptedUsage {
  /** All input tokens, cached ones included (OpenAI counts them this way). */
  promptTokens: number;
  /** All output tokens, reasoning ones included. */
  completionTokens: number;
  /** The part of `promptTokens` served from the provider's prompt cache. */
  cachedPromptTokens: number;
  /** The part of `completionTokens` spent on reasoning. */
  reasoningTokens: number;
}

/** The numbers every answer reports unless its rule (or the server's `defaultUsage`) says otherwise. */
export const DEFAULT_SCRIPTED_USAGE: Readonly<ScriptedUsage> = Object.freeze({
  promptTokens: 100,
  completionTokens: 20,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
});

/** One message of a request, reduced to its text. Images are counted, not kept. */
export interface ScriptedMessage {
  /** `system`, `developer`, `user`, `assistant` or `tool`. */
  role: string;
  text: string;
  imageCount: number;
}

export interface ScriptedTool {
  name: string;
  description?: string;
  /** The tool's input JSON Schema. */
  parameters?: Record<string, unknown>;
}

/** How the request asked for its answer to be shaped. */
export type ScriptedResponseFormat = "text" | "json_object" | "json_schema";

/** A model request as the server understood it. Every request is kept in `server.requests`. */
export interface ScriptedRequest {
  /** 1-based position among all requests the server received (failed ones included). */
  index: number;
  /** Which OpenAI API the provider code used. */
  api: "chat" | "responses";
  path: string;
  model: string;
  stream: boolean;
  messages: ScriptedMessage[];
  /** Text of every system (and developer) message, joined by blank lines. */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
  /** Text of every message, in order, joined by blank lines. String matchers are tested against it. */
  text: string;
  imageCount: number;
  responseFormat: ScriptedResponseFormat;
  /** The JSON Schema the answer must follow (response_format / text.format), if the request gave one. */
  schema: Record<string, unknown> | undefined;
  /** The schema's name as the provider code sent it. */
  schemaName: string | undefined;
  tools: ScriptedTool[];
  /** The name of the tool the request forces, if it forces one. */
  forcedTool: string | undefined;
  /** Request headers, lower-cased names. */
  headers: Record<string, string>;
  /** The `authorization` header as sent, e.g. `Bearer sk-test-1`. */
  authorization: string | undefined;
  /** The bearer token of `authorization` (or the `x-api-key` / `api-key` header). */
  apiKey: string | undefined;
  /** The JSON body exactly as received. */
  body: Record<string, unknown>;
}

/** Which requests a rule answers: a substring (case-insensitive) or RegExp tested against
 * `request.text`, or any predicate on the parsed request. */
export type ScriptedMatcher = string | RegExp | ((request: ScriptedRequest) => boolean);

/** A JSON value (documentation type: any JSON-encodable value is accepted where it appears). */
export type ScriptedJson =
  | string
  | number
  | boolean
  | null
  | ScriptedJson[]
  | { [key: string]: ScriptedJson };

/**
 * What a rule answers with: a string is the message content as-is; any other object or array is
 * JSON-encoded (what a model does for a json_schema request); a `ScriptedReply` gives tool calls,
 * HTTP errors, raw bodies, or content with its own usage.
 */
export type ScriptedAnswer = string | object | ScriptedReplyLike;

/** A fixed answer, or a function of the request that returns one. */
export type ScriptedResponder =
  | ScriptedAnswer
  | ((request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

export interface ScriptedRuleOptions {
  /** Usage reported with this rule's answers (missing numbers come from the server default). */
  usage?: Partial<ScriptedUsage>;
  /** Milliseconds to wait before answering. */
  latencyMs?: number;
}

/** A rule added with `on` or `once`. */
export interface ScriptedRule {
  /** How many requests this rule has answered. */
  readonly calls: number;
  /** Takes the rule out of the script. */
  remove(): void;
}

/** Marker shared by the `ScriptedReply` kinds (kept structural so types stay simple). */
export interface ScriptedReplyLike {
  readonly scriptedReply: "content" | "tool-calls" | "http";
}
