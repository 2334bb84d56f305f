// One running session on this node: its Deckhand instance (in its own browser context), the queue
// its operations wait in, its idle timer, its tab limit, and whatever must go when it ends (the CDP
// proxy connections, its download directory, its place in the browser pool).

import { rm } from "node:fs/promises";
import { type Browser, type Deckhand, type LogLine, ServiceCancelledError } from "deckhand";
import type { SessionActionCache } from "../cache/session-action-cache.ts";
import type { BrowserLease } from "./browser-pool.ts";
import { OperationQueue } from "./operation-queue.ts";

/** Where the session's browser context is, for the CDP proxy. */
export interface CdpTarget {
  /** The browser (whose one connection the CDP proxy's clients share). */
  browser: Browser;
  /** The session's browser context; undefined: the browser's default context (an attached browser). */
  contextId: string | undefined;
}

/** What the session's start asked for that its operations use. */
export interface SessionDefaults {
  /** The start's `modelName`: the model of calls that name none. */
  modelName: string | undefined;
  /** The start's `actTimeoutMs`. */
  actTimeoutMs: number | undefined;
  /** Whether act, extract and observe use the server cache unless a call says otherwise. */
  serverCache: boolean;
}

export interface LiveSessionInit {
  id: string;
  projectId: string;
  dh: Deckhand;
  cdp: CdpTarget;
  defaults: SessionDefaults;
  /** Milliseconds without activity after which `onIdle` is called. */
  idleTimeoutMs: number;
  onIdle(session: LiveSession): void;
  /** sessionCreateParams.keepAlive: never `onDetached`. */
  keepAlive: boolean;
  /** Milliseconds after the last CDP client left, with no request since, before `onDetached`. */
  disconnectGraceMs: number;
  onDetached(session: LiveSession): void;
  /** The session's place in the browser pool; none for a session on a browser given by cdpUrl. */
  lease?: BrowserLease;
  /** Receives the Deckhand log lines of the session (see LogRelay). */
  relay: LogRelay;
  /** The store of `dh`'s action cache: act's server cache (see SessionActionCache). */
  actionCache: SessionActionCache;
  /** The session's own directory (its downloads), removed when it ends. */
  downloadDir: string;
  /** Most tabs open at once; a tab beyond it (window.open, a target=_blank link) is closed. */
  maxTabs: number;
  /** A browser the session connected to itself (browser.cdpUrl): disconnected when it ends. */
  ownBrowser?: Browser;
}

/**
 * Passes a Deckhand instance's log lines to whoever listens for the operation running now; lines
 * outside operations (the browser going away, say) go to `elsewhere`.
 */
export class LogRelay {
  private listener: ((line: LogLine) => void) | undefined;
  private readonly elsewhere: (line: LogLine) => void;

  constructor(elsewhere: (line: LogLine) => void = () => {}) {
    this.elsewhere = elsewhere;
  }

  readonly logger = (line: LogLine): void => {
    (this.listener ?? this.elsewhere)(line);
  };

  /** Sends lines to `listener` while `run` runs (operations of a session never overlap). */
  async during<T>(listener: (line: LogLine) => void, run: () => Promise<T>): Promise<T> {
    this.listener = listener;
    try {
      return await run();
    } finally {
      if (this.listener === listener) this.listener = undefined;
    }
  }
}

/**
 * A signal that aborts when any of `sources` does, until `unlink()`: then it no longer follows them,
 * and nothing of it stays with them. Not AbortSignal.any: with a source that lives as long as the
 * session (its lifetime signal), Node (24.9) keeps a record of every signal made from it until
 * that source itself is collected, one per operation; the soak's sessions grew by one such record
 * (and a weak reference and a finalization cell) per operation, for as long as they lived.
 */
export function linkedSignal(sources: readonly AbortSignal[]): { signal: AbortSignal; unlink: () => void } {
  const controller = new AbortController();
  const unlinks: (() => void)[] = [];
  const unlink = () => {
    for (const stop of unlinks.splice(0)) stop();
  };
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const onAbort = () => {
      unlink();
      controller.abort(source.reason);
    };
    source.addEventListener("abort", onAbort, { once: true });
    unlinks.push(() => source.removeEventListener("abort", onAbort));
  }
  if (controller.signal.aborted) unlink();
  return { signal: controller.signal, unlink };
}

