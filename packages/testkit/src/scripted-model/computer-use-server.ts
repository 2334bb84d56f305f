// A scripted computer-use model on 127.0.0.1, speaking three providers' wires on one port:
// OpenAI's Responses API (POST /v1/responses), Anthropic's Messages API (POST /v1/messages) and
// Gemini's generateContent (POST /v1beta/models/{model}:generateContent). A test queues the turns
// the "model" answers with, in the provider's own terms, points the real client code at
// `openaiBaseURL` / `anthropicBaseURL` / `googleBaseURL`, and checks what arrived.
//
// ```ts
// const model = await startComputerUseModel();
// model.queue("anthropic",
//   { toolUses: [{ action: "left_click", coordinate: [200, 150] }] },
//   (request) => ({ text: `saw ${request.screenshots.length} screenshot(s)` }),
// );
// ... runComputerUse({ model: { provider: "anthropic", modelName: "claude-sonnet-4-5", baseURL: model.anthropicBaseURL } })
// expect(model.requests[1].screenshots).toHaveLength(1);
// ```

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { listenOnFreePort, trackConnections } from "../listen.ts";
import { messageBody, readMessagesRequest } from "./anthropic-wire.ts";
import type {
  AnthropicComputerTurn,
  ComputerUseHttpError,
  ComputerUseProvider,
  ComputerUseRequest,
  ComputerUseResponder,
  ComputerUseTurn,
  GeminiComputerTurn,
  Json,
  OpenAIComputerTurn,
} from "./computer-use-types.ts";
import { generateContentBody, readGenerateContentRequest } from "./gemini-wire.ts";
import { readResponsesRequest, responsesBody } from "./openai-responses-wire.ts";

type Scripted = ComputerUseTurn | ComputerUseHttpError | ComputerUseResponder;

export class ScriptedComputerUseModel {
  /** Every request received, in order (failed ones included). */
  readonly requests: ComputerUseRequest[] = [];
  private readonly server: Server;
  private readonly closeServer: () => Promise<void>;
  private readonly queues: Record<ComputerUseProvider, Scripted[]> = {
    openai: [],
    anthropic: [],
    google: [],
  };
  private readonly waiters = new Set<() => void>();
  private port = 0;
  private nextId = 1;
  /** Milliseconds each answer waits (to test aborts while the model "thinks"). */
  latencyMs = 0;

  constructor() {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, { error: { message: `Scripted computer-use server failed: ${String(error)}` } });
        else res.end();
      });
    });
    this.closeServer = trackConnections(this.server);
  }

  /** @internal Use {@link startComputerUseModel}. */
  async listen(): Promise<void> {
    this.port = await listenOnFreePort(this.server, "127.0.0.1");
  }

  get openaiBaseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get anthropicBaseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get googleBaseURL(): string {
    return `http://127.0.0.1:${this.port}/v1beta`;
  }

  /** Queues answers for the provider's next requests, in order. A function answers from the request. */
  queue(
    provider: "openai",
    ...turns: (OpenAIComputerTurn | ComputerUseHttpError | ComputerUseResponder)[]
  ): void;
  queue(
    provider: "anthropic",
    ...turns: (AnthropicComputerTurn | ComputerUseHttpError | ComputerUseResponder)[]
  ): void;
  queue(
    provider: "google",
    ...turns: (GeminiComputerTurn | ComputerUseHttpError | ComputerUseResponder)[]
  ): void;
  queue(provider: ComputerUseProvider, ...turns: Scripted[]): void {
    this.queues[provider].push(...turns);
  }

  /** Forgets every queued answer and every recorded request, and answers at once again. */
  reset(): void {
    for (const queue of Object.values(this.queues)) queue.length = 0;
    this.requests.length = 0;
    this.latencyMs = 0;
  }

  /** Answers queued and not asked for yet. */
  pending(provider: ComputerUseProvider): number {
    return this.queues[provider].length;
  }

  /** Resolves once `count` requests have arrived. */
  async waitForRequests(count: number): Promise<void> {
    while (this.requests.length < count) await new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  async close(): Promise<void> {
    await this.closeServer();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const gemini = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(path);
    const provider: ComputerUseProvider | undefined =
      path === "/v1/responses"
        ? "openai"
        : path === "/v1/messages"
          ? "anthropic"
          : gemini
            ? "google"
            : undefined;
    if (req.method !== "POST" || !provider) {
      sendJson(res, 404, {
        error: {
          message: `The scripted computer-use server has no ${req.method} ${path}: it serves POST /v1/responses, /v1/messages and /v1beta/models/{model}:generateContent.`,
        },
      });
      return;
    }
    const body = JSON.parse(await readBody(req)) as Json;
    const read =
      provider === "openai"
        ? readResponsesRequest(body)
        : provider === "anthropic"
          ? readMessagesRequest(body)
          : readGenerateContentRequest(body, decodeURIComponent(gemini?.[1] ?? ""));
    const request: ComputerUseRequest = {
      index: this.requests.length + 1,
      path,
      headers: req.headers,
      body,
      ...read,
    };
    this.requests.push(request);
    for (const wake of this.waiters) wake();
    this.waiters.clear();

    const next = this.queues[provider].shift();
    if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
    if (!next) {
      sendJson(res, 500, {
        error: {
          message: `No scripted ${provider} turn is queued for request ${request.index}. Queue one with model.queue("${provider}", ...).`,
        },
      });
      return;
    }
    const answer = typeof next === "function" ? next(request) : next;
    if ("httpError" in answer) {
      sendJson(res, answer.httpError.status, {
        ...(provider === "anthropic" ? { type: "error" } : {}),
        error: { type: "api_error", message: answer.httpError.message, code: answer.httpError.status },
      });
      return;
    }
    const id = () => String(this.nextId++).padStart(6, "0");
    const out =
      provider === "openai"
        ? responsesBody(answer as OpenAIComputerTurn, request.model, id)
        : provider === "anthropic"
          ? messageBody(
              answer as AnthropicComputerTurn,
              request.model,
              id,
              request.tools.some((t) => t.type === "computer_toolset_20260801"),
            )
          : generateContentBody(answer as GeminiComputerTurn, request.model);
    sendJson(res, 200, out);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Starts a scripted computer-use model server on 127.0.0.1 with a free port. Close it with `close()`. */
export async function startComputerUseModel(): Promise<ScriptedComputerUseModel> {
  const model = new ScriptedComputerUseModel();
  await model.listen();
  return model;
}
