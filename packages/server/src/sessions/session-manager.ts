// The sessions running on this node: started, looked up for operations, ended by the client, by
// their idle timeout, by the loss of their browser, or by the server's shutdown. The store keeps
// their records (and replays); this keeps what cannot be stored: browser contexts and Deckhand
// instances.

import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, Deckhand } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import { SessionActionCache } from "../cache/session-action-cache.ts";
import { DEFAULT_MAX_TABS_PER_SESSION } from "../defaults.ts";
import { ApiError, sessionElsewhere, sessionEnded } from "../errors.ts";
import { ANYWHERE, type EgressPolicy } from "../policy/egress.ts";
import type { SessionStartParams } from "../schemas/session-start.ts";
import type { SessionRecord, Store } from "../store/store.ts";
import type { BrowserPool } from "./browser-pool.ts";
import { attachCdpUrl, CdpUrlUnreachable } from "./cdp-url.ts";
import { type CdpTarget, LiveSession, LogRelay } from "./live-session.ts";
import { planSession } from "./start-options.ts";

export interface SessionManagerOptions {
  store: Store;
  /** This node's id in the store: the owner of the sessions it starts, and the holder of its lease. */
  nodeId: string;
  /** Milliseconds the lease lasts unless renewed; it is renewed every third of that. */
  nodeLeaseMs: number;
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

/**
 * Prefix of the directory each session gets for its downloads (removed when it ends). The session's
 * id follows it, so that the directory of a session whose node was killed can be found and removed
 * once the session is known to have ended (sweepSessionDirs).
 */
export const SESSION_DIR_PREFIX = "deckhand-session-";
const SESSION_DIR = new RegExp(`^${SESSION_DIR_PREFIX}([0-9a-f-]{36})-`);

/** Why a session ended, for the log. */
export type EndReason =
  | "ended by the client"
  | "client disconnected"
  | "idle timeout"
  | "browser lost"
  | "service shutdown"
  | "lease lost";

export class SessionManager {
  private readonly options: SessionManagerOptions;
  private readonly live = new Map<string, LiveSession>();
  /**
   * Sessions on a browser of the caller's (browser.cdpUrl) where nothing answered at start: they
   * are attached when first used (an operation, a CDP client), as the reference does.
   */
  private readonly deferred = new Map<
    string,
    { record: SessionRecord; params: SessionStartParams; attaching?: Promise<LiveSession> }
  >();
  private readonly endings = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
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

  get nodeId(): string {
    return this.options.nodeId;
  }

