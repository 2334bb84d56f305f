// One way to run an operation for both kinds of client: a plain JSON answer, or Server-Sent Events
// when the client asked for a stream (`x-stream-response: true` or `streamResponse: true`).
//
// A stream is blocks of one `data: {json}` line, each `{ type, id, data }`: system `starting`,
// `connected`, `running`, then log events (`message` is the log line object: category, message,
// level, auxiliary) while the operation runs, then system `finished` (with `result`, what
// `data.result` of the JSON answer would be, and `actionId`) or `error`, and the response ends.
// Each block starts with an `event: <status>` line, which the reference's generated SDKs read; only
// the reference's hand-written TypeScript client, which skips any block that does not start with
// `data: `, gets data-only blocks (see sdkExpectsEventNames). Either way, a client that goes away
// aborts `signal`, so the operation can stop.

import { randomUUID } from "node:crypto";
import { ServiceCancelledError } from "deckhand";
import type { FastifyReply, FastifyRequest } from "fastify";
import { errorForLog, toPublicError } from "./error-handler.ts";
import { type ApiError, keyRevoked } from "./errors.ts";
import type { ErrorDetails } from "./schemas/common.ts";
import type { StreamEvent, StreamLogLine, SystemEventStatus } from "./schemas/stream-events.ts";
import { secretsOf } from "./secrets.ts";

export interface OperationControls {
  /**
   * Reports progress: a log event to a streaming client, a debug line in the service log. A plain
   * message becomes a line of category "deckhand" at level 1.
   */
  log(message: string | StreamLogLine): void;
  /** Aborted (with a ServiceCancelledError) when the client disconnects before the answer is complete. */
  signal: AbortSignal;
  /** Whether the answer is being streamed. */
  streaming: boolean;
}

/**
 * What an operation returns: the `data` of the JSON answer; a stream's `finished` carries its
 * `result`, `actionId` and `cacheStatus`.
 */
export interface OperationData {
  result: unknown;
  actionId?: string | undefined;
  cacheStatus?: "HIT" | "MISS" | undefined;
}

/** The log line of a plain message. */
export function logLineOf(message: string | StreamLogLine): StreamLogLine {
  return typeof message === "string" ? { category: "deckhand", message, level: 1 } : message;
}

/**
 * Whether the stream's blocks get an `event: <status>` line. Every client gets one (the reference's
 * generated SDKs dispatch on it, its integration tests and any EventSource reader can use it), except
 * the reference's hand-written TypeScript client: it splits the body on blank lines and skips every
 * block that does not start with `data: `, so an `event:` line would hide every event from it, and no
 * framing serves both (see docs/compat.md). That client is told apart by the `x-bb-session-id` header
 * it sends with every request (`x-platform-session-id` under the spec's naming); a client may also
 * ask for data-only blocks itself with `x-stream-event-names: false`.
 */
export function sdkExpectsEventNames(request: FastifyRequest): boolean {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === "string" ? value.toLowerCase() : "";
  };
  const asked = header("x-stream-event-names");
  if (asked === "false") return false;
  if (asked === "true") return true;
  return !DATA_ONLY_CLIENT_HEADERS.some((name) => request.headers[name] !== undefined);
}

/** Headers only the reference's hand-written TypeScript client sends (see sdkExpectsEventNames). */
const DATA_ONLY_CLIENT_HEADERS = ["x-bb-session-id", "x-platform-session-id"];

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

/** Options of runOperation. */
export interface RunOptions {
  /**
   * The id of the API key the request came with: when it is revoked while the operation runs, the
   * operation is answered with 401 KEY_REVOKED (a stream's final `error` event) and stopped, and
   * the connection is closed once that answer is sent.
   */
  keyId?: string;
}

/**
 * Aborts the returned signal when the client's connection closes before the response finished,
 * and registers the operation with the service's in-flight list: at shutdown `answer` is called
 * (with the 503 to answer) and then the signal aborts. The same, with 401 KEY_REVOKED, when the
 * request's key (`keyId`) is revoked meanwhile.
 */
