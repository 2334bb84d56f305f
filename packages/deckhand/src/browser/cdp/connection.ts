// One connection to the browser (a WebSocket or the DevTools pipe, see transport.ts), carrying every
// target through flattened sessions (`Target.setAutoAttach({ flatten: true })`): a message's
// `sessionId` says which target it is for. Pending calls of a session fail at once when the session
// detaches or the connection closes, so that nothing waits forever on a browser or tab that has gone.

import { EventEmitter } from "node:events";
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.js";
import { ServiceBrowserClosedError, ServiceError, ServiceTargetClosedError } from "../../errors.ts";
import {
  CdpChannel,
  type CdpChannelEvent,
  type CdpChannelListener,
  type ChannelHost,
  LazyChannelEvent,
} from "./channel.ts";
import { type CdpMessageHead, scanCdpMessage } from "./scan.ts";
import {
  type CdpTransport,
  type CdpTransportMessage,
  joinMessage,
  messageHead,
  WebSocketTransport,
} from "./transport.ts";

/** The start of an answer as Chrome writes it (read from a message's first 32 bytes at most). */
const ANSWER_HEAD = /^\{"id":(\d+),/;

export type CdpMethod = keyof ProtocolMapping.Commands;
export type CdpParams<M extends CdpMethod> = ProtocolMapping.Commands[M]["paramsType"][0];
export type CdpResult<M extends CdpMethod> = ProtocolMapping.Commands[M]["returnType"];
export type CdpEvent = keyof ProtocolMapping.Events;
export type CdpEventParams<E extends CdpEvent> = ProtocolMapping.Events[E][0];

/** An error the browser answered a command with. */
export class CdpProtocolError extends ServiceError {
  override readonly code = "CDP";
  readonly method: string;
  readonly protocolCode: number;

  constructor(method: string, protocolCode: number, message: string) {
    // A relay (the service's CDP proxy) may have named the method already.
    super(message.startsWith(`${method}: `) ? message : `${method}: ${message}`);
    this.method = method;
    this.protocolCode = protocolCode;
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  method: string;
  session: CdpSession;
}

interface Message {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: string };
  sessionId?: string;
}

export class CdpConnection extends EventEmitter implements ChannelHost {
  /** The DevTools WebSocket URL; undefined over a pipe. */
  readonly url: string | undefined;
  /** The browser target's own session (no session id). */
  readonly root: CdpSession;
  private readonly transport: CdpTransport;
  private readonly sessions = new Map<string, CdpSession>();
  private readonly pending = new Map<number, Pending>();
  private lastId = 0;
  private closedError: Error | undefined;
  /** Commands sent through channels, by message id, and the sessions each channel claimed. */
  private readonly channelCalls = new Map<number, CdpChannel>();
  private readonly channelSessions = new Map<string, CdpChannel>();
  private readonly channels = new Set<CdpChannel>();

  /** A connection over a transport that is open already (a WebSocket, or a launched browser's pipe). */
  constructor(transport: CdpTransport, url?: string) {
    super();
    this.setMaxListeners(0);
    this.url = url;
    this.transport = transport;
    this.root = new CdpSession(this, undefined, "browser");
    transport.onMessage((message) => this.onMessage(message));
    transport.onClose(() => this.onClose());
  }

  /** `headers` go with the WebSocket handshake (e.g. the service's API key for its CDP proxy). */
  static async connect(
    url: string,
    timeoutMs = 30_000,
    headers?: Record<string, string>,
  ): Promise<CdpConnection> {
    const transport = await WebSocketTransport.connect(url, { timeoutMs, ...(headers ? { headers } : {}) });
    return new CdpConnection(transport, url);
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  session(sessionId: string): CdpSession | undefined {
    return this.sessions.get(sessionId);
  }

  /** Creates the object for a session the browser reported as attached. */
  adoptSession(sessionId: string, targetType: string): CdpSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = new CdpSession(this, sessionId, targetType);
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  /** @internal */
  rawSend(session: CdpSession, method: string, params: unknown): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    if (session.detachedError) return Promise.reject(session.detachedError);
    const id = ++this.lastId;
    const message: Message = { id, method, params: params ?? {} };
    if (session.id) message.sessionId = session.id;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method, session });
      this.transport.send(JSON.stringify(message), (err) => {
        if (err && this.pending.delete(id)) reject(this.closedError ?? browserClosed(err.message));
      });
    });
  }

  /**
   * A raw lane through this connection for a relay of CDP (see channel.ts). Its commands share
   * this connection's message ids, and its sessions are its own: Deckhand's pages never see them.
   */
  openChannel(listener: CdpChannelListener): CdpChannel {
    const channel = new CdpChannel(this, listener);
    if (this.closedError) channel.markClosed();
    else this.channels.add(channel);
    return channel;
  }

  /** @internal */
  channelSend(channel: CdpChannel, method: string, params: unknown, sessionId: string | undefined): number {
    const id = ++this.lastId;
    const message: Message = { id, method, params: params ?? {} };
    if (sessionId) message.sessionId = sessionId;
    this.channelCalls.set(id, channel);
    this.transport.send(JSON.stringify(message));
    return id;
  }

  /** @internal */
  channelSendRaw(channel: CdpChannel, build: (id: number) => string | readonly Buffer[]): number {
    const id = ++this.lastId;
    this.channelCalls.set(id, channel);
    const message = build(id);
    if (typeof message === "string") this.transport.send(message);
    else if (this.transport.sendBytes) this.transport.sendBytes(message);
    else this.transport.send(Buffer.concat(message).toString());
    return id;
  }

  /** Bytes sent and not yet read by the browser (0 for a transport that does not say). */
  get backlog(): number {
    return this.transport.backlog ?? 0;
  }

  /** Calls `handler` once the backlog is low again, or the connection closed. */
  afterDrain(handler: () => void): void {
    if (this.transport.afterDrain && !this.closed) this.transport.afterDrain(handler);
    else queueMicrotask(handler);
  }

  /** @internal */
  channelClaim(channel: CdpChannel, sessionId: string): void {
    this.channelSessions.set(sessionId, channel);
  }

  /** @internal */
  channelRelease(channel: CdpChannel, sessionId: string): void {
    if (this.channelSessions.get(sessionId) === channel) this.channelSessions.delete(sessionId);
  }

  /** @internal */
  channelClose(channel: CdpChannel): void {
    this.channels.delete(channel);
    for (const sessionId of channel.claimed) this.channelRelease(channel, sessionId);
    for (const [id, owner] of this.channelCalls) if (owner === channel) this.channelCalls.delete(id);
  }

  /**
   * Closes the connection. Over a WebSocket the browser keeps running unless it was told to close;
   * over a pipe the browser shuts down (the pipe is its lifeline).
   */
  close(): void {
    this.transport.close();
  }

  private onMessage(received: CdpTransportMessage): void {
    // Answers to a channel go on as the browser wrote them, unparsed and, when they came as bytes,
    // undecoded (and unjoined, when they came in chunks): they include screenshots of tens of
    // megabytes. Chrome writes the id first.
    const head = ANSWER_HEAD.exec(typeof received === "string" ? received : messageHead(received, 32));
    if (head) {
      const id = Number(head[1]);
      const channel = this.channelCalls.get(id);
      if (channel) {
        this.channelCalls.delete(id);
        channel.listener.answer(id, received);
        return;
      }
    }
    const data = joinMessage(received);
    const text = typeof data === "string" ? data : data.toString("utf8");
    // Events of a channel's sessions go on unparsed too (their params are parsed if asked for).
    if (!head && this.channelSessions.size > 0) {
      let scanned: CdpMessageHead | undefined;
      try {
        scanned = scanCdpMessage(text);
      } catch {
        // JSON.parse below says what is wrong.
      }
      const channel =
        scanned?.id === undefined &&
        scanned?.sessionId !== undefined &&
        scanned.method !== "Target.detachedFromTarget"
          ? this.channelSessions.get(scanned.sessionId)
          : undefined;
      if (channel && scanned?.method !== undefined) {
        channel.listener.event(new LazyChannelEvent(scanned.method, scanned.sessionId, text));
        return;
      }
    }
    const message = JSON.parse(text) as Message;
    if (message.id !== undefined) {
      const channel = this.channelCalls.get(message.id);
      if (channel) {
        this.channelCalls.delete(message.id);
        channel.listener.answer(message.id, text);
        return;
      }
      const call = this.pending.get(message.id);
      if (!call) return;
      this.pending.delete(message.id);
      if (message.error) {
        const detail = message.error.data
          ? `${message.error.message} (${message.error.data})`
          : message.error.message;
        call.reject(new CdpProtocolError(call.method, message.error.code, detail));
      } else {
        call.resolve(message.result);
      }
      return;
    }
    if (!message.method) return;
    if (message.method === "Target.detachedFromTarget") {
      const detached = (message.params as { sessionId: string }).sessionId;
      const owner = this.channelSessions.get(detached);
      if (owner) {
        this.channelSessions.delete(detached);
        owner.claimed.delete(detached);
        owner.listener.event({ ...(message as CdpChannelEvent), text });
        return;
      }
    }
    const channel = message.sessionId ? this.channelSessions.get(message.sessionId) : undefined;
    if (channel) {
      channel.listener.event({ ...(message as CdpChannelEvent), text });
      return;
    }
    const session = message.sessionId ? this.sessions.get(message.sessionId) : this.root;
    if (message.method === "Target.detachedFromTarget") {
      const params = message.params as { sessionId: string };
      this.detach(params.sessionId);
    }
    session?.dispatch(message.method, message.params);
  }

  private detach(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.failSession(
      session,
      new ServiceTargetClosedError("The page or frame was closed while a call to it was pending."),
    );
  }

  /** Rejects the session's pending calls and every later one (a crashed or closed target). */
  failSession(session: CdpSession, error: Error): void {
    session.markDetached(error);
    for (const [id, call] of this.pending) {
      if (call.session === session) {
        this.pending.delete(id);
        call.reject(session.detachedError!);
      }
    }
  }

  private onClose(): void {
    if (this.closedError) return;
    this.closedError = browserClosed();
    for (const call of this.pending.values()) call.reject(this.closedError);
    this.pending.clear();
    for (const session of this.sessions.values()) session.markDetached(this.closedError);
    this.sessions.clear();
    this.root.markDetached(this.closedError);
    this.channelCalls.clear();
    this.channelSessions.clear();
    for (const channel of [...this.channels]) channel.markClosed();
    this.channels.clear();
    this.emit("close");
  }
}

