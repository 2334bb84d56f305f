// Answers beyond "the assistant says this": tool calls, HTTP failures, raw (broken) bodies, and an
// answer with its own usage or finish reason.

import type { ScriptedReplyLike, ScriptedUsage } from "./types.ts";

export interface ScriptedContentOptions {
  usage?: Partial<ScriptedUsage>;
  /** OpenAI finish reason; `length` makes the answer look truncated. Default `stop`. */
  finishReason?: "stop" | "length" | "content_filter";
  /** Text sent as the model's reasoning (chat `reasoning_content`), if any. */
  reasoning?: string;
}

/** The assistant's message content, with per-answer options. */
export class ScriptedContentReply implements ScriptedReplyLike {
  readonly scriptedReply = "content" as const;
  readonly content: string;
  readonly options: ScriptedContentOptions;

  constructor(content: string, options: ScriptedContentOptions = {}) {
    this.content = content;
    this.options = options;
  }
}

export interface ScriptedToolCall {
  name: string;
  /** The call's input; objects are JSON-encoded, a string is sent as-is (so it can be broken JSON). */
  arguments: string | object;
  id?: string;
}

/** The assistant calls tools instead of answering. */
export class ScriptedToolCallsReply implements ScriptedReplyLike {
  readonly scriptedReply = "tool-calls" as const;
  readonly calls: ScriptedToolCall[];
  readonly usage: Partial<ScriptedUsage> | undefined;

  constructor(calls: ScriptedToolCall[], usage?: Partial<ScriptedUsage>) {
    this.calls = calls;
    this.usage = usage;
  }
}

/** An HTTP response other than a normal answer: an API error, or a body the client cannot parse. */
export class ScriptedHttpReply implements ScriptedReplyLike {
  readonly scriptedReply = "http" as const;
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;

  constructor(status: number, body: string, headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export const ScriptedReply = {
  /** Answer `content` (a string as-is, anything else JSON-encoded) with its own usage or finish reason. */
  content(content: string | object, options?: ScriptedContentOptions): ScriptedContentReply {
    return new ScriptedContentReply(typeof content === "string" ? content : JSON.stringify(content), options);
  },

  /** Answer with tool calls, e.g. `ScriptedReply.toolCalls({ name: "click", arguments: { id: 3 } })`. */
  toolCalls(...calls: ScriptedToolCall[]): ScriptedToolCallsReply {
    return new ScriptedToolCallsReply(calls);
  },

  /**
   * An OpenAI-style error response (`{ error: { message, type, code } }`) with this status.
   * 408, 409, 429 and 5xx are retried by the AI SDK; `retryAfterMs` (default 0) keeps that fast.
   */
  httpError(
    status: number,
    message: string,
    options: { retryAfterMs?: number; code?: string } = {},
  ): ScriptedHttpReply {
    const body = JSON.stringify({
      error: {
        message,
        type: status >= 500 ? "server_error" : "invalid_request_error",
        code: options.code ?? null,
      },
    });
    return new ScriptedHttpReply(status, body, {
      "content-type": "application/json",
      "retry-after-ms": String(options.retryAfterMs ?? 0),
    });
  },

  /** A response with exactly this body (for example truncated JSON), status 200 unless given. */
  raw(body: string, status = 200, contentType = "application/json"): ScriptedHttpReply {
    return new ScriptedHttpReply(status, body, { "content-type": contentType });
  },
};

export function isScriptedReply(
  value: unknown,
): value is ScriptedContentReply | ScriptedToolCallsReply | ScriptedHttpReply {
  return (
    value instanceof ScriptedContentReply ||
    value instanceof ScriptedToolCallsReply ||
    value instanceof ScriptedHttpReply
  );
}