  /**
   * Takes this node's lease in the store and keeps it: renewed every third of its length, and on
   * each beat the sessions of nodes whose lease lapsed (killed, cut off) are ended, whichever node
   * notices first. If this node's own lease lapsed (the database was out of reach, the process
   * stalled), other nodes may have ended its sessions already: it ends them here too, so that no
   * browser context lives on for a session the store calls ended, and takes a new lease.
   */
  async holdLease(): Promise<void> {
    const { store, nodeId, nodeLeaseMs, log } = this.options;
    await store.registerNode(nodeId, nodeLeaseMs);
    log.info({ nodeId, leaseMs: nodeLeaseMs }, "holding this node's lease on its sessions");
    const beat = async () => {
      if (this.closed) return;
      if (!(await store.renewNode(nodeId, nodeLeaseMs))) {
        log.warn({ nodeId, sessions: this.live.size }, "this node's lease lapsed; ending its sessions");
        await Promise.all([...this.live.keys()].map((id) => this.end(id, "lease lost")));
        if (!this.closed) await store.registerNode(nodeId, nodeLeaseMs);
      }
      const { nodeIds, sessionIds } = await store.reclaimLapsedNodes();
      if (sessionIds.length > 0 || nodeIds.length > 0)
        log.info(
          { nodes: nodeIds, sessions: sessionIds.length },
          "ended the sessions of nodes whose lease lapsed",
        );
      // Their download directories, where this machine has them.
      await this.sweepSessionDirs();
    };
    let beating = false;
    this.heartbeat = setInterval(
      () => {
        // A beat the database holds up is not stacked on by the next one.
        if (beating) return;
        beating = true;
        beat()
          .catch((error: unknown) => log.warn({ err: error }, "renewing this node's lease failed"))
          .finally(() => {
            beating = false;
          });
      },
      Math.max(100, Math.floor(nodeLeaseMs / 3)),
    );
    this.heartbeat.unref();
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
    const plan = planSession(params, relay.logger, this.options.pool.processSettings(), (message) =>
      this.options.log.warn({ sessionId: record.id }, message),
    );
    // act's server cache is the library's action cache, with its entries in the project's store.
    const actionCache = new SessionActionCache();
    plan.deckhand.actionCache = actionCache;
    const downloadDir = await mkdtemp(join(tmpdir(), `${SESSION_DIR_PREFIX}${record.id}-`));
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
        modelName: plan.modelName,
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
   * Starts the session, or, when it is to run on a browser.cdpUrl where nothing answers yet, takes
   * it to be attached when first used (undefined). An address the caller may not use is still
   * refused at once.
   */
  async createOrDefer(record: SessionRecord, params: SessionStartParams): Promise<LiveSession | undefined> {
    try {
      return await this.create(record, params);
    } catch (error) {
      if (!(error instanceof CdpUrlUnreachable) || this.closed) throw error;
      this.deferred.set(record.id, { record, params });
      this.options.log.info(
        { sessionId: record.id },
        "nothing answers at the session's browser.cdpUrl yet; it is attached when first used",
      );
      return undefined;
    }
  }

  /** A deferred session's browser, attached now (one attempt at a time), or a 502 saying why not. */
  private attachDeferred(id: string): Promise<LiveSession> {
    const waiting = this.deferred.get(id)!;
    waiting.attaching ??= this.create(waiting.record, waiting.params).then(
      (session) => {
        this.deferred.delete(id);
        return session;
      },
      (error: unknown) => {
        waiting.attaching = undefined;
        if (!(error instanceof CdpUrlUnreachable)) throw error;
        throw new ApiError(
          502,
          "CDP_URL_UNREACHABLE",
          "The browser at this session's browser.cdpUrl (given at start) could not be attached: nothing answered " +
            "there as a Chrome DevTools endpoint (or it cannot be reached from this service). The session waits " +
            "for it: start that browser with --remote-debugging-port and try again, or end the session.",
        );
      },
    );
    return waiting.attaching;
  }

  /**
   * The running session of a record the route found active. With a store of its own (SQLite), an
   * active record with nothing running here is a leftover of a previous run of the service: it is
   * ended and answered as such (410). With a shared store it may run on another node (409).
   */
  async require(record: SessionRecord): Promise<LiveSession> {
    if (this.deferred.has(record.id)) return this.attachDeferred(record.id);
    const session = this.live.get(record.id);
    if (session && !session.ended) return session;
    // Another node's (the route answers those already, unless the record predates leases).
    if (record.nodeId !== undefined && record.nodeId !== this.options.nodeId) {
      if (await this.options.store.nodeIsLive(record.nodeId))
        throw sessionElsewhere(record.id, record.nodeId);
    } else if (record.nodeId === undefined && this.options.sharedStore) {
      throw sessionElsewhere(record.id);
    }
    // Nobody runs it: a leftover of an earlier run, or of a node that is gone.
    await this.options.store.endSession(record.id);
    throw sessionEnded(record.id);
  }

  /** Ends a running session: its context is disposed of and its record marked ended. */
  end(id: string, reason: EndReason): Promise<void> {
    if (this.deferred.delete(id)) {
      this.options.log.info(
        { sessionId: id, reason },
        "session ended (its browser.cdpUrl was never attached)",
      );
      return this.options.store.endSession(id).then(
        () => undefined,
        (error: unknown) =>
          this.options.log.error({ sessionId: id, err: error }, "could not mark the session ended"),
      );
    }
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
   * this node's alone (SQLite); otherwise those of nodes whose lease lapsed (see holdLease) and,
   * for rows written before leases, those idle past their timeout. Then keeps doing the latter
   * every `intervalMs`.
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

  /**
   * Removes the download directories (in this machine's temporary directory) of sessions that have
   * ended but whose node could not remove them: it was killed, or lost its lease.
   */
  async sweepSessionDirs(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(tmpdir());
    } catch {
      return;
    }
    for (const name of names) {
      const id = SESSION_DIR.exec(name)?.[1];
      if (!id || this.live.has(id)) continue;
      const record = await this.options.store.getSession(id);
      if (record && record.status === "active") continue;
      await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async endOrphans(all: boolean): Promise<number> {
    const now = Date.now();
    let ended = 0;
    if (!all) await this.options.store.reclaimLapsedNodes();
    for (const record of await this.options.store.listActiveSessions()) {
      if (this.live.has(record.id)) continue;
      // Another node's, under its lease: that node runs it, or its lapsed lease ends it.
      if (!all && record.nodeId !== undefined && record.nodeId !== this.options.nodeId) continue;
      const timeout = (record.params.sessionCreateParams as { timeout?: number } | undefined)?.timeout;
      const idleMs = timeout !== undefined ? timeout * 1000 : this.options.idleTimeoutMs;
      if (all || now - record.lastActivityAt > idleMs) {
        // A session waiting for its browser.cdpUrl ends by its idle timeout too.
        this.deferred.delete(record.id);
        if (await this.options.store.endSession(record.id)) ended++;
      }
    }
    if (ended > 0) this.options.log.info({ ended }, "ended sessions left over from a previous run");
    await this.sweepSessionDirs().catch((error: unknown) =>
      this.options.log.warn({ err: error }, "removing the directories of ended sessions failed"),
    );
    return ended;
  }

  /** Ends every session and closes the browser pool: no Chrome process is left. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.heartbeat);
    await Promise.all(
      [...this.live.keys(), ...this.deferred.keys()].map((id) => this.end(id, "service shutdown")),
    );
    await Promise.all([...this.endings]);
    await this.options.pool.close();
    // Its sessions have ended: nothing is left for others to reclaim.
    await this.options.store.removeNode(this.options.nodeId).catch((error: unknown) => {
      this.options.log.warn({ err: error }, "could not give up this node's lease");
    });
  }
}
