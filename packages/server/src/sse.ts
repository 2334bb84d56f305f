// One way to run an operation for both kinds of client: a plain JSON answer, or Server-Sent Events
// when the client asked for a stream (`x-stream-response: true` or `streamResponse: true`).
//
// A stream is `data: {json}\n\n` blocks (no `event:` line), each `{ type, id, data }`: system
// `starting`, `connected`, `running`, then log events while the operation runs, then system
// `finished` (with `result`, what `data.result` of the JSON answer would be) or `error`, and the
// response ends. Either way, a client that goes away aborts `signal`, so the operation can stop.

import { randomUUID } from "node:crypto";
import { ServiceCancelledError } from "deckhand";
import type { FastifyReply, FastifyRequest } from "fastify";
import { errorForLog, toPublicError } from "./error-handler.ts";
import type { ApiError } from "./errors.ts";
import type { ErrorDetails } from "./schemas/common.ts";
import type { StreamEvent, SystemEventStatus } from "./schemas/stream-events.ts";
import { secretsOf } from "./secrets.ts";

export interface OperationControls {
  /** Reports progress: a log event to a streaming client, a debug line in the service log. */
  log(message: string): void;
  /** Aborted (with a ServiceCancelledError) when the client disconnects before the answer is complete. */
  signal: AbortSignal;
  /** Whether the answer is being streamed. */
  streaming: boolean;
}

/** What an operation returns: the `data` of the JSON answer; `result` is what a stream's `finished` carries. */
export interface OperationData {
  result: unknown;
}

/** Whether the client asked for Server-Sent Events. */
export function wantsStream(request: FastifyRequest): boolean {
  const header = request.headers["x-stream-response"];
  if (typeof header === "string" && header.toLowerCase() === "true") return true;
  const body = request.body as { streamResponse?: unknown } | null | undefined;
  return body?.streamResponse === true;
}

interface Tracking {
  /** Aborts when the client goes away before the answer is complete, or the service stops it. */
  signal: AbortSignal;
  dispose(): void;
}

/**
 * Aborts the returned signal when the client's connection closes before the response finished,
 * and registers the operation with the service's in-flight list: at shutdown `answerShutdown` is
 * called (with the 503 to answer) and then the signal aborts.
 */
function track(
  request: FastifyRequest,
  reply: FastifyReply,
  answerShutdown: (reason: ApiError) => void,
): Tracking {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) {
      request.log.info("client disconnected; cancelling the operation");
      controller.abort(new ServiceCancelledError("The client disconnected before the operation finished."));
    }
  };
  reply.raw.on("close", onClose);
  const untrack = request.server.deckhand?.inflight.add((reason) => {
    request.log.info("the service is shutting down; stopping the operation");
    try {
      answerShutdown(reason);
    } finally {
      controller.abort(new ServiceCancelledError("The service is shutting down."));
    }
  });
  return {
    signal: controller.signal,
    dispose: () => {
      reply.raw.off("close", onClose);
      untrack?.();
    },
  };
}

function frame(event: StreamEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

function systemEvent(
  status: SystemEventStatus,
  extra: { result?: unknown; error?: string; code?: string; details?: ErrorDetails } = {},
): StreamEvent {
  return { type: "system", id: randomUUID(), data: { status, ...extra } };
}

/**
 * Runs `operation` and answers with its data: `{ success: true, data }` as JSON, or a stream of
 * events when the client asked for one. Errors become an error response (JSON) or an `error` event.
 */
export async function runOperation<D extends OperationData>(
  request: FastifyRequest,
  reply: FastifyReply,
  operation: (controls: OperationControls) => Promise<D>,
): Promise<void> {
  if (wantsStream(request)) return streamOperation(request, reply, operation);

  const { signal, dispose } = track(request, reply, (reason) => {
    if (!reply.sent) void reply.status(reason.statusCode).send(toPublicError(reason, request.id).body);
  });
  try {
    const data = await operation({
      log: (message) => request.log.debug({ operationLog: message }, "operation log"),
      signal,
      streaming: false,
    });
    if (!reply.sent) await reply.send({ success: true, data });
  } catch (error) {
    // Answered already (the service is shutting down): what the stopped operation threw is moot.
    if (!reply.sent) throw error;
  } finally {
    dispose();
  }
}

async function streamOperation<D extends OperationData>(
  request: FastifyRequest,
  reply: FastifyReply,
  operation: (controls: OperationControls) => Promise<D>,
): Promise<void> {
  const started = performance.now();
  const res = reply.raw;
  const send = (event: StreamEvent) => {
    if (!res.writableEnded && !res.destroyed) res.write(frame(event));
  };
  let outcome = "finished";
  // At shutdown the client gets the stream's final event at once, whatever the operation does next.
  const { signal, dispose } = track(request, reply, (reason) => {
    outcome = "stopped by shutdown";
    const { error: message, code } = toPublicError(reason, request.id, 0, secretsOf(request)).body;
    send(systemEvent("error", { error: message, code }));
    if (!res.writableEnded) res.end();
  });
  // From here on the route writes the response itself; Fastify's serialiser and hooks stand aside.
  reply.hijack();
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // Reverse proxies (nginx) would otherwise hold events back until the response ends.
    "x-accel-buffering": "no",
  });

  send(systemEvent("starting"));
  send(systemEvent("connected"));
  send(systemEvent("running"));
  try {
    const data = await operation({
      log: (message) => send({ type: "log", id: randomUUID(), data: { status: "running", message } }),
      signal,
      streaming: true,
    });
    if (signal.aborted) outcome = outcome === "finished" ? "cancelled" : outcome;
    else send(systemEvent("finished", { result: data.result }));
  } catch (error) {
    if (signal.aborted) {
      outcome = outcome === "finished" ? "cancelled" : outcome;
    } else {
      outcome = "error";
      const secrets = secretsOf(request);
      const answer = toPublicError(error, request.id, 0, secrets);
      if (answer.internal)
        request.log.error({ err: errorForLog(error, secrets) }, "streamed operation failed");
      const { error: message, code, details } = answer.body;
      send(systemEvent("error", { error: message, code, ...(details ? { details } : {}) }));
    }
  } finally {
    dispose();
    if (!res.writableEnded) res.end();
  }
  request.log.info({ outcome, responseTime: performance.now() - started }, "stream completed");
}
