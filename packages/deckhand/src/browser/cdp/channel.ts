// A raw lane through a CdpConnection for a program that relays CDP for someone else (the
// service's CDP proxy): its own commands, answered as the browser wrote them, and the events of
// the target sessions it claimed, while Deckhand keeps using the same connection. A browser
// launched without a debugging port has one connection only, its pipe; a channel per proxy client
// lets every client share it without seeing Deckhand's own sessions or each other's.

import type { CdpTransportMessage } from "./transport.ts";

export interface CdpChannelListener {
  /**
   * The browser's answer to `send()`'s command `id`, as it wrote it: its text, or its UTF-8 bytes
   * when the transport gives bytes (a browser's pipe), not decoded, to be passed on as they are; a
   * large answer as the chunks it was read in (CdpTransportMessage; joinMessage() joins them).
   */
  answer(id: number, message: CdpTransportMessage): void;
  /**
   * An event of a session this channel claimed, or the `Target.detachedFromTarget` of one (which
   * the browser may send on another session).
   */
  event(message: CdpChannelEvent): void;
  /** The connection closed: nothing more comes. */
  closed(): void;
}

export interface CdpChannelEvent {
  method: string;
  /** Parsed from `text` when first read (an event can be megabytes: a relay passes `text` on instead). */
  readonly params?: Record<string, unknown>;
  sessionId?: string;
  /** The event as the browser wrote it. */
  readonly text: string;
}

/** An event read by its routing fields only (see scan.ts): its params are parsed when asked for. */
export class LazyChannelEvent implements CdpChannelEvent {
  readonly method: string;
  readonly sessionId: string | undefined;
  readonly text: string;
  private parsed: Record<string, unknown> | undefined;

  constructor(method: string, sessionId: string | undefined, text: string) {
    this.method = method;
    this.sessionId = sessionId;
    this.text = text;
  }

  get params(): Record<string, unknown> {
    this.parsed ??= ((JSON.parse(this.text) as { params?: Record<string, unknown> }).params ?? {}) as Record<
      string,
      unknown
    >;
    return this.parsed;
  }
}

/** @internal What a channel needs of its connection. */
export interface ChannelHost {
  channelSend(channel: CdpChannel, method: string, params: unknown, sessionId: string | undefined): number;
  channelSendRaw(channel: CdpChannel, build: (id: number) => string | readonly Buffer[]): number;
  readonly backlog: number;
  afterDrain(handler: () => void): void;
  channelClaim(channel: CdpChannel, sessionId: string): void;
  channelRelease(channel: CdpChannel, sessionId: string): void;
  channelClose(channel: CdpChannel): void;
}

export class CdpChannel {
  readonly listener: CdpChannelListener;
  private readonly host: ChannelHost;
  /** @internal */
  readonly claimed = new Set<string>();
  private isClosed = false;

  /** @internal Channels are opened by CdpConnection.openChannel(). */
  constructor(host: ChannelHost, listener: CdpChannelListener) {
    this.host = host;
    this.listener = listener;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Sends a command (on the browser target when `sessionId` is undefined). Returns the message id
   * its answer will carry, from the connection's own numbering; -1 once closed.
   */
  send(method: string, params: unknown, sessionId?: string): number {
    if (this.isClosed) return -1;
    return this.host.channelSend(this, method, params, sessionId);
  }

  /**
   * Sends a message the caller writes itself, from the id it is given (the connection's own
   * numbering): a relay passes a client's message on with only its id (and session) changed,
   * without parsing it; as text, or as UTF-8 pieces written one after the other (slices of the
   * bytes it read: nothing decoded or copied). Returns the id; -1 once closed.
   */
  sendRaw(build: (id: number) => string | readonly Buffer[]): number {
    if (this.isClosed) return -1;
    return this.host.channelSendRaw(this, build);
  }

  /** Bytes sent on the connection (by anyone) that the browser has not read yet. */
  get backlog(): number {
    return this.host.backlog;
  }

  /** Calls `handler` once the connection's backlog is low again (or it closed). */
  afterDrain(handler: () => void): void {
    this.host.afterDrain(handler);
  }

  /** Events of this target session come to this channel from now on. */
  claim(sessionId: string): void {
    if (this.isClosed) return;
    this.claimed.add(sessionId);
    this.host.channelClaim(this, sessionId);
  }

  release(sessionId: string): void {
    this.claimed.delete(sessionId);
    this.host.channelRelease(this, sessionId);
  }

  /** Stops delivery (answers still owed are dropped). Detaching its sessions is the caller's job. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.host.channelClose(this);
  }

  /** @internal */
  markClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.listener.closed();
  }
}
