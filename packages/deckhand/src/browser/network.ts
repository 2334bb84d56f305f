// The requests a page (and its frames, across their sessions) has in flight: what settle waits for.

import type { CdpSession } from "./cdp/connection.ts";

/** A request the page (or one of its frames) has sent and not finished. */
export interface InflightRequest {
  url: string;
  type: string;
  frameId: string | undefined;
  /** The document a Document request loads (its navigation's loader id). */
  loaderId: string;
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
        loaderId: e.loaderId,
        startedAt: Date.now(),
      });
    });
    // A document's request is over for settle's purposes once its response is in: what follows
    // (the body as it is parsed, the frame's commit) is the frame's own loading state. Its end can
    // be reported on a session that is not there yet (an out-of-process frame's, attached as the
    // frame commits), and waiting for that report held every read of the page for up to STALE_MS.
    session.on("Network.responseReceived", (e) => {
      if (e.type === "Document") this.inflight.delete(e.requestId);
    });
    // The commit, for a response this session did not see.
    session.on("Page.frameNavigated", (e) => {
      for (const [id, request] of this.inflight)
        if (
          request.type === "Document" &&
          request.frameId === e.frame.id &&
          request.loaderId === e.frame.loaderId
        )
          this.inflight.delete(id);
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
