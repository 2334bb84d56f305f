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
// (screenshots of big pages are tens of megabytes) have no such limit.
//
// Flow (docs/service.md, "CDP proxy flow control"): the proxy reads a client's socket only while
// what it read has somewhere to go. It stops reading (ws pause(): TCP then holds the client back)
// while
// - messages it took wait to be handled (a policy look-up in progress) beyond CLIENT_QUEUE_BYTES,
// - the browser has not read what was written to it beyond its connection's DRAINED_BACKLOG (the
//   pipe of a pool browser, the WebSocket of a cdpUrl browser: both tell when they drain),
// - the client has MAX_IN_FLIGHT commands unanswered,
// - the client has not read CLIENT_UNREAD_PAUSE bytes sent to it (so it cannot ask for more),
// - the session's clients sent more than their byte budget (`bytesPerSecond`, shared by the
//   session's sockets): reading resumes when the excess has been paid at that rate.
// Events the client did not ask for still flow to it; a client that lets MAX_UNREAD_BYTES wait is
// disconnected (1008). Nothing is buffered beyond these bounds, and nothing holds on to a message
// once it was passed on or the socket closed.
//
// Messages are not parsed to be routed: their id, method and sessionId are read by deckhand's
// scanner (scan.ts) and only a command whose parameters the policy checks is parsed (isolation.ts).
// Nor are they decoded: the scanner reads the bytes ws hands over, and what goes on is slices of
// them (to the browser's pipe, and from it to the client as WebSocket fragments). ws unmasks with
// bufferutil (native) when it is installed, as it is with the service.

import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { type CdpMessageHead, DRAINED_BACKLOG, rewriteMessage, scanCdpMessage } from "deckhand";
import type { FastifyInstance } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import type { KeyVerifier } from "../auth.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { claimOf } from "../cluster/routing.ts";
import { NODE_HEADER, OWNER_HEADER } from "../cluster/trust.ts";
import { DEFAULT_CDP_BYTES_PER_SECOND, DEFAULT_CDP_MAX_MESSAGE_BYTES } from "../defaults.ts";
import { ApiError, sessionEnded } from "../errors.ts";
import type { RevocationWatch } from "../key-revocation.ts";
import { loadActiveSession } from "../routes/session-access.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import type { SessionRecord, Store } from "../store/store.ts";
import { DebuggerScreencast } from "../viewer/debugger-screencast.ts";
import { linkNotFound, type SessionLinks } from "../viewer/session-links.ts";
import { CdpIsolation, type ClientMessage } from "./isolation.ts";

export interface CdpProxyDeps {
  store: Store;
  verifier: KeyVerifier;
  sessions: SessionManager;
  revocations: RevocationWatch;
  /** Checks the signed `?token=` of a cdpUrl from the start response. */
  links: SessionLinks;
  /** Largest message a client may send, in bytes. */
  maxMessageBytes?: number;
  /** Bytes per second a session's clients may send together (default DEFAULT_CDP_BYTES_PER_SECOND). */
  bytesPerSecond?: number;
  /** Counts the bytes of every message that passes: "in" from a client, "out" to it. */
  onTraffic?: (direction: "in" | "out", bytes: number) => void;
  /** A client went over its session's byte budget and is not read for a while. */
  onThrottled?: () => void;
  /**
   * This node's cluster: a connection for a session another live node owns is forwarded there
   * (cluster/forward.ts), and connections forwarded by other nodes are accepted on their claim.
   */
  cluster?: Cluster;
}