export class LiveSession {
  readonly id: string;
  readonly projectId: string;
  readonly dh: Deckhand;
  readonly cdp: CdpTarget;
  readonly defaults: SessionDefaults;
  readonly relay: LogRelay;
  readonly actionCache: SessionActionCache;
  readonly idleTimeoutMs: number;
  readonly downloadDir: string;
  readonly maxTabs: number;
  /**
   * The variable values the session's operations used, in memory only: hidden in its step
   * screenshots, since a value typed into a field stays on the page (viewer/step-screenshots.ts).
   */
  readonly pageSecrets = new Set<string>();
  /** Operations running now that carry variable values (holdLiveView). */
  private liveViewHolds = 0;
  /** Counts every hold's start and end: a live-view capture begun in another epoch is not shown. */
  private liveViewEpoch = 0;
  /** The screenshot after the last step, for the next act's "before" (see recorded-operation.ts). */
  lastStepShot: { at: number; targetId: string; url: string; jpeg: Buffer } | undefined;
  /** When a CDP proxy client last sent anything (it may have changed the page). */
  lastClientMessageAt = 0;
  private readonly ownBrowser: Browser | undefined;
  private readonly queue = new OperationQueue();
  private readonly lifetime = new AbortController();
  private readonly lease: BrowserLease | undefined;
  private readonly onIdle: (session: LiveSession) => void;
  private keepAlive: boolean;
  private readonly disconnectGraceMs: number;
  private readonly onDetached: (session: LiveSession) => void;
  /** CDP proxy connections open now. */
  private clients = 0;
  private debuggerCount = 0;
  private detachTimer: NodeJS.Timeout | undefined;
  private readonly endHandlers = new Set<() => void>();
  private busy = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  /**
   * Set as end() begins, before its close handlers run: `ending` is assigned only once they ran,
   * and a proxy connection they close must not arm the disconnect timer (which would keep the
   * ended session, its Deckhand and its context, in memory for the grace).
   */
  private endStarted = false;

  constructor(init: LiveSessionInit) {
    this.id = init.id;
    this.projectId = init.projectId;
    this.dh = init.dh;
    this.cdp = init.cdp;
    this.defaults = init.defaults;
    this.relay = init.relay;
    this.actionCache = init.actionCache;
    this.idleTimeoutMs = init.idleTimeoutMs;
    this.lease = init.lease;
    this.onIdle = init.onIdle;
    this.keepAlive = init.keepAlive;
    this.disconnectGraceMs = init.disconnectGraceMs;
    this.onDetached = init.onDetached;
    this.downloadDir = init.downloadDir;
    this.maxTabs = init.maxTabs;
    this.ownBrowser = init.ownBrowser;
    this.armIdleTimer();
  }

  /**
   * Holds the session to its tab limit from now on (call once its first page is open): a tab that
   * opens beyond it, however it was opened, is closed again at once.
   */
  enforceTabLimit(): void {
    const context = this.dh.context;
    context.onPage((page) => {
      if (context.pages().length > this.maxTabs && !this.ended) void page.close().catch(() => undefined);
    });
  }

  get ended(): boolean {
    return this.endStarted;
  }

  /** Operations queued or running. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Runs an operation in its turn. Its signal aborts when the caller's does (a client that went
   * away) or when the session ends. The idle timer does not run while it does.
   */
  run<T>(
    callerSignal: AbortSignal,
    operation: (signal: AbortSignal, defer: (work: () => Promise<void>) => void) => Promise<T>,
  ): Promise<T> {
    const { signal, unlink } = linkedSignal([callerSignal, this.lifetime.signal]);
    this.requested();
    const result = this.queue.run(async (defer) => {
      this.busy++;
      this.disarmIdleTimer();
      try {
        return await operation(signal, defer);
      } finally {
        this.busy--;
        this.armIdleTimer();
      }
    }, signal);
    void result.then(unlink, unlink);
    return result;
  }

  /**
   * A request for this session came (an operation, a resume): its client is still there. A resume
   * that says keepAlive decides it from now on.
   */
  requested(keepAlive?: boolean): void {
    if (keepAlive !== undefined) this.keepAlive = keepAlive;
    this.disarmDetachTimer();
  }

