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
  /** Navigations asked for that have neither committed nor stopped loading: when, and where to. */
  private readonly asked = new Map<string, { at: number; url: string }>();
  /** How each frame's last asked-for navigation ended: when it was asked for, where to, whether it committed. */
  private readonly outcomes = new Map<string, { at: number; url: string; committed: boolean }>();
  /** Called when a frame's asked-for navigation ends (see navigationEnded). */
  private readonly endListeners = new Set<(frameId: string) => void>();
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
      if (e.disposition !== "currentTab") return;
      this.requested.set(e.frameId, Date.now());
      this.asked.set(e.frameId, { at: Date.now(), url: e.url });
    });
    const settled = (e: { frameId: string } | { frame: { id: string } }) =>
      this.requested.delete("frameId" in e ? e.frameId : e.frame.id);
    // Whether the navigation asked for ended in a commit: a new document (or a same-document step),
    // or the frame stopped loading without one. (A "cleared scheduled navigation" is no end: the
    // browser sends it as the navigation starts.)
    const ended = (committed: boolean) => (e: { frameId: string } | { frame: { id: string } }) => {
      const frameId = "frameId" in e ? e.frameId : e.frame.id;
      const asked = this.asked.get(frameId);
      if (!asked) return;
      this.asked.delete(frameId);
      this.outcomes.set(frameId, { ...asked, committed });
      for (const listener of [...this.endListeners]) listener(frameId);
    };
    session.on("Page.frameNavigated", settled);
    session.on("Page.navigatedWithinDocument", settled);
    session.on("Page.frameStoppedLoading", settled);
    session.on("Page.frameClearedScheduledNavigation", settled);
    session.on("Page.frameNavigated", ended(true));
    session.on("Page.navigatedWithinDocument", ended(true));
    session.on("Page.frameStoppedLoading", ended(false));
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
    this.asked.delete(frameId);
    this.outcomes.delete(frameId);
  }

  /**
   * The navigation a frame was asked for at or after `since` (Date.now()): still pending, ended
   * with a commit, or ended without one (an empty response, a download, cancelled); undefined when
   * there was none.
   */
  navigationSince(
    frameId: string,
    since: number,
  ): { url: string; state: "pending" | "committed" | "not committed" } | undefined {
    const pending = this.asked.get(frameId);
    if (pending && pending.at >= since) return { url: pending.url, state: "pending" };
    const outcome = this.outcomes.get(frameId);
    if (outcome && outcome.at >= since)
      return { url: outcome.url, state: outcome.committed ? "committed" : "not committed" };
    return undefined;
  }

  /** Resolves when an asked-for navigation of `frameId` ends (or `signal` aborts). */
  navigationEnded(frameId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.endListeners.delete(listener);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const listener = (id: string) => {
        if (id === frameId) done();
      };
      this.endListeners.add(listener);
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
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
    deadline.log(`waiting for the "${name}" event`);
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
