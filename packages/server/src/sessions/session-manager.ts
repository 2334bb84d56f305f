// The sessions running on this node: started, looked up for operations, ended by the client, by
// their idle timeout, by the loss of their browser, or by the server's shutdown. The store keeps
// their records (and replays); this keeps what cannot be stored: browser contexts and Deckhand
// instances.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, Deckhand } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import { SessionActionCache } from "../cache/session-action-cache.ts";
import { DEFAULT_MAX_TABS_PER_SESSION } from "../defaults.ts";
import { ApiError, sessionEnded } from "../errors.ts";
import { ANYWHERE, type EgressPolicy } from "../policy/egress.ts";
import type { SessionStartParams } from "../schemas/session-start.ts";
import type { SessionRecord, Store } from "../store/store.ts";
import type { BrowserPool } from "./browser-pool.ts";
import { attachCdpUrl } from "./cdp-url.ts";
import { type CdpTarget, LiveSession, LogRelay } from "./live-session.ts";
import { planSession } from "./start-options.ts";

export interface SessionManagerOptions {
  store: Store;
  pool: BrowserPool;
  log: FastifyBaseLogger;
  /** Idle timeout of sessions whose start gives none (sessionCreateParams.timeout). */
  idleTimeoutMs: number;
  /** Whether act, extract and observe use the server cache when neither start nor call says. */
  serverCache: boolean;
  /**
   * The store is shared with other nodes (PostgreSQL): an active session not running here may be
   * running on another node, so it is not ended from here.
   */
  sharedStore: boolean;
  /** Milliseconds a session without keepAlive outlives its last CDP client (see LiveSession). */
  disconnectGraceMs: number;
  /** Where a start's browser.cdpUrl may lead (see policy/egress.ts). Default: anywhere. */
  cdpUrlHosts?: EgressPolicy;
  /** The service's own port, never attached to as a browser. */
  ownPort?: () => number | undefined;
  /** Most tabs a session may have open at once. */
  maxTabsPerSession?: number;
}

/** Prefix of the directory each session gets for its downloads (removed when it ends). */
export const SESSION_DIR_PREFIX = "deckhand-session-";

/** Why a session ended, for the log. */
export type EndReason =
  | "ended by the client"
  | "client disconnected"
  | "idle timeout"
  | "browser lost"
  | "service shutdown";

