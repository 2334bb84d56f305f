// The requests a page (and its frames, across their sessions) has in flight: what settle waits for.

import type { CdpSession } from "./cdp/connection.ts";

/** A request the page (or one of its frames) has sent and not finished. */
export interface InflightRequest {
  url: string;
  type: string;
  frameId: string | undefined;
  startedAt: number;
}

/** Requests older than this are forgotten: one whose end is never reported must not pile up. */
const FORGET_MS = 60_000;

export class NetworkTracker {
  private readonly inflight = new Map<string, InflightRequest>();

  /** Follows a session's requests. Request ids are unique across the browser: a frame's document
   * request can start in its parent's session and finish in the frame's own (out-of-process) one. */
  listen(session: CdpSession): void {
    session.on("Network.requestWillBeSent", (e) => {
      if (e.type === "EventSource" || e.type === "WebSocket") return; // long-lived by design
      this.inflight.set(e.requestId, {
        url: e.request.url,
        type: e.type ?? "Other",
        frameId: e.frameId,
        startedAt: Date.now(),
      });
    });
    session.on("Network.loadingFinished", (e) => this.inflight.delete(e.requestId));
    session.on("Network.loadingFailed", (e) => this.inflight.delete(e.requestId));
    session.on("Network.requestServedFromCache", (e) => this.inflight.delete(e.requestId));
  }

  /** Requests in flight now (EventSource and WebSocket excluded). */
  requests(): InflightRequest[] {
    const now = Date.now();
    for (const [id, request] of this.inflight)
      if (now - request.startedAt > FORGET_MS) this.inflight.delete(id);
    return [...this.inflight.values()];
  }
}
