// GET /v1/sessions/{id}/cdp: a WebSocket to the session's browser, held to the session's browser
// context (see isolation.ts and its allow-list, policy.ts). The REMOTE client connects its page API
// this way; so can Playwright's connectOverCDP or Puppeteer's connect.
//
// Every client shares the browser's one connection (the pipe of a pool browser, or the service's
// WebSocket to a browser given by cdpUrl) through a channel and a browser-target session of its
// own, so that what one client switches on (auto-attach, target discovery) is its own.
//
// Authentication: the `x-platform-api-key` header, or `?apiKey=` for WebSocket clients that cannot
// set headers (browsers). The session must be the caller's own and running: 401, 404 and 410 are
// answered as plain HTTP before the upgrade, with the usual error body. Revoking the key closes the
// connection within a second (key-revocation.ts).
//
// Sizes: a message from the client larger than `maxMessageBytes` is refused as soon as its frame
// header announces it (close code 1009), before it is buffered. Messages towards the client
// (screenshots of big pages are tens of megabytes) have no such limit, but a client that does not
// read what it asked for is disconnected once `maxBufferedBytes` wait for it.

import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import type { KeyVerifier } from "../auth.ts";
import { DEFAULT_CDP_MAX_MESSAGE_BYTES } from "../defaults.ts";
import { ApiError, sessionEnded } from "../errors.ts";
import type { RevocationWatch } from "../key-revocation.ts";
import { loadActiveSession } from "../routes/session-access.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import type { SessionRecord, Store } from "../store/store.ts";
import { linkNotFound, type SessionLinks } from "../viewer/session-links.ts";
import { CdpIsolation } from "./isolation.ts";

export interface CdpProxyDeps {
  store: Store;
  verifier: KeyVerifier;
  sessions: SessionManager;
  revocations: RevocationWatch;
  /** Checks the signed `?token=` of a cdpUrl from the start response. */
  links: SessionLinks;
  /** Largest message a client may send, in bytes. */
  maxMessageBytes?: number;
}

const PATH = /^\/v1\/sessions\/([^/?#]+)\/(cdp|devtools)$/;
/** Activity on the connection counts against the idle timeout at most this often. */
const TOUCH_EVERY_MS = 1000;
/** Bytes waiting for a client that does not read, beyond which it is disconnected. */
const MAX_BUFFERED_BYTES = 512 * 1024 * 1024;

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ success: false, error: message, message, code });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Wires a client WebSocket to its session's browser through the isolation rules. Returns the
 * function that cuts it: nothing more passes either way, and the socket goes even if the client
 * does not answer the close.
 */
/**
 * `browser`: the client speaks to the browser target (connectOverCDP, the REMOTE client). `page`:
 * the client speaks to the session's active page, as a DevTools front end does to
 * /devtools/page/{id}: what it sends without a session id goes to that page's session (attached
 * for it through the same isolation rules), and that session's messages reach it without one.
 */
export type BridgeMode = "browser" | "page";

/** The id of the proxy's own Target.attachToTarget in page mode (a front end's ids start at 1). */
const PAGE_ATTACH_ID = 2_000_000_000;

