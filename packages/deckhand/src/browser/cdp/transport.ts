// The byte carrier under a CdpConnection: a DevTools WebSocket (a browser's TCP endpoint, or the
// service's CDP proxy) or the DevTools pipe of a browser Deckhand launched with
// `--remote-debugging-pipe` (no TCP endpoint at all). Both carry whole JSON messages; the
// connection above neither knows nor cares which one it has.

import type { LookupFunction } from "node:net";
import type { Readable, Writable } from "node:stream";
import WebSocket from "ws";

export interface CdpTransport {
  /** Sends one message. `done` learns whether it could be handed to the carrier. */
  send(text: string, done?: (error?: Error) => void): void;
  /**
   * Sends one message given as UTF-8 pieces, written one after the other (a relay passes a large
   * message on as slices of the bytes it read, never decoding them). Optional: without it, the
   * pieces are joined and sent as text.
   */
  sendBytes?(pieces: readonly Buffer[], done?: (error?: Error) => void): void;
  /**
   * Receives every message from now on (those that arrived before are delivered first): its text,
   * or its UTF-8 bytes as read (a browser's pipe), so that a relay can pass it on undecoded; a
   * large one read in many chunks comes as those chunks, in order, not joined (see
   * CdpTransportMessage).
   */
  onMessage(handler: (message: CdpTransportMessage) => void): void;
  /** Called once when the carrier is gone, for whatever reason. */
  onClose(handler: () => void): void;
  /** Closes the carrier. For a pipe this also ends the browser: the pipe is its lifeline. */
  close(): void;
  readonly closed: boolean;
  /**
   * Bytes sent and not written out to the browser yet (it reads them at its own pace). Optional
   * for a transport of one's own: without it, a relay's flow control sees no backlog.
   */
  readonly backlog?: number;
  /**
   * Calls `handler` once the backlog is down to DRAINED_BACKLOG bytes (at once, in a microtask, if it
   * is already), or the carrier closed: a relay stops reading its client until then.
   */
  afterDrain?(handler: () => void): void;
}

/**
 * A message as a carrier read it: its text, its UTF-8 bytes, or (a large message off a browser's
 * pipe) its bytes as the chunks they were read in, one after the other. Joining 8 MiB of chunks
 * means a fresh 8 MiB buffer per message, and fresh buffers are what make the garbage collector
 * run; a relay passes the chunks on as they are. Use joinMessage() to have one buffer.
 */
export type CdpTransportMessage = string | Buffer | readonly Buffer[];

/** The message as one piece: its text, or its bytes (chunks joined). */
export function joinMessage(message: CdpTransportMessage): string | Buffer {
  if (typeof message === "string" || Buffer.isBuffer(message)) return message;
  return message.length === 1 ? message[0]! : Buffer.concat(message);
}

/** The first `length` bytes of a message given as bytes or chunks, as latin1 text (an ASCII head). */
export function messageHead(message: Buffer | readonly Buffer[], length: number): string {
  if (Buffer.isBuffer(message)) return message.toString("latin1", 0, length);
  let head = "";
  for (const piece of message) {
    if (head.length >= length) break;
    head += piece.toString("latin1", 0, length - head.length);
  }
  return head;
}

/**
 * A message of this many bytes or more, read off a pipe in several chunks, is delivered as those
 * chunks; a smaller one is joined (most messages are small, and one buffer is simpler to read).
 */
export const PIECES_FROM = 1024 * 1024;

/** The backlog at which afterDrain() handlers run. */
export const DRAINED_BACKLOG = 1024 * 1024;

/** Messages and the close wait for their handlers, so nothing is lost between launch and connect. */
abstract class BufferedTransport implements CdpTransport {
  private messageHandler: ((message: CdpTransportMessage) => void) | undefined;
  private readonly early: CdpTransportMessage[] = [];
  private closeHandlers: (() => void)[] = [];
  private drainHandlers: (() => void)[] = [];
  private isClosed = false;

  abstract send(text: string, done?: (error?: Error) => void): void;
  abstract close(): void;
  abstract get backlog(): number;

  afterDrain(handler: () => void): void {
    this.drainHandlers.push(handler);
    if (this.isClosed || this.backlog <= DRAINED_BACKLOG) queueMicrotask(() => this.drained());
  }

  /** Runs the afterDrain() handlers if the backlog is low enough (called as writes complete). */
  protected drained(): void {
    if (this.drainHandlers.length === 0) return;
    if (!this.isClosed && this.backlog > DRAINED_BACKLOG) return;
    const handlers = this.drainHandlers;
    this.drainHandlers = [];
    for (const handler of handlers) handler();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  onMessage(handler: (message: CdpTransportMessage) => void): void {
    this.messageHandler = handler;
    for (const message of this.early.splice(0)) handler(message);
  }

  onClose(handler: () => void): void {
    if (this.isClosed) queueMicrotask(handler);
    else this.closeHandlers.push(handler);
  }

  protected received(message: CdpTransportMessage): void {
    if (this.messageHandler) this.messageHandler(message);
    else this.early.push(message);
  }

  protected ended(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    const handlers = this.closeHandlers;
    this.closeHandlers = [];
    for (const handler of handlers) handler();
    this.drained();
  }
}

export interface WebSocketTransportOptions {
  timeoutMs?: number;
  /** Sent with the handshake (e.g. the service's API key for its CDP proxy). */
  headers?: Record<string, string>;
  /** Largest message accepted from the other side, in bytes. */
  maxPayload?: number;
  /** Resolves the URL's host (e.g. to connect to an address checked beforehand). */
  lookup?: LookupFunction;
}

export class WebSocketTransport extends BufferedTransport {
  readonly url: string;
  private readonly ws: WebSocket;

