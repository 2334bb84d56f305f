// The debugger's screencast, with variable values hidden. Chromium's DevTools front end (debugUrl)
// shows the page as a screencast (Page.startScreencast; it acknowledges each Page.screencastFrame
// before Chromium sends the next). Once the session used variable values (LiveSession.pageSecrets),
// the frames it receives through the CDP proxy carry, instead of the page as Chromium drew it, a
// capture taken with the values hidden (captureStepScreenshot, as the live view and the step
// screenshots); while an operation that carries values runs (LiveSession.holdLiveView) it gets no
// new frame. A frame it does not get is acknowledged here, so that Chromium keeps sending.
//
// This is the screencast only. The debugger drives the page: its console can read a field's value,
// its Elements panel shows the text the page echoes, its Network panel the bodies sent. A debugUrl
// is as powerful as the key that made it, and is documented as such (docs/viewer.md).

import { createHash } from "node:crypto";
import { captureStepScreenshot, type Page } from "deckhand";
import type { LiveSession } from "../sessions/live-session.ts";

/** A masked capture taking longer is given up. */
const CAPTURE_TIMEOUT_MS = 3000;
/** How many recent frames are remembered to tell a change from the masking's own flicker. */
const RECENT_FRAMES = 8;

interface FrameMessage {
  method: "Page.screencastFrame";
  params: { data: string; metadata: unknown; sessionId: number };
  sessionId?: string;
}

export interface DebuggerScreencastOptions {
  session: LiveSession;
  /** The page the debugger is attached to (undefined once it closed). */
  page(): Page | undefined;
  /** Sends a (rewritten) frame message on to the debugger. */
  forward(text: string): void;
  /** Acknowledges a frame to Chromium in the debugger's stead. */
  ack(frame: number): void;
}

export class DebuggerScreencast {
  private readonly options: DebuggerScreencastOptions;
  /** The newest frame waiting for its masked picture. */
  private pending: FrameMessage | undefined;
  private capturing = false;
  private readonly recent: string[] = [];

  constructor(options: DebuggerScreencastOptions) {
    this.options = options;
  }

  private masking(): boolean {
    return this.options.session.pageSecrets.size > 0 || this.options.session.liveViewState().held;
  }

  /**
   * Takes a Page.screencastFrame message on its way to the debugger when its picture must be
   * masked (true: it is handled here); false: send it on as it is.
   */
  intercept(text: string): boolean {
    if (!this.masking()) return false;
    let message: FrameMessage;
    try {
      message = JSON.parse(text) as FrameMessage;
    } catch {
      return true; // Not a frame anyone can show: dropped.
    }
    const frame = message.params?.sessionId;
    if (typeof frame !== "number" || typeof message.params.data !== "string") return true;
    const hash = createHash("sha256").update(message.params.data).digest("base64");
    if (this.recent.includes(hash)) {
      // Nothing new (the masking's own flicker, a caret): no capture, the debugger keeps its picture.
      this.options.ack(frame);
      return true;
    }
    this.recent.push(hash);
    if (this.recent.length > RECENT_FRAMES) this.recent.shift();
    if (this.pending) this.options.ack(this.pending.params.sessionId);
    this.pending = message;
    this.pump();
    return true;
  }

  private pump(): void {
    const message = this.pending;
    if (!message || this.capturing) return;
    const page = this.options.page();
    const state = this.options.session.liveViewState();
    if (!page || page.isClosed() || state.held) {
      this.pending = undefined;
      this.options.ack(message.params.sessionId);
      return;
    }
    this.pending = undefined;
    this.capturing = true;
    void captureStepScreenshot(page, {
      quality: 60,
      secrets: [...this.options.session.pageSecrets],
      timeoutMs: CAPTURE_TIMEOUT_MS,
    })
      .then((jpeg) => {
        const now = this.options.session.liveViewState();
        if (jpeg && !now.held && now.epoch === state.epoch) {
          message.params.data = jpeg.toString("base64");
          this.options.forward(JSON.stringify(message));
        } else this.options.ack(message.params.sessionId);
      })
      .finally(() => {
        this.capturing = false;
        this.pump();
      });
  }
}