export class SessionManager {
  private readonly options: SessionManagerOptions;
  private readonly live = new Map<string, LiveSession>();
  private readonly endings = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: SessionManagerOptions) {
    this.options = options;
    options.pool.onBrowserLost((browser) => {
      for (const session of this.live.values()) {
        if (session.cdp.browser === browser) void this.end(session.id, "browser lost");
      }
    });
  }

  get size(): number {
    return this.live.size;
  }

  get pool(): BrowserPool {
    return this.options.pool;
  }

  get(id: string): LiveSession | undefined {
    return this.live.get(id);
  }

  sessions(): LiveSession[] {
    return [...this.live.values()];
  }

  /** Starts the session whose record the start route created. */
  async create(record: SessionRecord, params: SessionStartParams): Promise<LiveSession> {
    if (this.closed) throw new ApiError(503, "SHUTTING_DOWN", "The service is shutting down.");
    const relay = new LogRelay((line) =>
      this.options.log.debug({ sessionId: record.id, category: line.category }, line.message),
    );
    const plan = planSession(params, relay.logger);
    // act's server cache is the library's action cache, with its entries in the project's store.
    const actionCache = new SessionActionCache();
    plan.deckhand.actionCache = actionCache;
    const downloadDir = await mkdtemp(join(tmpdir(), SESSION_DIR_PREFIX));
    let dh: Deckhand;
    let cdp: CdpTarget;
    let lease: Awaited<ReturnType<BrowserPool["acquire"]>> | undefined;
    let ownBrowser: Browser | undefined;
    try {
      if (plan.cdpUrl) {
        ownBrowser = await attachCdpUrl(plan.cdpUrl, {
          policy: this.options.cdpUrlHosts ?? ANYWHERE,
          ownPort: this.options.ownPort?.(),
          timeoutMs: plan.connectTimeoutMs ?? 10_000,
          ...(plan.context.viewport ? { viewport: plan.context.viewport } : {}),
          log: this.options.log,
        });
        // The caller's browser and its pages stay as they are when the session ends (keepAlive);
        // the service only lets go of its connection.
        dh = Deckhand.inContext(ownBrowser.defaultContext(), { ...plan.deckhand, keepAlive: true });
        try {
          await dh.init();
        } catch (error) {
          ownBrowser.disconnect();
          throw error;
        }
        cdp = { browser: ownBrowser, contextId: undefined };
      } else {
        lease = await this.options.pool.acquire(record.projectId);
        try {
          const context = await lease.browser.newContext(plan.context);
          // Downloads land in the session's own directory (not the service user's ~/Downloads).
          await lease.browser.connection.root.send("Browser.setDownloadBehavior", {
            behavior: "allow",
            browserContextId: context.id,
            downloadPath: downloadDir,
          });
          dh = Deckhand.inContext(context, plan.deckhand);
          // init() disposes of the context itself when it fails.
          await dh.init();
          cdp = { browser: lease.browser, contextId: context.id };
        } catch (error) {
          lease.release();
          throw error;
        }
      }
    } catch (error) {
      await rm(downloadDir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    const session = new LiveSession({
      id: record.id,
      projectId: record.projectId,
      dh,
      cdp,
      relay,
      actionCache,
      downloadDir,
      maxTabs: this.options.maxTabsPerSession ?? DEFAULT_MAX_TABS_PER_SESSION,
      ...(ownBrowser ? { ownBrowser } : {}),
      ...(lease ? { lease } : {}),
      idleTimeoutMs: plan.idleTimeoutMs ?? this.options.idleTimeoutMs,
      defaults: {
        modelName: params.modelName,
        actTimeoutMs: params.actTimeoutMs,
        serverCache: params.serverCache ?? this.options.serverCache,
      },
      onIdle: (idle) => void this.end(idle.id, "idle timeout"),
      keepAlive: plan.keepAlive,
      disconnectGraceMs: this.options.disconnectGraceMs,
      onDetached: (left) => void this.end(left.id, "client disconnected"),
    });
    session.enforceTabLimit();
    // A caller's browser that closes or crashes takes the session with it, as a pool browser does.
    ownBrowser?.onDisconnected(() => void this.end(record.id, "browser lost"));
    this.live.set(record.id, session);
    if (this.closed) await this.end(record.id, "service shutdown");
    return session;
  }

  /**
   * The running session of a record the route found active. With a store of its own (SQLite), an
   * active record with nothing running here is a leftover of a previous run of the service: it is
   * ended and answered as such (410). With a shared store it may run on another node (409).
   */
  async require(record: SessionRecord): Promise<LiveSession> {
    const session = this.live.get(record.id);
    if (session && !session.ended) return session;
    if (this.options.sharedStore) {
      throw new ApiError(
        409,
        "SESSION_ELSEWHERE",
        `Session ${JSON.stringify(record.id)} is not running on this node of the service. Send its requests to ` +
          "the node that started it (route by session id), or start a new session.",
      );
    }
    await this.options.store.endSession(record.id);
    throw sessionEnded(record.id);
  }

  /** Ends a running session: its context is disposed of and its record marked ended. */
  end(id: string, reason: EndReason): Promise<void> {
    const session = this.live.get(id);
    if (!session) return Promise.resolve();
    const ending = (async () => {
      this.live.delete(id);
      this.options.log.info({ sessionId: id, reason }, "session ended");
      try {
        await session.end(reason);
      } catch (error) {
        this.options.log.warn(
          { sessionId: id, err: error },
          "releasing the session's browser context failed",
        );
      }
      await this.options.store.endSession(id).catch((error: unknown) => {
        this.options.log.error({ sessionId: id, err: error }, "could not mark the session ended");
      });
    })();
    this.endings.add(ending);
    void ending.finally(() => this.endings.delete(ending));
    return ending;
  }

  /**
   * Ends the store's active sessions that run nowhere: at start-up, every one when the store is
   * this node's alone (SQLite); otherwise those idle past their timeout (their node is gone).
   * Then keeps doing the latter every `intervalMs`.
   */
  async sweepOrphans(options: { all: boolean; intervalMs: number }): Promise<number> {
    const ended = await this.endOrphans(options.all);
    if (!this.closed && !this.sweeper) {
      this.sweeper = setInterval(() => {
        this.endOrphans(false).catch((error: unknown) =>
          this.options.log.warn({ err: error }, "sweeping orphaned sessions failed"),
        );
      }, options.intervalMs);
      this.sweeper.unref();
    }
    return ended;
  }

  private async endOrphans(all: boolean): Promise<number> {
    const now = Date.now();
    let ended = 0;
    for (const record of await this.options.store.listActiveSessions()) {
      if (this.live.has(record.id)) continue;
      const timeout = (record.params.sessionCreateParams as { timeout?: number } | undefined)?.timeout;
      const idleMs = timeout !== undefined ? timeout * 1000 : this.options.idleTimeoutMs;
      if (all || now - record.lastActivityAt > idleMs) {
        if (await this.options.store.endSession(record.id)) ended++;
      }
    }
    if (ended > 0) this.options.log.info({ ended }, "ended sessions left over from a previous run");
    return ended;
  }

  /** Ends every session and closes the browser pool: no Chrome process is left. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.live.keys()].map((id) => this.end(id, "service shutdown")));
    await Promise.all([...this.endings]);
    await this.options.pool.close();
  }
}
