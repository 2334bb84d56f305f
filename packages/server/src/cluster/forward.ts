// Forwarding a request to the node that owns its session, and streaming the answer back.
//
// HTTP (JSON and Server-Sent Events): undici, one keep-alive pool per owner, no timeouts of its own
// (an act may take minutes before its JSON answer; a stream may be quiet as long as its operation
// runs). The owner's answer is piped to the client as it arrives, so an event stream stays event by
// event; a client that goes away aborts the hop, and the owner sees its request's connection close,
// which cancels the operation there exactly as a direct client's hang-up does.
//
// WebSockets (the CDP proxy, the DevTools front end): Node's HTTP client sends the client's own
// upgrade request (its Sec-WebSocket-Key included) to the owner, and once the owner answers 101 the
// two sockets are piped together. The WebSocket handshake is then end to end between client and
// owner: the owner's WebSocket server applies its message size limit and the CDP allow-list, and
// TCP flow control carries backpressure both ways (a pipe stops reading one side while the other
// has not drained). The bytes are not re-framed on the way, which is also what keeps a forwarded
// round trip close to a direct one. A refusal by the owner (401, 404, 410 ...) reaches the client
// as the owner's own answer.

import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  STATUS_CODES,
} from "node:http";
import { request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Agent, request as undiciRequest } from "undici";
import { ApiError } from "../errors.ts";
import { type ClusterTrust, type ForwardedClaim, NODE_HEADER, OWNER_HEADER } from "./trust.ts";

/** A node requests are forwarded to. */
export interface ForwardTarget {
  id: string;
  advertiseUrl: string;
}

/** Seconds a client is told to wait when the owner could not be reached (Retry-After). */
export const RETRY_AFTER_S = 1;

/** Headers that belong to one connection, not to the request: never passed on (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "expect",
]);

/** Request headers a hop never passes on: the caller's credentials (the claim replaces them) and cluster headers. */
const CREDENTIALS = new Set(["x-platform-api-key", "x-bb-api-key", "authorization"]);

export function ownerUnreachable(owner: string): ApiError {
  return new ApiError(
    503,
    "OWNER_UNREACHABLE",
    `The node that runs this session (${owner}) could not be reached from the node that received the request; ` +
      `nothing was changed. Retry in ${RETRY_AFTER_S} s: once that node's lease lapses, the session is answered as ended.`,
    { nodeId: owner, retryAfterSeconds: RETRY_AFTER_S },
  );
}

function outgoingHeaders(
  headers: IncomingHttpHeaders,
  keepCredentials: boolean,
  extra: Record<string, string>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith("x-deckhand-")) continue;
    if (!keepCredentials && CREDENTIALS.has(name)) continue;
    out[name] = value;
  }
  return { ...out, ...extra };
}

/** `path?query` without the caller's `apiKey` query parameter (the claim carries who it is). */
export function withoutApiKey(url: string): string {
  const parsed = new URL(url, "http://node.invalid");
  if (!parsed.searchParams.has("apiKey")) return url;
  parsed.searchParams.delete("apiKey");
  return `${parsed.pathname}${parsed.search}`;
}

export class Forwarder {
  private readonly trust: ClusterTrust;
  private readonly agent = new Agent({
    // Answers and streams take as long as their operations: the owner bounds them, not the hop.
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: 3_000,
    keepAliveTimeout: 30_000,
  });

  constructor(trust: ClusterTrust) {
    this.trust = trust;
  }

  get nodeId(): string {
    return this.trust.nodeId;
  }

  private signed(target: ForwardTarget, method: string, path: string, claim: Omit<ForwardedClaim, "from">) {
    return this.trust.sign(target.id, method, path, claim);
  }