function track(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: (reason: ApiError) => void,
  keyId?: string,
): Tracking {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) {
      request.log.info("client disconnected; cancelling the operation");
      controller.abort(new ServiceCancelledError("The client disconnected before the operation finished."));
    }
  };
  reply.raw.on("close", onClose);
  let stopped = false;
  const stop = (reason: ApiError, why: string) => {
    if (stopped) return;
    stopped = true;
    request.log.info(`${why}; stopping the operation`);
    try {
      answer(reason);
    } finally {
      controller.abort(new ServiceCancelledError(reason.message));
    }
  };
  const untrack = request.server.deckhand?.inflight.add((reason) =>
    stop(reason, "the service is shutting down"),
  );
  const unwatch =
    keyId === undefined
      ? undefined
      : request.server.deckhand?.revocations.track(keyId, () => {
          // The final answer first, then nothing more on this connection for the revoked key.
          const socket = request.raw.socket;
          reply.raw.once("finish", () => socket?.end());
          stop(keyRevoked(), "the request's API key was revoked");
          if (reply.raw.writableFinished) socket?.end();
        });
  return {
    signal: controller.signal,
    dispose: () => {
      reply.raw.off("close", onClose);
      untrack?.();
      unwatch?.();
    },
  };
}

/** One event's block; with `named`, an `event: <status>` line before it (a log event's is `running`). */
function frame(event: StreamEvent, named: boolean): string {
  const data = `data: ${JSON.stringify(event)}\n\n`;
  return named ? `event: ${event.data.status}\n${data}` : data;
}

function systemEvent(
  status: SystemEventStatus,
  extra: {
    result?: unknown;
    actionId?: string;
    cacheStatus?: "HIT" | "MISS";
    error?: string;
    code?: string;
    details?: ErrorDetails;
  } = {},
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
  options: RunOptions = {},
): Promise<void> {
  if (wantsStream(request)) return streamOperation(request, reply, operation, options);

  const { signal, dispose } = track(
    request,
    reply,
    (reason) => {
      if (!reply.sent) void reply.status(reason.statusCode).send(toPublicError(reason, request.id).body);
    },
    options.keyId,
  );
  try {
    const data = await operation({
      log: (message) => request.log.debug({ operationLog: logLineOf(message) }, "operation log"),
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

function cacheEntryOf(data: OperationData): { cacheEntry?: unknown } {
  const entry = (data as { cacheEntry?: unknown }).cacheEntry;
  return entry === undefined ? {} : { cacheEntry: entry };
}

async function streamOperation<D extends OperationData>(
  request: FastifyRequest,
  reply: FastifyReply,
  operation: (controls: OperationControls) => Promise<D>,
  options: RunOptions,
): Promise<void> {
  const started = performance.now();
  const res = reply.raw;
  const named = sdkExpectsEventNames(request);
  const send = (event: StreamEvent) => {
    if (!res.writableEnded && !res.destroyed) res.write(frame(event, named));
  };
  let outcome = "finished";
  // At shutdown, or when the request's key is revoked, the client gets the stream's final event at
  // once, whatever the operation does next.
  const { signal, dispose } = track(
    request,
    reply,
    (reason) => {
      outcome = reason.code === "KEY_REVOKED" ? "stopped: key revoked" : "stopped by shutdown";
      const { error: message, code } = toPublicError(reason, request.id, 0, secretsOf(request)).body;
      send(systemEvent("error", { error: message, code }));
      if (!res.writableEnded) res.end();
    },
    options.keyId,
  );
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
      log: (message) =>
        send({ type: "log", id: randomUUID(), data: { status: "running", message: logLineOf(message) } }),
      signal,
      streaming: true,
    });
    if (signal.aborted) outcome = outcome === "finished" ? "cancelled" : outcome;
    // agentExecute with shouldCache: the recorded run goes with the result.
    else
      send(
        systemEvent("finished", {
          result: data.result,
          ...(data.actionId !== undefined ? { actionId: data.actionId } : {}),
          ...(data.cacheStatus !== undefined ? { cacheStatus: data.cacheStatus } : {}),
          ...cacheEntryOf(data),
        }),
      );
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
