// The live view of a running session: its active page's CDP screencast (JPEG frames the browser
// sends as the page changes), passed to the session page as an MJPEG stream
// (multipart/x-mixed-replace), which an <img> shows with no script. One screencast per session
// whoever watches; it starts with the first viewer, follows the session's active page, and stops
// with the last viewer or the session's end.
//
// Variable values: once an operation of the session used some (LiveSession.pageSecrets), the
// screencast's own frames are no longer shown; they only say that the page changed. What viewers
// get instead is a capture taken with the values hidden, the way a step's screenshot is
// (captureStepScreenshot: fields that hold a value get a password-style mask, text that shows one is
// covered), at most one every MIN_MASKED_FRAME_MS. While an operation that carries values runs
// (LiveSession.holdLiveView), viewers get no new frame at all: a value half typed is not a value
// any mask recognises. A capture begun before a hold started or ended is not shown.
//
// A capture masks the page for its moment, which itself changes the picture: frames identical to
// one seen recently (the page masked, the page unmasked again, a caret blinking) are not a change,
// so that masking does not feed itself.

import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { captureStepScreenshot, type Page } from "deckhand";
import type { LiveSession } from "../sessions/live-session.ts";

const BOUNDARY = "deckhand-frame";
/** How often the screencast checks that it still shows the session's active page. */
const FOLLOW_EVERY_MS = 500;
/** Viewers of one session at once. */
export const MAX_VIEWERS_PER_SESSION = 8;
/** A viewer that does not read is dropped once this much waits for it. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** Least time between two masked captures (each one costs the browser a compositor frame and an encode). */
const MIN_MASKED_FRAME_MS = 200;
/** How many recent screencast frames are remembered to tell a change from the masking's own flicker. */
const RECENT_FRAMES = 8;
/** A masked capture taking longer is given up (a page stuck in a dialog). */
const MASKED_CAPTURE_TIMEOUT_MS = 3000;

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
  /** Masked mode: the page changed since the last capture. */
  private dirty = false;
  private capturing = false;
  private lastCaptureAt = 0;
  private captureTimer: NodeJS.Timeout | undefined;
  /** Hashes of the recent screencast frames (masked mode). */
  private readonly recent: string[] = [];

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
    if (page === this.page && page && !page.isClosed()) {
      // What changed during a hold is captured once it ended.
      this.pump();
      return;
    }
    this.detach();
    if (!page || page.isClosed()) return;
    this.page = page;
    const session = page.session;
    this.offFrame = session.on("Page.screencastFrame", (frame) => {
      void session.send("Page.screencastFrameAck", { sessionId: frame.sessionId }).catch(() => undefined);
      if (this.page !== page) return;
      if (this.masking()) {
        this.changed(frame.data);
        return;
      }
      this.show(Buffer.from(frame.data, "base64"));
    });
    void session
      .send("Page.startScreencast", { format: "jpeg", quality: 60, maxWidth: 1280, maxHeight: 1280 })
      .catch(() => undefined);
  }

  /** Whether frames must be masked captures: the session used variable values, or is using some now. */
  private masking(): boolean {
    return this.session.pageSecrets.size > 0 || this.session.liveViewState().held;
  }

  private show(jpeg: Buffer): void {
    this.last = jpeg;
    for (const viewer of this.viewers) this.write(viewer, jpeg);
  }

  /** Masked mode: a screencast frame arrived; a capture follows when it shows something new. */
  private changed(data: string): void {
    const hash = createHash("sha256").update(data).digest("base64");
    if (this.recent.includes(hash)) return;
    this.recent.push(hash);
    if (this.recent.length > RECENT_FRAMES) this.recent.shift();
    this.dirty = true;
    this.pump();
  }

  /** Takes a masked capture when the page changed, none is running, no hold is on and it is time. */
  private pump(): void {
    if (!this.dirty || this.capturing || !this.page || this.viewers.size === 0) return;
    const state = this.session.liveViewState();
    // Held: the follow timer calls again, and the hold's end made the page dirty enough.
    if (state.held) return;
    const wait = this.lastCaptureAt + MIN_MASKED_FRAME_MS - Date.now();
    if (wait > 0) {
      this.captureTimer ??= setTimeout(() => {
        this.captureTimer = undefined;
        this.pump();
      }, wait);
      return;
    }
    const page = this.page;
    this.dirty = false;
    this.capturing = true;
    this.lastCaptureAt = Date.now();
    void captureStepScreenshot(page, {
      quality: 60,
      secrets: [...this.session.pageSecrets],
      timeoutMs: MASKED_CAPTURE_TIMEOUT_MS,
    })
      .then((jpeg) => {
        const now = this.session.liveViewState();
        // Not shown when a hold started or ended meanwhile, or the view moved to another page.
        if (jpeg && this.page === page && !now.held && now.epoch === state.epoch) this.show(jpeg);
        else if (this.page === page) this.dirty = true;
      })
      .finally(() => {
        this.capturing = false;
        this.pump();
      });
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
    clearTimeout(this.captureTimer);
    this.captureTimer = undefined;
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
