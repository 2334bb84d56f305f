// What happens to requests when the service stops (SIGTERM, SIGINT, app.close()): new requests get a
// 503 in the service's error shape; operations in flight get the shutdown grace to finish; those
// still running then are answered (a stream's final `error` event, a JSON 503) before their
// connections are closed, so no client is left with a connection cut in the middle of nothing.

import type { FastifyInstance } from "fastify";
import { ApiError } from "./errors.ts";

export function shuttingDown(): ApiError {
  return new ApiError(
    503,
    "SHUTTING_DOWN",
    "The service is shutting down. Retry on another node of the service, or once it is back; a session " +
      "that was running here has ended.",
  );
}

/** The operations running now, each with a way to answer and stop it at once. */
export class InflightOperations {
  private readonly stops = new Set<(reason: ApiError) => void>();
  private stopping = false;

  get closing(): boolean {
    return this.stopping;
  }

  /** Registers an operation; call the returned function when it has answered. */
  add(stop: (reason: ApiError) => void): () => void {
    this.stops.add(stop);
    return () => this.stops.delete(stop);
  }

  get size(): number {
    return this.stops.size;
  }

  /** From now on new requests are refused. */
  beginClosing(): void {
    this.stopping = true;
  }

  /** Answers and stops every operation still running. */
  stopAll(): void {
    const reason = shuttingDown();
    for (const stop of [...this.stops]) {
      this.stops.delete(stop);
      stop(reason);
    }
  }
}

/** Milliseconds the last answers get to reach their sockets before every connection is cut. */
const FLUSH_MS = 250;

/**
 * `close()` stops accepting connections and waits for the open ones. New requests on connections
 * still open get 503 SHUTTING_DOWN; operations in flight get `graceMs` to finish, then are answered
 * and stopped (InflightOperations.stopAll); a moment later every connection still open is cut (one
 * a client opened and never used would otherwise hold the close for as long as the client likes).
 */
export function installShutdown(app: FastifyInstance, inflight: InflightOperations, graceMs: number): void {
  app.addHook("onRequest", async () => {
    if (inflight.closing) throw shuttingDown();
  });
  app.addHook("preClose", (done) => {
    inflight.beginClosing();
    const cut = () => app.server.closeAllConnections();
    let flush: NodeJS.Timeout | undefined;
    const grace = setTimeout(() => {
      inflight.stopAll();
      flush = setTimeout(cut, FLUSH_MS);
      flush.unref();
    }, graceMs);
    grace.unref();
    app.server.once("close", () => {
      clearTimeout(grace);
      clearTimeout(flush);
    });
    done();
  });
}