  /**
   * A CDP proxy client connected: the session is in use, whatever keepAlive says. A `debugger`
   * (the debugUrl's DevTools front end) only looks on: it neither holds the session nor, when it
   * goes, lets it end; only the session's own clients (the /cdp proxy) do.
   */
  clientConnected(kind: "client" | "debugger" = "client"): void {
    if (kind === "debugger") {
      this.debuggerCount++;
      return;
    }
    this.clients++;
    this.disarmDetachTimer();
  }

  /**
   * A CDP proxy client went away. When it was the last and the session was started without
   * keepAlive, the session ends after the disconnect grace unless a client or a request comes. A
   * debugger going away changes nothing.
   */
  clientDisconnected(kind: "client" | "debugger" = "client"): void {
    if (kind === "debugger") {
      this.debuggerCount = Math.max(0, this.debuggerCount - 1);
      return;
    }
    this.clients = Math.max(0, this.clients - 1);
    if (this.clients === 0 && !this.keepAlive && !this.ended) this.armDetachTimer();
  }

  /** DevTools front ends (debugUrl) connected now. */
  get debuggers(): number {
    return this.debuggerCount;
  }

  /** The session's own CDP clients (the /cdp proxy) connected now, as the session has counted them. */
  get cdpClients(): number {
    return this.clients;
  }

  private armDetachTimer(): void {
    this.disarmDetachTimer();
    this.detachTimer = setTimeout(() => {
      this.detachTimer = undefined;
      if (this.ended || this.clients > 0) return;
      // An operation the client started before it went away is still running: look again later.
      if (this.busy > 0 || this.queue.length > 0) this.armDetachTimer();
      else this.onDetached(this);
    }, this.disconnectGraceMs);
    this.detachTimer.unref();
  }

  private disarmDetachTimer(): void {
    clearTimeout(this.detachTimer);
    this.detachTimer = undefined;
  }

  /** Activity outside operations (the CDP proxy): the idle timeout starts again. */
  touch(): void {
    if (this.busy === 0 && !this.ended) this.armIdleTimer();
  }

  /**
   * Makes the tab with this target id the session's active page (a CDP client opened or activated
   * it): an operation that names no frame then works where the client's page API does.
   */
  async activatePage(targetId: string): Promise<void> {
    if (this.ended) return;
    try {
      const context = this.dh.context;
      const page = await context.browser.waitForPage(targetId, 5000);
      if (page.context === context && !page.isClosed() && !this.ended) await context.setActivePage(page);
    } catch {
      // Closed again, or not a tab of this session: nothing to follow.
    }
  }

  /** Called once when the session ends (e.g. to close a CDP proxy connection). */
  /**
   * While an operation that carries variable values runs, the live view shows no new frame (the
   * value may be half typed, which no mask recognises). Returns the release, called once it ended.
   */
  holdLiveView(): () => void {
    this.liveViewHolds++;
    this.liveViewEpoch++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.liveViewHolds--;
      this.liveViewEpoch++;
    };
  }

  /** Whether the live view is held now, and the epoch that changes with every hold's start and end. */
  liveViewState(): { held: boolean; epoch: number } {
    return { held: this.liveViewHolds > 0, epoch: this.liveViewEpoch };
  }

  onEnd(handler: () => void): () => void {
    this.endHandlers.add(handler);
    return () => this.endHandlers.delete(handler);
  }

  private armIdleTimer(): void {
    this.disarmIdleTimer();
    if (this.ended) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.busy === 0 && !this.ended) this.onIdle(this);
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private disarmIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * Stops whatever runs, closes the CDP proxy connections, disposes of the browser context and
   * gives the browser place back. Idempotent.
   */
  end(reason: string): Promise<void> {
    this.endStarted = true;
    this.ending ??= (async () => {
      this.disarmIdleTimer();
      this.disarmDetachTimer();
      this.lifetime.abort(new ServiceCancelledError(`The session ended (${reason}).`));
      for (const handler of [...this.endHandlers]) {
        try {
          handler();
        } catch {
          // One closer failing must not keep the others (or the context) alive.
        }
      }
      this.endHandlers.clear();
      // The operations just cancelled stop at once; what they deferred (the last step's screenshot)
      // gets a moment to finish before the page goes.
      await Promise.race([this.queue.settled(), new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
      try {
        await this.dh.close();
      } finally {
        this.ownBrowser?.disconnect();
        this.lease?.release();
        await rm(this.downloadDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      }
    })();
    return this.ending;
  }
}