  private constructor(url: string, ws: WebSocket) {
    super();
    this.url = url;
    this.ws = ws;
    ws.on("message", (data: WebSocket.RawData) =>
      this.received(Buffer.isBuffer(data) ? data : Buffer.from(data.toString())),
    );
    ws.on("close", () => this.ended());
    ws.on("error", () => {
      // "close" follows and does the cleanup; an error event without a listener would throw.
    });
  }

  static async connect(url: string, options: WebSocketTransportOptions = {}): Promise<WebSocketTransport> {
    const ws = new WebSocket(url, {
      perMessageDeflate: false,
      maxPayload: options.maxPayload ?? 512 * 1024 * 1024,
      handshakeTimeout: options.timeoutMs ?? 30_000,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", (err) => reject(err));
    });
    return new WebSocketTransport(url, ws);
  }

  get backlog(): number {
    return this.ws.bufferedAmount;
  }

  send(text: string, done?: (error?: Error) => void): void {
    this.ws.send(text, (error) => {
      done?.(error ?? undefined);
      this.drained();
    });
  }

  sendBytes(pieces: readonly Buffer[], done?: (error?: Error) => void): void {
    // One WebSocket frame: the pieces are joined (a copy, but nothing is decoded or encoded).
    this.ws.send(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces), { binary: false }, (error) => {
      done?.(error ?? undefined);
      this.drained();
    });
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
  }
}

/**
 * Chrome's `--remote-debugging-pipe`: Chrome reads commands from its fd 3 and writes answers and
 * events to its fd 4, each message a JSON text followed by a NUL byte.
 */
const NUL = Buffer.from([0]);

export class PipeTransport extends BufferedTransport {
  private readonly toBrowser: Writable;
  private readonly fromBrowser: Readable;
  /** Bytes of a message whose NUL has not arrived yet, and how many. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private readonly probeId: number;
  private probeAnswer: { prefix: string; resolve(): void; reject(error: Error): void } | undefined;

  /** `probeId`: the message id `probe()` uses, one the connection above never does. */
  constructor(toBrowser: Writable, fromBrowser: Readable, probeId = 0) {
    super();
    this.toBrowser = toBrowser;
    this.fromBrowser = fromBrowser;
    this.probeId = probeId;
    fromBrowser.on("data", (chunk: Buffer) => this.onData(chunk));
    fromBrowser.on("close", () => this.ended());
    fromBrowser.on("end", () => this.ended());
    // EPIPE and friends: the browser is gone, and "close" says so.
    fromBrowser.on("error", () => this.ended());
    toBrowser.on("error", () => this.ended());
  }

  /**
   * Resolves once the browser answers a first command (it reads the pipe only when it is ready);
   * rejects if the pipe closes first. The answer is not passed on.
   */
  probe(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error("the DevTools pipe is closed"));
        return;
      }
      this.probeAnswer = { prefix: `{"id":${this.probeId},`, resolve, reject };
      this.onClose(() => reject(new Error("the DevTools pipe closed")));
      this.send(JSON.stringify({ id: this.probeId, method: "Browser.getVersion" }));
    });
  }

  protected override received(message: Buffer | readonly Buffer[]): void {
    const probe = this.probeAnswer;
    if (probe && messageHead(message, probe.prefix.length) === probe.prefix) {
      probe.resolve();
      this.probeAnswer = undefined;
      return;
    }
    super.received(message);
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0, start); end !== -1; end = chunk.indexOf(0, start)) {
      const piece = chunk.subarray(start, end);
      const bytes = this.partialBytes + piece.length;
      let whole: Buffer | Buffer[] = piece;
      if (this.partial.length > 0) {
        if (piece.length > 0) this.partial.push(piece);
        whole = bytes >= PIECES_FROM ? this.partial : Buffer.concat(this.partial, bytes);
      }
      this.partial = [];
      this.partialBytes = 0;
      // The bytes, not their text: the connection decodes what it reads itself, and a relay passes
      // its answers on as they are (an 8 MiB answer would otherwise be decoded and encoded again),
      // a large one in the chunks it came in (see CdpTransportMessage).
      this.received(whole);
      start = end + 1;
    }
    if (start < chunk.length) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
    }
  }

  send(text: string, done?: (error?: Error) => void): void {
    if (this.closed || this.toBrowser.destroyed) {
      done?.(new Error("the DevTools pipe is closed"));
      return;
    }
    this.toBrowser.write(`${text}\0`, (error) => {
      done?.(error ?? undefined);
      this.drained();
    });
  }

  sendBytes(pieces: readonly Buffer[], done?: (error?: Error) => void): void {
    if (this.closed || this.toBrowser.destroyed) {
      done?.(new Error("the DevTools pipe is closed"));
      return;
    }
    // Written as they are (one writev once uncorked): the pipe takes the slices, nothing is copied.
    this.toBrowser.cork();
    for (const piece of pieces) this.toBrowser.write(piece);
    this.toBrowser.write(NUL, (error) => {
      done?.(error ?? undefined);
      this.drained();
    });
    this.toBrowser.uncork();
  }

  get backlog(): number {
    return this.toBrowser.writableLength;
  }

  /** Keeps this process alive while the connection is open (as an open WebSocket would). */
  ref(): void {
    (this.toBrowser as { ref?: () => void }).ref?.();
    (this.fromBrowser as { ref?: () => void }).ref?.();
  }

  close(): void {
    if (this.closed) return;
    this.toBrowser.destroy();
    this.fromBrowser.destroy();
    this.ended();
  }
}