function bridge(
  client: WebSocket,
  session: LiveSession,
  mode: BridgeMode = "browser",
): (code: number, reason: string) => void {
  let closed = false;
  /** Page mode: the session of the page the client speaks to. */
  let pageSession: string | undefined;
  const toPage = (text: string): string => {
    const message = JSON.parse(text) as { sessionId?: string };
    if (message.sessionId === undefined) message.sessionId = pageSession;
    return JSON.stringify(message);
  };
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    session.clientDisconnected();
    isolation.close();
    offEnd();
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) {
      client.close(code, reason);
      setTimeout(() => client.terminate(), 500).unref();
    }
  };
  const isolation = new CdpIsolation({
    toClient: (text) => {
      if (client.readyState !== WebSocket.OPEN) return;
      if (mode === "page") {
        const message = JSON.parse(text) as {
          id?: number;
          sessionId?: string;
          result?: { sessionId?: unknown };
        };
        if (message.id === PAGE_ATTACH_ID && message.sessionId === undefined) {
          if (typeof message.result?.sessionId !== "string") close(1011, "The page could not be attached.");
          else {
            pageSession = message.result.sessionId;
            started = true;
            for (const queuedText of queued.splice(0)) isolation.fromClient(toPage(queuedText));
          }
          return;
        }
        if (pageSession !== undefined && message.sessionId === pageSession) {
          delete message.sessionId;
          text = JSON.stringify(message);
        }
      }
      if (client.bufferedAmount > MAX_BUFFERED_BYTES) {
        close(1008, "The client does not read its messages.");
        return;
      }
      client.send(text);
    },
    activated: (targetId) => void session.activatePage(targetId),
    contextId: session.cdp.contextId,
    downloadDir: session.downloadDir,
    maxTabs: session.maxTabs,
  });
  isolation.onChannelClosed = () => close(1011, "The connection to the browser closed.");

  let lastTouch = 0;
  const queued: string[] = [];
  let started = false;
  client.on("message", (data) => {
    const now = Date.now();
    session.lastClientMessageAt = now;
    if (now - lastTouch > TOUCH_EVERY_MS) {
      lastTouch = now;
      session.touch();
    }
    const text = data.toString();
    if (!started) queued.push(text);
    else if (mode === "page") {
      try {
        isolation.fromClient(toPage(text));
      } catch {
        close(1007, "Not a CDP message.");
      }
    } else isolation.fromClient(text);
  });

  session.clientConnected();
  const offEnd = session.onEnd(() => close(1001, "The session ended."));
  client.on("close", () => close(1000, ""));
  client.on("error", () => close(1011, ""));

  isolation.start(session.cdp.browser.connection).then(
    () => {
      if (mode === "page") {
        const targetId = session.dh.context.activePage()?.targetId;
        if (!targetId) close(1011, "The session has no page.");
        else
          isolation.fromClient(
            JSON.stringify({
              id: PAGE_ATTACH_ID,
              method: "Target.attachToTarget",
              params: { targetId, flatten: true },
            }),
          );
        return;
      }
      started = true;
      for (const text of queued.splice(0)) isolation.fromClient(text);
    },
    () => close(1011, "The browser did not answer."),
  );
  return close;
}

/** Answers WebSocket upgrades of /v1/sessions/{id}/cdp on the app's HTTP server. */
export function installCdpProxy(app: FastifyInstance, deps: CdpProxyDeps): void {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: deps.maxMessageBytes ?? DEFAULT_CDP_MAX_MESSAGE_BYTES,
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
    // /devtools: the debugger's front end, on the session's active page, with a signed token only.
    const mode: BridgeMode = match[2] === "devtools" ? "page" : "browser";
    const header = request.headers["x-platform-api-key"] ?? request.headers["x-bb-api-key"];
    const key = (typeof header === "string" && header) || url.searchParams.get("apiKey") || "";
    const token = url.searchParams.get("token");

    (async () => {
      let record: SessionRecord;
      let keyId: string;
      if (mode === "page" && (key || token === null)) throw linkNotFound();
      if (!key && token !== null) {
        // The cdpUrl of the start response: a short-lived token signed for this session.
        const opened = await deps.links.open(id, token, "cdp");
        if (opened.session.status !== "active") throw sessionEnded(id);
        record = opened.session;
        keyId = opened.keyId;
      } else {
        if (!key) {
          throw new ApiError(
            401,
            "UNAUTHORIZED",
            "Missing API key: send it in the x-platform-api-key header, or use the session's cdpUrl (signed).",
          );
        }
        const auth = await deps.verifier.verify(key);
        if (!auth) throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key.");
        record = await loadActiveSession(deps.store, auth, id);
        keyId = auth.keyId;
      }
      const session = await deps.sessions.require(record);
      if (session.ended || socket.destroyed) {
        throw new ApiError(410, "SESSION_ENDED", `Session ${JSON.stringify(id)} has ended.`);
      }
      wss.handleUpgrade(request, socket, head, (client) => {
        open.add(client);
        app.log.info({ sessionId: id }, "CDP proxy connected");
        const cut = bridge(client, session, mode);
        const untrack = deps.revocations.track(keyId, () => cut(1008, "The API key was revoked."));
        client.on("close", () => {
          open.delete(client);
          untrack();
        });
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
