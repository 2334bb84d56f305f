// A scripted OpenAI-compatible model server on 127.0.0.1. Tests point the real provider code at
// `baseURL`, add rules that say what the "model" answers, and then check what was asked.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Outcome, writeChatCompletion, writeResponse } from "./openai-wire.ts";
import { parseModelRequest } from "./parse-request.ts";
import { isScriptedReply, ScriptedReply } from "./replies.ts";
import { SloppyLayer, type SloppyOptions } from "./sloppy.ts";
import {
  DEFAULT_SCRIPTED_USAGE,
  type ScriptedAnswer,
  type ScriptedMatcher,
  type ScriptedRequest,
  type ScriptedResponder,
  type ScriptedRule,
  type ScriptedRuleOptions,
  type ScriptedUsage,
} from "./types.ts";

interface Rule extends ScriptedRule {
  matcher: ScriptedMatcher;
  responder: ScriptedResponder;
  options: ScriptedRuleOptions;
  once: boolean;
  calls: number;
}

interface PendingFailure {
  status: number;
  message: string;
  retryAfterMs: number;
}

export interface ScriptedModelOptions {
  /** Usage reported when a rule gives none. Default {@link DEFAULT_SCRIPTED_USAGE}. */
  defaultUsage?: Partial<ScriptedUsage>;
  /** Milliseconds every answer waits, unless its rule says otherwise. Default 0. */
  latencyMs?: number;
  /**
   * Make the scripted (perfect) answers sloppy the way small and local models and their servers
   * do: fences, prose, think blocks, ids as strings, method synonyms, 400s for response_format or
   * tools, tool calls as text... (sloppy.ts). Applies to object answers; a string answer or a
   * `ScriptedReply` a test gives is sent as it is.
   */
  sloppy?: SloppyOptions;
}

/**
 * The scripted model. Rules are tried newest first; the first whose matcher accepts the request
 * answers it. A request no rule matches gets a 500 naming its last user message, so a test that
 * forgot a rule fails with a clear error rather than a hang.
 *
 * ```ts
 * const model = await startScriptedModel();
 * // extract: the schema Deckhand sends is the caller's schema (wrapped in { value } when it is not an object)
 * model.on("list the prices", { items: [{ name: "Tea", price: 3.5 }] });
 * // act / observe: answer with whatever the operation's schema asks for; inspect request.schema
 * model.once((r) => r.schemaName === "act", (r) => ({ elementId: 12, method: "click", arguments: [] }));
 * const deckhand = new Deckhand({ env: "LOCAL", model: { modelName: "openai/gpt-4.1-mini", apiKey: "sk-test", baseURL: model.baseURL } });
 * ...
 * expect(model.requests[0].system).toContain("custom instructions");
 * await model.close();
 * ```
 */
export class ScriptedModel {
  /** Every model request received (chat and responses), in order, failed ones included. */
  readonly requests: ScriptedRequest[] = [];
  /** Usage reported when neither the rule nor the reply gives a number. */
  defaultUsage: ScriptedUsage;
  /** Milliseconds every answer waits, unless its rule says otherwise. */
  latencyMs: number;
  /** The sloppy layer, when the server was started with `sloppy` (its `records` say what it did). */
  readonly sloppy: SloppyLayer | undefined;

  private readonly server: Server;
  private readonly rules: Rule[] = [];
  private readonly failures: PendingFailure[] = [];
  private port = 0;
  private nextId = 1;

