// GET /v1/sessions/{id}/cdp: a WebSocket to the session's browser, isolated to the session's
// browser context (see isolation.ts). The REMOTE client connects its page API this way; so can
// Playwright's connectOverCDP or Puppeteer's connect.
//
// Authentication: the `x-platform-api-key` header, or `?apiKey=` for WebSocket clients that cannot
// set headers (browsers). The session must be the caller's own and running: 401, 404 and 410 are
// answered as plain HTTP before the upgrade, with the usual error body.

import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import type { KeyVerifier } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { loadActiveSession } from "../routes/session-access.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import type { Store } from "../store/store.ts";
import { CdpIsolation } from "./isolation.ts";

export interface CdpProxyDeps {
  store: Store;
  verifier: KeyVerifier;
  sessions: SessionManager;
}

const PATH = /^\/v1\/sessions\/([^/?#]+)\/cdp$/;
/** Largest CDP message passed either way (screenshots of big pages are tens of megabytes). */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** Activity on the connection counts against the idle timeout at most this often. */
const TOUCH_EVERY_MS = 1000;

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ success: false, error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function openUpstream(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

/** Wires a client WebSocket to its session's browser through the isolation rules. */
async function bridge(client: WebSocket, upstream: WebSocket, session: LiveSession): Promise<void> {
  const isolation = new CdpIsolation(
    {
      toClient: (text) => {
        if (client.readyState === WebSocket.OPEN) client.send(text);
      },
      toBrowser: (text) => {
        if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      },
      activated: (targetId) => void session.activatePage(targetId),
    },
    session.cdp.contextId,
  );
  let lastTouch = 0;
  const queued: string[] = [];
  let started = false;
  client.on("message", (data) => {
    const now = Date.now();
    if (now - lastTouch > TOUCH_EVERY_MS) {
      lastTouch = now;
      session.touch();
    }
    const text = data.toString();
    if (started) isolation.fromClient(text);
    else queued.push(text);
  });
  upstream.on("message", (data) => isolation.fromBrowser(data.toString()));

  let closed = false;
  session.clientConnected();
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    session.clientDisconnected();
    isolation.close();
    offEnd();
    upstream.close();
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING)
      client.close(code, reason);
  };
  const offEnd = session.onEnd(() => close(1001, "The session ended."));
  client.on("close", () => close(1000, ""));
  client.on("error", () => close(1011, ""));
  upstream.on("close", () => close(1011, "The connection to the browser closed."));
  upstream.on("error", () => close(1011, "The connection to the browser failed."));

  try {
    await isolation.start();
  } catch {
    close(1011, "The browser did not answer.");
    return;
  }
  started = true;
  for (const text of queued.splice(0)) isolation.fromClient(text);
}

/** Answers WebSocket upgrades of /v1/sessions/{id}/cdp on the app's HTTP server. */
export function installCdpProxy(app: FastifyInstance, deps: CdpProxyDeps): void {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
  });
  const open = new Set<WebSocket>();

  app.server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://service.invalid");
    const match = PATH.exec(url.pathname);
    if (!match) {
      refuse(
        socket,
        404,
        "NOT_FOUND",
        `No WebSocket endpoint at ${url.pathname}. The CDP proxy is /v1/sessions/{id}/cdp.`,
      );
      return;
    }
    const id = decodeURIComponent(match[1]!);
    const header = request.headers["x-platform-api-key"];
    const key = (typeof header === "string" && header) || url.searchParams.get("apiKey") || "";

    (async () => {
      if (!key) {
        throw new ApiError(
          401,
          "UNAUTHORIZED",
          "Missing API key: send it in the x-platform-api-key header, or as ?apiKey= where headers cannot be set.",
        );
      }
      const auth = await deps.verifier.verify(key);
      if (!auth) throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key.");
      const record = await loadActiveSession(deps.store, auth, id);
      const session = await deps.sessions.require(record);
      const upstream = await openUpstream(session.cdp.wsEndpoint);
      if (session.ended || socket.destroyed) {
        upstream.close();
        throw new ApiError(410, "SESSION_ENDED", `Session ${JSON.stringify(id)} has ended.`);
      }
      wss.handleUpgrade(request, socket, head, (client) => {
        open.add(client);
        client.on("close", () => open.delete(client));
        app.log.info({ sessionId: id }, "CDP proxy connected");
        void bridge(client, upstream, session);
      });
    })().catch((error: unknown) => {
      if (error instanceof ApiError) refuse(socket, error.statusCode, error.code, error.message);
      else {
        app.log.error({ err: error, sessionId: id }, "CDP proxy connection failed");
        refuse(socket, 502, "CDP_UNAVAILABLE", "The session's browser could not be reached.");
      }
    });
  });

  // Upgraded sockets are not the HTTP server's any more: close them before it waits for its own.
  app.addHook("preClose", (done) => {
    for (const client of open) client.close(1001, "The service is shutting down.");
    done();
  });
  app.addHook("onClose", (_instance, done) => {
    for (const client of open) client.terminate();
    wss.close();
    done();
  });
}