  /**
   * Sends `request` to `target` and answers `reply` with what it answers, streamed. With an
   * identity in the claim the caller's credentials are left out (the claim says who it is); without
   * one the request authenticates itself at the owner (a signed link token in its URL).
   */
  async http(
    request: FastifyRequest,
    reply: FastifyReply,
    target: ForwardTarget,
    claim: Omit<ForwardedClaim, "from">,
  ): Promise<FastifyReply> {
    const path = claim.identity ? withoutApiKey(request.url) : request.url;
    const abort = new AbortController();
    // The client went away before the answer was complete: so does the hop, and the owner sees it.
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.once("close", onClose);
    const body =
      request.body === undefined || request.method === "GET" || request.method === "HEAD"
        ? undefined
        : JSON.stringify(request.body);
    let answer: Awaited<ReturnType<typeof undiciRequest>>;
    try {
      answer = await undiciRequest(new URL(path, target.advertiseUrl), {
        dispatcher: this.agent,
        method: request.method as "GET",
        headers: outgoingHeaders(request.headers, claim.identity === undefined, {
          ...this.signed(target, request.method, path, claim),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        }),
        ...(body !== undefined ? { body } : {}),
        signal: abort.signal,
      });
    } catch (error) {
      reply.raw.off("close", onClose);
      if (abort.signal.aborted) return reply.hijack() as unknown as FastifyReply;
      request.log.warn({ err: error, owner: target.id }, "forwarding to the session's node failed");
      reply.header("retry-after", String(RETRY_AFTER_S));
      throw ownerUnreachable(target.id);
    }
    // Written past Fastify: a streamed answer is not "sent" for Fastify until it ends, and the
    // route's own handler must not run meanwhile.
    reply.hijack();
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (
        value === undefined ||
        name === "keep-alive" ||
        name === "transfer-encoding" ||
        name === "connection"
      )
        continue;
      headers[name] = value;
    }
    const owner = answer.headers[NODE_HEADER];
    headers[OWNER_HEADER] = typeof owner === "string" ? owner : target.id;
    headers[NODE_HEADER] = this.nodeId;
    reply.raw.writeHead(answer.statusCode, headers);
    // pipeline(): the owner's answer is read as fast as the client takes it. An owner that died
    // mid-answer cuts the client's connection, as a direct client's would have been.
    pipeline(answer.body, reply.raw).catch(() => {
      reply.raw.off("close", onClose);
      reply.raw.destroy();
    });
    return reply;
  }

  /**
   * Sends a small request (a session start) to `target` and reads the whole answer, for the caller
   * to decide on (placement tries the next node when one is full). Undefined: unreachable.
   */
  async exchange(
    request: FastifyRequest,
    target: ForwardTarget,
    claim: Omit<ForwardedClaim, "from">,
  ): Promise<
    { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer } | undefined
  > {
    const path = withoutApiKey(request.url);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    try {
      const answer = await undiciRequest(new URL(path, target.advertiseUrl), {
        dispatcher: this.agent,
        method: request.method as "POST",
        headers: outgoingHeaders(request.headers, claim.identity === undefined, {
          ...this.signed(target, request.method, path, claim),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        }),
        ...(body !== undefined ? { body } : {}),
      });
      return {
        status: answer.statusCode,
        headers: answer.headers,
        body: Buffer.from(await answer.body.arrayBuffer()),
      };
    } catch (error) {
      request.log.warn({ err: error, node: target.id }, "a session start could not be placed on a node");
      return undefined;
    }
  }

  /**
   * Forwards a WebSocket upgrade to `target` and joins the two sockets once it answers 101. Any
   * other answer of the owner is passed to the client as it is. `onUnreachable` answers the client
   * when the owner could not be reached at all.
   */
  upgrade(
    incoming: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    target: ForwardTarget,
    claim: Omit<ForwardedClaim, "from">,
    onUnreachable: (error: ApiError) => void,
  ): void {
    const path = claim.identity ? withoutApiKey(incoming.url ?? "/") : (incoming.url ?? "/");
    const url = new URL(path, target.advertiseUrl);
    const headers = outgoingHeaders(incoming.headers, claim.identity === undefined, {
      ...this.signed(target, "GET", path, claim),
      connection: "Upgrade",
      upgrade: "websocket",
    });
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const hop = send(url, { method: "GET", headers, timeout: 3_000 });
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      hop.destroy();
      onUnreachable(ownerUnreachable(target.id));
      void error;
    };
    hop.on("timeout", () => fail(new Error("timed out")));
    hop.on("error", fail);
    socket.on("error", () => hop.destroy());
    socket.once("close", () => {
      if (!settled) hop.destroy();
    });
    hop.on("response", (answer) => {
      // The owner refused the upgrade: its answer, as it is.
      settled = true;
      const lines = [`HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode!] ?? ""}`];
      for (const [name, value] of Object.entries(answer.headers)) {
        if (
          value === undefined ||
          name === "connection" ||
          name === "transfer-encoding" ||
          name === NODE_HEADER ||
          name === OWNER_HEADER
        )
          continue;
        for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
      }
      const owner = answer.headers[NODE_HEADER];
      lines.push(`${OWNER_HEADER}: ${typeof owner === "string" ? owner : target.id}`);
      lines.push(`${NODE_HEADER}: ${this.nodeId}`, "connection: close");
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        const bodyBytes = Buffer.concat(chunks);
        if (answer.headers["content-length"] === undefined) lines.push(`content-length: ${bodyBytes.length}`);
        socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), bodyBytes]));
      });
      answer.on("error", () => socket.destroy());
    });
    hop.on("upgrade", (answer, upstream, upstreamHead) => {
      settled = true;
      upstream.setTimeout(0);
      upstream.setNoDelay(true);
      if ("setNoDelay" in socket) (socket as unknown as { setNoDelay(on: boolean): void }).setNoDelay(true);
      if (socket.destroyed) {
        upstream.destroy();
        return;
      }
      const lines = ["HTTP/1.1 101 Switching Protocols"];
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined || name === NODE_HEADER || name === OWNER_HEADER) continue;
        for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
      }
      const owner = answer.headers[NODE_HEADER];
      lines.push(
        `${OWNER_HEADER}: ${typeof owner === "string" ? owner : target.id}`,
        `${NODE_HEADER}: ${this.nodeId}`,
      );
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (upstreamHead.length > 0) socket.write(upstreamHead);
      if (head.length > 0) upstream.write(head);
      const cut = () => {
        socket.destroy();
        upstream.destroy();
      };
      upstream.on("error", cut);
      socket.on("error", cut);
      upstream.on("close", cut);
      socket.on("close", cut);
      // pipe(): each side is read only as fast as the other drains (backpressure end to end).
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    hop.end();
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