  constructor(options: ScriptedModelOptions = {}) {
    this.defaultUsage = { ...DEFAULT_SCRIPTED_USAGE, ...options.defaultUsage };
    this.latencyMs = options.latencyMs ?? 0;
    this.sloppy = options.sloppy ? new SloppyLayer(options.sloppy) : undefined;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendError(res, 500, `Scripted model server failed: ${String(error)}`);
        else res.end();
      });
    });
  }

  /** @internal Use {@link startScriptedModel}. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Origin plus `/v1`, the form the OpenAI providers expect as `baseURL`. */
  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** How many model requests arrived (same as `requests.length`). */
  get callCount(): number {
    return this.requests.length;
  }

  get lastRequest(): ScriptedRequest | undefined {
    return this.requests.at(-1);
  }

  /**
   * Answers every matching request with `responder` until the rule is removed. A string answer is
   * sent as the message content as-is (so `"{broken"` is invalid JSON on purpose); an object or
   * array is JSON-encoded, which is what a model does for a json_schema request. When the request
   * forces a tool, an object answer becomes that tool's call input.
   */
  on(
    matcher: ScriptedMatcher,
    responder: ScriptedResponder,
    options: ScriptedRuleOptions = {},
  ): ScriptedRule {
    return this.addRule(matcher, responder, options, false);
  }

  /** Like {@link on}, but the rule answers one request and is then removed. */
  once(
    matcher: ScriptedMatcher,
    responder: ScriptedResponder,
    options: ScriptedRuleOptions = {},
  ): ScriptedRule {
    return this.addRule(matcher, responder, options, true);
  }

  /** Removes every rule and every pending `failNext`. Recorded requests stay. */
  clear(): void {
    this.rules.length = 0;
    this.failures.length = 0;
  }

  /** Forgets the recorded requests. */
  resetRequests(): void {
    this.requests.length = 0;
  }

  /**
   * The next `count` model requests fail with `status` (default 500) before any rule is tried.
   * `retryAfterMs` (default 0) is sent as `retry-after-ms`, which the AI SDK honours, so retry
   * tests do not wait for its default back-off.
   */
  failNext(count: number, status = 500, options: { message?: string; retryAfterMs?: number } = {}): void {
    for (let i = 0; i < count; i++) {
      this.failures.push({
        status,
        message: options.message ?? `Scripted failure ${i + 1} of ${count} (failNext)`,
        retryAfterMs: options.retryAfterMs ?? 0,
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private addRule(
    matcher: ScriptedMatcher,
    responder: ScriptedResponder,
    options: ScriptedRuleOptions,
    once: boolean,
  ): ScriptedRule {
    const rules = this.rules;
    const rule: Rule = {
      matcher,
      responder,
      options,
      once,
      calls: 0,
      remove() {
        const at = rules.indexOf(rule);
        if (at >= 0) rules.splice(at, 1);
      },
    };
    rules.push(rule);
    return rule;
  }

  private findRule(request: ScriptedRequest): Rule | undefined {
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i];
      if (rule && matches(rule.matcher, request)) return rule;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/v1/models") {
      sendJsonBody(res, 200, {
        object: "list",
        data: [{ id: "scripted-model", object: "model", created: 0, owned_by: "deckhand-testkit" }],
      });
      return;
    }
    const api = path === "/v1/chat/completions" ? "chat" : path === "/v1/responses" ? "responses" : undefined;
    if (req.method !== "POST" || !api) {
      sendError(
        res,
        404,
        `The scripted model server has no ${req.method} ${path}. It serves POST /v1/chat/completions, POST /v1/responses and GET /v1/models.`,
      );
      return;
    }

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(await readBody(req));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch (error) {
      sendError(res, 400, `The request body is not a JSON object: ${String(error)}`);
      return;
    }

    const request = parseModelRequest(this.requests.length + 1, api, path, body, req.headers);
    this.requests.push(request);

    const failure = this.failures.shift();
    if (failure) {
      sendReply(
        res,
        ScriptedReply.httpError(failure.status, failure.message, { retryAfterMs: failure.retryAfterMs }),
      );
      return;
    }

    const refusal = this.sloppy?.refusal(request);
    if (refusal) {
      sendReply(res, ScriptedReply.httpError(400, refusal, { code: "invalid_request_error" }));
      return;
    }

    const rule = this.findRule(request);
    if (!rule) {
      const last =
        request.lastUserText.length > 300 ? `${request.lastUserText.slice(0, 300)}...` : request.lastUserText;
      sendReply(
        res,
        ScriptedReply.httpError(
          500,
          `No scripted answer matches this request (model ${request.model}, schema ${request.schemaName ?? "none"}). ` +
            `Last user message: ${JSON.stringify(last)}. Add a rule with server.on(matcher, answer).`,
          { code: "no_scripted_answer" },
        ),
      );
      return;
    }
    rule.calls++;
    if (rule.once) rule.remove();

    const latency = rule.options.latencyMs ?? this.latencyMs;
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));

    let answer: ScriptedAnswer;
    try {
      answer = typeof rule.responder === "function" ? await rule.responder(request) : rule.responder;
    } catch (error) {
      sendError(
        res,
        500,
        `The scripted responder threw: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }

    if (isScriptedReply(answer) && answer.scriptedReply === "http") {
      sendReply(res, answer);
      return;
    }
    if (this.sloppy && !isScriptedReply(answer) && typeof answer === "object" && !request.forcedTool) {
      const { text, truncated, completionTokens } = this.sloppy.answer(request, answer);
      answer = ScriptedReply.content(text, {
        finishReason: truncated ? "length" : "stop",
        usage: { completionTokens },
      });
    }
    const { outcome, usage: replyUsage } = this.toOutcome(request, answer);
    const usage = { ...this.defaultUsage, ...rule.options.usage, ...replyUsage };
    const id = String(this.nextId++);
    if (api === "chat") writeChatCompletion(res, request, outcome, usage, `chatcmpl-${id}`);
    else writeResponse(res, request, outcome, usage, id);
  }

  private toOutcome(
    request: ScriptedRequest,
    answer: ScriptedAnswer,
  ): { outcome: Outcome; usage: Partial<ScriptedUsage> | undefined } {
    if (typeof answer === "string")
      return { outcome: { kind: "content", content: answer, finishReason: "stop" }, usage: undefined };
    if (isScriptedReply(answer)) {
      if (answer.scriptedReply === "content") {
        return {
          outcome: {
            kind: "content",
            content: answer.content,
            finishReason: answer.options.finishReason ?? "stop",
            ...(answer.options.reasoning ? { reasoning: answer.options.reasoning } : {}),
          },
          usage: answer.options.usage,
        };
      }
      if (answer.scriptedReply === "tool-calls") {
        const asText = this.sloppy?.toolCallsAsText(
          request,
          answer.calls.map((c) => ({
            name: c.name,
            arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
          })),
        );
        if (asText !== undefined)
          return { outcome: { kind: "content", content: asText, finishReason: "stop" }, usage: answer.usage };
        return {
          outcome: {
            kind: "tool-calls",
            calls: answer.calls.map((c, i) => ({
              id: c.id ?? `call_${this.nextId}_${i}`,
              name: c.name,
              arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
            })),
          },
          usage: answer.usage,
        };
      }
    }
    const json = JSON.stringify(answer);
    if (request.forcedTool) {
      return {
        outcome: {
          kind: "tool-calls",
          calls: [{ id: `call_${this.nextId}`, name: request.forcedTool, arguments: json }],
        },
        usage: undefined,
      };
    }
    return { outcome: { kind: "content", content: json, finishReason: "stop" }, usage: undefined };
  }
}

function matches(matcher: ScriptedMatcher, request: ScriptedRequest): boolean {
  if (typeof matcher === "string") return request.text.toLowerCase().includes(matcher.toLowerCase());
  if (matcher instanceof RegExp) {
    matcher.lastIndex = 0;
    return matcher.test(request.text);
  }
  return matcher(request);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJsonBody(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendReply(
  res: ServerResponse,
  reply: { status: number; body: string; headers: Record<string, string> },
): void {
  res.writeHead(reply.status, { ...reply.headers, "content-length": Buffer.byteLength(reply.body) });
  res.end(reply.body);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendReply(res, ScriptedReply.httpError(status, message));
}

/** Starts a scripted model server on 127.0.0.1 with a free port. Close it with `close()`. */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const model = new ScriptedModel(options);
  await model.listen();
  return model;
}
