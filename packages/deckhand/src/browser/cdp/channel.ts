// A raw lane through a CdpConnection for a program that relays CDP for someone else (the
// service's CDP proxy): its own commands, answered as the browser wrote them, and the events of
// the target sessions it claimed, while Deckhand keeps using the same connection. A browser
// launched without a debugging port has one connection only, its pipe; a channel per proxy client
// lets every client share it without seeing Deckhand's own sessions or each other's.

export interface CdpChannelListener {
  /** The browser's answer to `send()`'s command `id`, as the text it wrote. */
  answer(id: number, text: string): void;
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
  params?: Record<string, unknown>;
  sessionId?: string;
}

/** @internal What a channel needs of its connection. */
export interface ChannelHost {
  channelSend(channel: CdpChannel, method: string, params: unknown, sessionId: string | undefined): number;
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