const PATH = /^\/v1\/sessions\/([^/?#]+)\/(cdp|devtools)$/;
/** Activity on the connection counts against the idle timeout at most this often. */
const TOUCH_EVERY_MS = 1000;
/** Bytes sent to a client and not read by it, beyond which it is disconnected. */
export const MAX_UNREAD_BYTES = 128 * 1024 * 1024;
/** Bytes sent to a client and not read by it, beyond which its socket is not read. */
export const CLIENT_UNREAD_PAUSE = 8 * 1024 * 1024;
/** Bytes of client messages taken and waiting to be handled, beyond which its socket is not read. */
export const CLIENT_QUEUE_BYTES = 1024 * 1024;
/** Commands of one client sent to the browser and not answered, at which its socket is not read. */
export const MAX_IN_FLIGHT = 64;
/**
 * A message for the client at least this large, in pieces, goes as WebSocket fragments rather than
 * joined into one buffer (a copy); smaller ones are joined, as one frame is the usual wire.
 */
const FRAGMENT_ABOVE = 64 * 1024;

/** A session's byte budget: a token bucket shared by its clients. */
class ByteBudget {
  private tokens: number;
  private last = performance.now();
  private readonly rate: number;
  private readonly capacity: number;

  constructor(bytesPerSecond: number, burst: number) {
    this.rate = bytesPerSecond;
    this.capacity = Math.max(bytesPerSecond, burst);
    this.tokens = this.capacity;
  }

  /** Takes `bytes`; returns the milliseconds until the budget is even again (0: within it). */
  take(bytes: number): number {
    const now = performance.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.rate);
  }
}

interface BridgeOptions {
  mode: BridgeMode;
  budget: ByteBudget;
  onTraffic: CdpProxyDeps["onTraffic"];
  onThrottled: CdpProxyDeps["onThrottled"];
}

function refuse(
  socket: Duplex,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ success: false, error: message, message, code });
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
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
  { mode, budget, onTraffic, onThrottled }: BridgeOptions,
): (code: number, reason: string) => void {
  let closed = false;
  /** Page mode: the session of the page the client speaks to. */
  let pageSession: string | undefined;
  const toPage = (bytes: Buffer): Buffer => {
    const head = scanCdpMessage(bytes);
    return head.sessionId === undefined
      ? Buffer.concat(rewriteMessage(bytes, head, { sessionId: pageSession! }))
      : bytes;
  };
  /** Until the budget is even again. */
  let budgetTimer: NodeJS.Timeout | undefined;
  let waitingForBrowser = false;
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    clearTimeout(budgetTimer);
    inbox.length = 0;
    session.clientDisconnected(mode === "page" ? "debugger" : "client");
    isolation.close();
    offEnd();
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) {
      client.close(code, reason);
      setTimeout(() => client.terminate(), 500).unref();
    }
  };
  /** Whether the client's next message must wait (see the top). */
  const blocked = () =>
    !started ||
    isolation.browserBacklog > DRAINED_BACKLOG ||
    isolation.queuedBytes > CLIENT_QUEUE_BYTES ||
    isolation.inFlight >= MAX_IN_FLIGHT ||
    client.bufferedAmount > CLIENT_UNREAD_PAUSE;
  let pumping = false;
  /** Hands the messages read to the isolation, in order, while nothing blocks. */
  const pump = () => {
    if (pumping) return;
    pumping = true;
    try {
      while (inbox.length > 0 && !closed && !blocked()) {
        // The bytes as ws read them (valid UTF-8: ws checked): the isolation scans them as they are.
        const bytes = inbox.shift()!;
        if (mode === "page") {
          try {
            isolation.fromClient(toPage(bytes));
          } catch {
            close(1007, "Not a CDP message.");
          }
        } else isolation.fromClient(bytes);
      }
    } finally {
      pumping = false;
    }
  };
  /**
   * Reads the client's socket only while what it sends has somewhere to go. What ws emits after
   * pause() (the rest of one read) waits in the inbox.
   */
  const flow = () => {
    if (closed) return;
    pump();
    if (closed) return;
    const browserBusy = isolation.browserBacklog > DRAINED_BACKLOG;
    const hold = budgetTimer !== undefined || inbox.length > 0 || blocked();
    if (browserBusy && !waitingForBrowser) {
      waitingForBrowser = true;
      isolation.afterBrowserDrain(() => {
        waitingForBrowser = false;
        flow();
      });
    }
    if (hold && !client.isPaused) client.pause();
    else if (!hold && client.isPaused) client.resume();
  };
  const afterSend = () => flow();
  /** Page mode (the debugger): its screencast's frames, masked once the session used variable values. */
  let screencast: DebuggerScreencast | undefined;
  let pageTargetId: string | undefined;
  let ownAcks = 0;
  const toClient = (message: ClientMessage, masked = false): void => {
    if (client.readyState !== WebSocket.OPEN) return;
    if (mode === "page") {
      // The debugger's messages are looked at (and screencast frames masked): as text.
      let text = typeof message === "string" ? message : Buffer.concat(message).toString();
      let head: CdpMessageHead;
      try {
        head = scanCdpMessage(text);
      } catch {
        return;
      }
      if (pageSession !== undefined && head.sessionId === pageSession) {
        // The answers to the acknowledgements sent in the debugger's stead are not its own.
        if (head.id !== undefined && head.id > PAGE_ATTACH_ID) return;
        if (!masked && head.method === "Page.screencastFrame" && screencast?.intercept(text)) return;
      }
      if (head.id === PAGE_ATTACH_ID && head.sessionId === undefined) {
        const message = JSON.parse(text) as { result?: { sessionId?: unknown } };
        if (typeof message.result?.sessionId !== "string") close(1011, "The page could not be attached.");
        else {
          pageSession = message.result.sessionId;
          const attached = pageSession;
          screencast = new DebuggerScreencast({
            session,
            page: () => session.dh.context.pages().find((page) => page.targetId === pageTargetId),
            forward: (frame) => toClient(frame, true),
            ack: (frame) =>
              isolation.fromClient(
                JSON.stringify({
                  id: PAGE_ATTACH_ID + 1 + (ownAcks++ % 1_000_000),
                  method: "Page.screencastFrameAck",
                  params: { sessionId: frame },
                  sessionId: attached,
                }),
              ),
          });
          started = true;
          flow();
        }
        return;
      }
      if (pageSession !== undefined && head.sessionId === pageSession) {
        text = rewriteMessage(text, head, { sessionId: null });
      }
      message = text;
    }
    if (client.bufferedAmount > MAX_UNREAD_BYTES) {
      close(1008, "The client does not read its messages.");
      return;
    }
    const pieces = typeof message === "string" ? [Buffer.from(message)] : message;
    let bytes = 0;
    for (const piece of pieces) bytes += piece.length;
    onTraffic?.("out", bytes);
    if (pieces.length === 1 || bytes < FRAGMENT_ABOVE) {
      client.send(
        pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, bytes),
        { binary: false },
        afterSend,
      );
    } else {
      // One message in several frames, each piece as it is (a slice of what the browser wrote): a
      // large answer is not copied again to replace its id.
      const last = pieces.length - 1;
      pieces.forEach((piece, i) => {
        if (i < last) client.send(piece, { binary: false, fin: false });
        else client.send(piece, { binary: false, fin: true }, afterSend);
      });
    }
    if (client.bufferedAmount > CLIENT_UNREAD_PAUSE) flow();
  };
  const isolation = new CdpIsolation({
    toClient: (text) => toClient(text),
    activated: (targetId) => void session.activatePage(targetId),
    contextId: session.cdp.contextId,
    downloadDir: session.downloadDir,
    maxTabs: session.maxTabs,
  });
  isolation.onChannelClosed = () => close(1011, "The connection to the browser closed.");
  isolation.onProgress = flow;

  let lastTouch = 0;
  /** Messages read and not handed to the isolation yet (before it started, or while blocked). */
  const inbox: Buffer[] = [];
  let started = false;
  client.on("message", (data: Buffer) => {
    if (closed) return;
    const now = Date.now();
    session.lastClientMessageAt = now;
    if (now - lastTouch > TOUCH_EVERY_MS) {
      lastTouch = now;
      session.touch();
    }
    onTraffic?.("in", data.length);
    const wait = budget.take(data.length);
    if (wait > 0 && budgetTimer === undefined) {
      onThrottled?.();
      budgetTimer = setTimeout(() => {
        budgetTimer = undefined;
        flow();
      }, wait);
    }
    inbox.push(data);
    flow();
  });

  session.clientConnected(mode === "page" ? "debugger" : "client");
  const offEnd = session.onEnd(() => close(1001, "The session ended."));
  client.on("close", () => close(1000, ""));
  client.on("error", () => close(1011, ""));

  isolation.start(session.cdp.browser.connection).then(
    () => {
      if (closed) return;
      if (mode === "page") {
        const targetId = session.dh.context.activePage()?.targetId;
        pageTargetId = targetId;
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
      flow();
    },
    () => close(1011, "The browser did not answer."),
  );
  flow();
  return close;
}

