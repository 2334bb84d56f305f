// What settle counts as in flight. A document's request can start in its parent's session and end
// in the frame's own (an out-of-process frame's, attached as the frame commits): when that end is
// never seen, the request must still stop counting once its response is in or its frame committed
// it; otherwise every read of the page waits until the request is old enough to be ignored
// (the 1.2 s observe on nested cross-site frames).

import { describe, expect, it } from "vitest";
import type { CdpSession } from "../../src/browser/cdp/connection.ts";
import { NetworkTracker } from "../../src/browser/network.ts";

/** A session that only delivers the events a test emits. */
function fakeSession() {
  const handlers = new Map<string, ((e: unknown) => void)[]>();
  const session = {
    on(event: string, handler: (e: unknown) => void) {
      handlers.set(event, [...(handlers.get(event) ?? []), handler]);
      return () => undefined;
    },
  } as unknown as CdpSession;
  const emit = (event: string, params: unknown) => {
    for (const handler of handlers.get(event) ?? []) handler(params);
  };
  return { session, emit };
}

const documentRequest = (requestId: string, frameId: string, loaderId: string, type = "Document") => ({
  requestId,
  loaderId,
  frameId,
  type,
  request: { url: `http://127.0.0.2/${frameId}.html` },
});

describe("NetworkTracker", () => {
  it("stops counting a document's request once its response is in, though its end is reported elsewhere", () => {
    const tracker = new NetworkTracker();
    const parent = fakeSession();
    tracker.listen(parent.session);
    parent.emit("Network.requestWillBeSent", documentRequest("r1", "child", "L1"));
    expect(tracker.requests().map((r) => r.url)).toEqual(["http://127.0.0.2/child.html"]);
    parent.emit("Network.responseReceived", { requestId: "r1", type: "Document" });
    expect(tracker.requests()).toEqual([]);
  });

  it("stops counting it once its frame committed the document, in any session", () => {
    const tracker = new NetworkTracker();
    const parent = fakeSession();
    const child = fakeSession();
    tracker.listen(parent.session);
    tracker.listen(child.session);
    parent.emit("Network.requestWillBeSent", documentRequest("r1", "child", "L1"));
    // Another document of the frame is not this one.
    child.emit("Page.frameNavigated", { frame: { id: "child", loaderId: "L0" } });
    expect(tracker.requests()).toHaveLength(1);
    child.emit("Page.frameNavigated", { frame: { id: "child", loaderId: "L1" } });
    expect(tracker.requests()).toEqual([]);
  });

  it("keeps counting a script's or a fetch's request until its end (their response is not the end of their work)", () => {
    const tracker = new NetworkTracker();
    const page = fakeSession();
    tracker.listen(page.session);
    page.emit("Network.requestWillBeSent", documentRequest("r2", "main", "L1", "Fetch"));
    page.emit("Network.responseReceived", { requestId: "r2", type: "Fetch" });
    page.emit("Page.frameNavigated", { frame: { id: "main", loaderId: "L1" } });
    expect(tracker.requests()).toHaveLength(1);
    page.emit("Network.loadingFinished", { requestId: "r2" });
    expect(tracker.requests()).toEqual([]);
  });
});
