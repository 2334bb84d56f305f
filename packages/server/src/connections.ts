// Slow and numerous clients. A client that sends its request headers a byte at a time, or announces a
// body and trickles it, holds a socket, a parser and (once the headers are in) a request for as long
// as it likes; thousands of them from one address hold the service. So:
//
// - the request headers must have arrived `headersTimeoutMs` after the connection opened (or after
//   the previous response, on a kept-alive connection), and the whole request, body included,
//   `requestTimeoutMs` after it started; a response, however long it streams (SSE), is not bound by
//   either: Node stops watching a request once it has arrived whole;
// - a kept-alive connection with no request in flight is closed after `idleTimeoutMs`;
// - one address has at most `maxConnectionsPerAddress` connections open at once (IPv6: one /64, what
//   one subscriber is usually given); a connection past it is answered 429 TOO_MANY_CONNECTIONS and
//   closed before Node's HTTP parser sees it. WebSocket upgrades (the CDP proxy, the debugger) count
//   too, for as long as they stay open; once upgraded they are no longer the HTTP server's, so its
//   timeouts do not apply to them.
//
// Node enforces the two request timeouts on a timer (`connectionsCheckingInterval`, 30 s by default,
// which let slow clients live three times the timeout); it is set here to a fraction of the shorter one.
// Each such client is logged once, at debug level (error-handler.ts), and counted in the metrics.

import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import ipaddr from "ipaddr.js";
import type { ErrorBody } from "./schemas/common.ts";

export interface ConnectionLimits {
  /** Milliseconds for a request's headers to arrive (408 and closed after). */
  headersTimeoutMs: number;
  /** Milliseconds for a whole request, headers and body, to arrive (408 and closed after). */
  requestTimeoutMs: number;
  /** Milliseconds a kept-alive connection may wait for its next request. */
  idleTimeoutMs: number;
  /** Most connections open at once from one address (one IPv6 /64); 0: no limit. */
  maxConnectionsPerAddress: number;
}

/** What happens to connections, for the metrics. */
export interface ConnectionEvents {
  refused(reason: "per_address_limit"): void;
  slowClientClosed(phase: "headers" | "body"): void;
}

/** Fastify's server options for the limits (Node's http server takes the timeouts). */
export function serverTimeouts(limits: ConnectionLimits) {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs || limits.headersTimeoutMs);
  const connectionsCheckingInterval = Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      connectionsCheckingInterval,
    },
  };
}

/** The key a connection is counted under: its IPv4 address, or its IPv6 address's /64. */
export function addressKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return "unknown";
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(remoteAddress);
  } catch {
    return remoteAddress;
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
}

/** Sockets whose slowness was already logged, so that the request they abort logs nothing more. */
const LOGGED = new WeakSet<Socket>();

/** Remembers that this client's end was logged (one line per slow client). */
export function markClientLogged(socket: Socket): void {
  LOGGED.add(socket);
}

export function clientWasLogged(socket: Socket | undefined): boolean {
  return socket !== undefined && LOGGED.has(socket);
}

function refusal(limit: number): string {
  const message =
    `Too many connections from your address: this service accepts ${limit} at once from one address ` +
    "(--max-connections-per-address). Reuse connections (HTTP keep-alive) or close idle ones, then retry.";
  const body = JSON.stringify({
    success: false,
    error: message,
    message,
    code: "TOO_MANY_CONNECTIONS",
  } satisfies ErrorBody);
  return (
    "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`
  );
}

/** How long a refused connection may stay to read its answer before it is cut. */
const REFUSED_LINGER_MS = 2_000;

/**
 * Counts the server's connections by address and refuses those past the limit. It takes the place
 * of the server's own `connection` listeners (Node's HTTP parser among them) and hands them only the
 * connections it admits, so a refused one never reaches the HTTP layer.
 */
export function limitConnectionsPerAddress(
  server: Server,
  limit: number,
  log: FastifyBaseLogger,
  events?: ConnectionEvents,
): { open(key: string): number } {
  const counts = new Map<string, number>();
  const open = (key: string) => counts.get(key) ?? 0;
  if (limit <= 0) return { open };
  const inner = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const count = open(key);
    if (count >= limit) {
      events?.refused("per_address_limit");
      log.debug(
        { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort, limit },
        "connection refused: too many from this address",
      );
      // Read and drop what the client sends, so that closing does not reset the connection before
      // the client has read the answer.
      socket.on("error", () => undefined);
      socket.resume();
      socket.end(refusal(limit));
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      return;
    }
    counts.set(key, count + 1);
    socket.once("close", () => {
      const left = open(key) - 1;
      if (left > 0) counts.set(key, left);
      else counts.delete(key);
    });
    for (const listener of inner) listener.call(server, socket);
  });
  return { open };
}