/** Answers WebSocket upgrades of /v1/sessions/{id}/cdp on the app's HTTP server. */
export function installCdpProxy(app: FastifyInstance, deps: CdpProxyDeps): void {
  const maxMessageBytes = deps.maxMessageBytes ?? DEFAULT_CDP_MAX_MESSAGE_BYTES;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: maxMessageBytes,
  });
  const open = new Set<WebSocket>();
  const bytesPerSecond = deps.bytesPerSecond ?? DEFAULT_CDP_BYTES_PER_SECOND;
  /** Each session's byte budget, shared by its clients; gone with the session. */
  const budgets = new WeakMap<LiveSession, ByteBudget>();
  const cluster = deps.cluster;
  // The 101 answer says which node it came from and, as every answer about a session of a cluster
  // node does, which node owns the session: this one (another node's is forwarded, not upgraded here).
  if (cluster)
    wss.on("headers", (headers) =>
      headers.push(`${NODE_HEADER}: ${cluster.nodeId}`, `${OWNER_HEADER}: ${cluster.nodeId}`),
    );

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
      /** Who the caller is, when an API key (not a signed link) said it: what a forwarded hop carries. */
      let identity: { projectId: string; keyId: string } | undefined;
      // Forwarded by another node of the cluster: its claim (checked here) stands in for the key.
      const claim = claimOf(cluster, request.headers, request.method ?? "GET", request.url ?? "/");
      if (claim?.identity) {
        if (mode === "page") throw linkNotFound();
        if (!(await deps.verifier.isLive(claim.identity.keyId)))
          throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key.");
        record = await loadActiveSession(deps.store, claim.identity, id);
        keyId = claim.identity.keyId;
      } else if (mode === "page" && (key || token === null)) throw linkNotFound();
      else if (!key && token !== null) {
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
        identity = auth;
      }
      // Another live node runs the session: the connection goes there, the sockets joined end to end.
      const owner = !claim && cluster ? await cluster.remoteOwner(record) : undefined;
      if (owner && cluster) {
        cluster.forwarder.upgrade(
          request,
          socket,
          head,
          owner,
          { ...(identity ? { identity } : {}), placed: false },
          (error) => {
            refuse(socket, error.statusCode, error.code, error.message, { "retry-after": "1" });
          },
        );
        return;
      }
      const session = await deps.sessions.require(record);
      if (session.ended || socket.destroyed) {
        throw new ApiError(410, "SESSION_ENDED", `Session ${JSON.stringify(id)} has ended.`);
      }
      wss.handleUpgrade(request, socket, head, (client) => {
        open.add(client);
        app.log.info({ sessionId: id }, "CDP proxy connected");
        let budget = budgets.get(session);
        if (!budget) {
          budget = new ByteBudget(bytesPerSecond, maxMessageBytes);
          budgets.set(session, budget);
        }
        const cut = bridge(client, session, {
          mode,
          budget,
          onTraffic: deps.onTraffic,
          onThrottled: deps.onThrottled,
        });
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