function browserClosed(detail?: string): ServiceBrowserClosedError {
  return new ServiceBrowserClosedError(
    `The connection to the browser closed${detail ? ` (${detail})` : ""}: it crashed, was killed or was closed. ` +
      "Start a new Deckhand instance (init()) to continue.",
  );
}

type Handler = (params: never) => void;

/** The protocol endpoint of one target (browser, page, iframe, worker). */
export class CdpSession {
  readonly id: string | undefined;
  readonly targetType: string;
  detachedError: Error | undefined;
  private readonly connection: CdpConnection;
  private readonly handlers = new Map<string, Set<Handler>>();

  constructor(connection: CdpConnection, id: string | undefined, targetType: string) {
    this.connection = connection;
    this.id = id;
    this.targetType = targetType;
  }

  get detached(): boolean {
    return this.detachedError !== undefined;
  }

  send<M extends CdpMethod>(
    method: M,
    ...params: undefined extends CdpParams<M> ? [CdpParams<M>?] : [CdpParams<M>]
  ): Promise<CdpResult<M>>;
  send<M extends CdpMethod>(method: M, params?: CdpParams<M>): Promise<CdpResult<M>> {
    return this.connection.rawSend(this, method, params) as Promise<CdpResult<M>>;
  }

  on<E extends CdpEvent>(event: E, handler: (params: CdpEventParams<E>) => void): () => void {
    let set = this.handlers.get(event);
    if (!set) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler as Handler);
    return () => set.delete(handler as Handler);
  }

  /** Resolves with the next event that satisfies `predicate`; rejects if the session detaches first. */
  waitFor<E extends CdpEvent>(
    event: E,
    predicate: (params: CdpEventParams<E>) => boolean = () => true,
    signal?: AbortSignal,
  ): Promise<CdpEventParams<E>> {
    if (this.detachedError) return Promise.reject(this.detachedError);
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        off();
        offDetach();
        signal?.removeEventListener("abort", onAbort);
      };
      const off = this.on(event, (params) => {
        if (!predicate(params)) return;
        cleanup();
        resolve(params);
      });
      const offDetach = this.onDetached((error) => {
        cleanup();
        reject(error);
      });
      const onAbort = () => {
        cleanup();
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private readonly detachHandlers = new Set<(error: Error) => void>();

  onDetached(handler: (error: Error) => void): () => void {
    this.detachHandlers.add(handler);
    return () => this.detachHandlers.delete(handler);
  }

  /** @internal */
  dispatch(method: string, params: unknown): void {
    const set = this.handlers.get(method);
    if (!set) return;
    for (const handler of [...set]) (handler as (p: unknown) => void)(params);
  }

  /** @internal */
  markDetached(error: Error): void {
    if (this.detachedError) return;
    this.detachedError = error;
    for (const handler of [...this.detachHandlers]) handler(error);
    this.detachHandlers.clear();
  }
}
