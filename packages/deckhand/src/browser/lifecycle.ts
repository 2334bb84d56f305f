// Lifecycle events per frame and document (DOMContentLoaded, load, networkIdle) and the status of
// each document's response, and waiting for one of those events under a deadline.

import type { Deadline } from "../deadline.ts";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";

export type WaitUntil = "load" | "domcontentloaded" | "networkidle";

const LIFECYCLE_EVENT: Record<WaitUntil, string> = {
  load: "load",
  domcontentloaded: "DOMContentLoaded",
  networkidle: "networkIdle",
};

/** The `waitUntil` a caller gave, checked (default load). */
export function checkWaitUntil(value: string | undefined): WaitUntil {
  const waitUntil = (value ?? "load") as WaitUntil;
  if (!(waitUntil in LIFECYCLE_EVENT)) {
    throw new ServiceInvalidArgumentError(
      `waitUntil must be "load", "domcontentloaded" or "networkidle", not ${JSON.stringify(value)}.`,
    );
  }
  return waitUntil;
}

export class LifecycleWatcher {
  /** Lifecycle events seen per frame and loader, newest loaders last. */
  private readonly seen = new Map<string, Map<string, Set<string>>>();
  /** Frames that were asked to navigate (a link, a form, a script) and have not committed yet, since when. */
  private readonly requested = new Map<string, number>();
  private readonly documentStatus = new Map<string, number>();
  /** The session that reports the main frame's events. */
  private readonly session: CdpSession;

  constructor(session: CdpSession) {
    this.session = session;
  }

  listen(session: CdpSession): void {
    session.on("Page.lifecycleEvent", (e) => this.record(e.frameId, e.loaderId, e.name));
    session.on("Page.frameRequestedNavigation", (e) => {
      // A download or a new window commits nothing here.
      if (e.disposition === "currentTab") this.requested.set(e.frameId, Date.now());
    });
    const settled = (e: { frameId: string } | { frame: { id: string } }) =>
      this.requested.delete("frameId" in e ? e.frameId : e.frame.id);
    session.on("Page.frameNavigated", settled);
    session.on("Page.navigatedWithinDocument", settled);
    session.on("Page.frameStoppedLoading", settled);
    session.on("Page.frameClearedScheduledNavigation", settled);
    session.on("Network.responseReceived", (e) => {
      if (e.type === "Document") this.documentStatus.set(e.loaderId, e.response.status);
    });
  }

  /** The HTTP status of a document's response, if it had one. */
  statusOf(loaderId: string): number | null {
    return this.documentStatus.get(loaderId) ?? null;
  }

  /** A frame left the page: its events are of no more use. */
  forget(frameId: string): void {
    this.seen.delete(frameId);
    this.requested.delete(frameId);
  }

  /** Navigations asked for (within the last `maxAgeMs`) that have not committed a document yet. */
  pendingNavigations(maxAgeMs: number): number {
    const now = Date.now();
    let n = 0;
    for (const since of this.requested.values()) if (now - since < maxAgeMs) n++;
    return n;
  }

  /**
   * Waits until the document `loader` names (a loader id, or a function for "whichever is current
   * when the event comes") of a frame has reached `waitUntil`.
   */
  async wait(
    frameId: string,
    loader: string | (() => string),
    waitUntil: WaitUntil,
    deadline: Deadline,
  ): Promise<void> {
    const name = LIFECYCLE_EVENT[waitUntil];
    const loaderId = typeof loader === "string" ? () => loader : loader;
    if (this.has(frameId, loaderId(), name)) return;
    const step = deadline.child(`waiting for ${name}`);
    const reached = this.session.waitFor(
      "Page.lifecycleEvent",
      (e) => e.frameId === frameId && e.loaderId === loaderId() && e.name === name,
      step.signal,
    );
    try {
      // The event may have arrived between the check above and subscribing.
      if (this.has(frameId, loaderId(), name)) return;
      await deadline.race(reached);
    } finally {
      step.dispose();
      reached.catch(() => undefined);
    }
  }

  private has(frameId: string, loaderId: string, name: string): boolean {
    return this.seen.get(frameId)?.get(loaderId)?.has(name) ?? false;
  }

  private record(frameId: string, loaderId: string, name: string): void {
    let loaders = this.seen.get(frameId);
    if (!loaders) {
      loaders = new Map();
      this.seen.set(frameId, loaders);
    }
    let events = loaders.get(loaderId);
    if (!events) {
      events = new Set();
      loaders.set(loaderId, events);
      if (loaders.size > 8) loaders.delete(loaders.keys().next().value!);
    }
    events.add(name);
  }
}
