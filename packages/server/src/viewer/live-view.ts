// The live view of a running session: its active page's CDP screencast (JPEG frames the browser
// sends as the page changes), passed to the session page as an MJPEG stream
// (multipart/x-mixed-replace), which an <img> shows with no script. One screencast per session
// whoever watches; it starts with the first viewer, follows the session's active page, and stops
// with the last viewer or the session's end.

import type { ServerResponse } from "node:http";
import type { Page } from "deckhand";
import type { LiveSession } from "../sessions/live-session.ts";

const BOUNDARY = "deckhand-frame";
/** How often the screencast checks that it still shows the session's active page. */
const FOLLOW_EVERY_MS = 500;
/** Viewers of one session at once. */
export const MAX_VIEWERS_PER_SESSION = 8;
/** A viewer that does not read is dropped once this much waits for it. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export const MJPEG_CONTENT_TYPE = `multipart/x-mixed-replace; boundary=${BOUNDARY}`;

class Screencast {
  private readonly session: LiveSession;
  private readonly viewers = new Set<ServerResponse>();
  private page: Page | undefined;
  private offFrame: (() => void) | undefined;
  private follow: NodeJS.Timeout | undefined;
  private last: Buffer | undefined;
  private readonly onEmpty: () => void;
  private offEnd: (() => void) | undefined;

  constructor(session: LiveSession, onEmpty: () => void) {
    this.session = session;
    this.onEmpty = onEmpty;
  }

  get size(): number {
    return this.viewers.size;
  }

  add(response: ServerResponse): void {
    this.viewers.add(response);
    response.on("close", () => this.remove(response));
    if (this.last) this.write(response, this.last);
    if (this.viewers.size === 1) this.start();
  }

  private remove(response: ServerResponse): void {
    if (!this.viewers.delete(response)) return;
    if (!response.writableEnded) response.end();
    if (this.viewers.size === 0) this.stop();
  }

  private start(): void {
    this.offEnd = this.session.onEnd(() => {
      for (const viewer of [...this.viewers]) this.remove(viewer);
    });
    this.follow = setInterval(() => this.watch(), FOLLOW_EVERY_MS);
    this.follow.unref();
    this.watch();
  }

  /** Starts the screencast on the session's active page, again when that changed. */
  private watch(): void {
    const page = this.session.ended ? undefined : this.session.dh.context.activePage();
    if (page === this.page && page && !page.isClosed()) return;
    this.detach();
    if (!page || page.isClosed()) return;
    this.page = page;
    const session = page.session;
    this.offFrame = session.on("Page.screencastFrame", (frame) => {
      void session.send("Page.screencastFrameAck", { sessionId: frame.sessionId }).catch(() => undefined);
      if (this.page !== page) return;
      this.last = Buffer.from(frame.data, "base64");
      for (const viewer of this.viewers) this.write(viewer, this.last);
    });
    void session
      .send("Page.startScreencast", { format: "jpeg", quality: 60, maxWidth: 1280, maxHeight: 1280 })
      .catch(() => undefined);
  }

  private detach(): void {
    this.offFrame?.();
    this.offFrame = undefined;
    const page = this.page;
    this.page = undefined;
    if (page && !page.isClosed()) void page.session.send("Page.stopScreencast").catch(() => undefined);
  }

  private write(viewer: ServerResponse, jpeg: Buffer): void {
    if (viewer.writableEnded || viewer.destroyed) return;
    if (viewer.writableLength > MAX_BUFFERED_BYTES) {
      this.remove(viewer);
      return;
    }
    viewer.write(`--${BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\n\r\n`);
    viewer.write(jpeg);
    viewer.write("\r\n");
  }

  private stop(): void {
    clearInterval(this.follow);
    this.follow = undefined;
    this.offEnd?.();
    this.offEnd = undefined;
    this.detach();
    this.last = undefined;
    this.onEmpty();
  }

  closeAll(): void {
    for (const viewer of [...this.viewers]) this.remove(viewer);
  }
}

/** The screencasts of this node's sessions, one per watched session. */
export class LiveViews {
  private readonly casts = new Map<string, Screencast>();

  /** Whether another viewer may watch the session. */
  hasRoom(sessionId: string): boolean {
    return (this.casts.get(sessionId)?.size ?? 0) < MAX_VIEWERS_PER_SESSION;
  }

  /** Streams the session's active page to `response` until it or the session goes. */
  watch(session: LiveSession, response: ServerResponse): void {
    let cast = this.casts.get(session.id);
    if (!cast) {
      const created = new Screencast(session, () => {
        if (this.casts.get(session.id) === created) this.casts.delete(session.id);
      });
      cast = created;
      this.casts.set(session.id, cast);
    }
    cast.add(response);
  }

  /** Ends every stream (the service is closing). */
  closeAll(): void {
    for (const cast of [...this.casts.values()]) cast.closeAll();
  }
}
