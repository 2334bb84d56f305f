// The sessions running on this node: started, looked up for operations, ended by the client, by
// their idle timeout, by the loss of their browser, or by the server's shutdown. The store keeps
// their records (and replays); this keeps what cannot be stored: browser contexts and Deckhand
// instances.

import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type Browser, type Context, DEFAULT_VIEWPORT, Deckhand } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import { SessionActionCache } from "../cache/session-action-cache.ts";
import { DEFAULT_MAX_TABS_PER_SESSION } from "../defaults.ts";
import { ApiError, sessionElsewhere, sessionEnded } from "../errors.ts";
import { ANYWHERE, type EgressPolicy } from "../policy/egress.ts";
import type { SessionStartParams } from "../schemas/session-start.ts";
import type { NodeInfo, SessionRecord, Store } from "../store/store.ts";
import type { BrowserPool, PoolCapacity } from "./browser-pool.ts";
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
  /** What this node registers with its lease for the other nodes (its capacity; its address once checked). */
  nodeInfo?: NodeInfo;
  /**
   * Keep a spare browser context, with its first page open, in each pool browser a session was
   * just started in, for the next session of the same tenant there (see takeSpare). Default false;
   * the service turns it on with warm browsers (--warm-browsers above 0) under isolation
   * "project". Warm browsers get one whatever this says (see the constructor).
   */
  spareContexts?: boolean;
}

/** A context made ahead for a tenant's next session in the same browser, and the settings it was made with. */
interface Spare {
  context: Context;
  /** The session start's context settings (planSession), as JSON: a spare serves only the same. */
  settings: string;
}

/**
 * A session's Deckhand keeps no history of its own: the replay record (the store) is the session's
 * record, and nothing reads the instance's; kept, it would grow by a copy of every operation for
 * as long as the session lives (the soak's sessions: hours of operations).
 */
const KEEP = { history: false } as const;

/**
 * Prefix of the directory each session gets for its downloads (removed when it ends). The session's
 * id follows it, so that the directory of a session whose node was killed can be found and removed
 * once the session is known to have ended (sweepSessionDirs).
 */
export const SESSION_DIR_PREFIX = "deckhand-session-";
const SESSION_DIR = new RegExp(`^${SESSION_DIR_PREFIX}([0-9a-f-]{36})-`);

/**
 * Prefix of the directory, in the machine's temporary directory, that holds the session
 * directories of one store's nodes on this machine; the store's id follows it (see sessionRoot).
 * Another service with a store of its own (its own data directory, database or schema) has a root
 * of its own, and never sweeps this one.
 */
export const SESSION_ROOT_PREFIX = "deckhand-store-";

/** How the renewals of this node's lease went, since it took the lease (SessionManager.leaseStats). */
export interface LeaseStats {
  /** Renewals attempted. */
  renewals: number;
  /** Renewals that did not extend the lease: the store failed, or the lease had lapsed. */
  failures: number;
  /** Renewals that found the lease lapsed (the node then took it again; see holdLease). */
  lapses: number;
  /** How late the last renewal started against its schedule (ms): a blocked event loop shows here. */
  lastLagMs: number;
  maxLagMs: number;
  /** How long the last renewal took in the store (ms): a slow or unreachable database shows here. */
  lastDurationMs: number;
  maxDurationMs: number;
  /** Reclaims of lapsed nodes' sessions done (each with its sweep of ended sessions' directories). */
  reclaims: number;
}

/** Why a session ended, for the log and the dashboard (the store keeps it). */
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
  private reclaimer: NodeJS.Timeout | undefined;
  private root: Promise<string> | undefined;
  private readonly stats: LeaseStats = {
    renewals: 0,
    failures: 0,
    lapses: 0,
    lastLagMs: 0,
    maxLagMs: 0,
    lastDurationMs: 0,
    maxDurationMs: 0,
    reclaims: 0,
  };
  private closed = false;
  /** At most one spare context per pool browser, made or being made (see takeSpare). */
  private readonly spares = new Map<
    Browser,
    { made: Promise<Spare | undefined>; ready: boolean; forget: () => void }
  >();

  /** Session starts under way in each pool browser (a spare is made once there are none: see create). */
  private readonly startsIn = new Map<Browser, number>();
  private nodeInfo: NodeInfo;
  /** The readiness last written to the store (publishReadiness), and whether a write runs or is due. */
  private readonly readiness: { published: string | undefined; writing: boolean; again: boolean } = {
    published: undefined,
    writing: false,
    again: false,
  };

  constructor(options: SessionManagerOptions) {
    this.options = options;
    this.nodeInfo = { ...options.nodeInfo };
    // A warm browser gets a spare context too, with the settings of a start that gives none (the
    // library's viewport, no proxy): a project's first session then finds its page open as well.
    // Made by the service in a browser no one has had: as fresh as the browser.
    options.pool.onWarmReady((browser) => {
      const settings: Parameters<Browser["newContext"]>[0] = { viewport: DEFAULT_VIEWPORT };
      this.prepareSpare(browser, settings, JSON.stringify(settings));
    });
    // A cluster node tells the others what it can start without a launch as soon as that changes
    // (placement prefers such a node), not only with its next renewal.
    options.pool.onReadinessChange(() => this.publishReadiness());
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

  /** Spare contexts made and waiting in pool browsers (see takeSpare), for metrics and tests. */
  spareContexts(): number {
    let ready = 0;
    for (const entry of this.spares.values()) if (entry.ready) ready++;
    return ready;
  }

  /**
   * How many more sessions this node's browsers can take now, for `projectId` (or a project with
   * no browser here), and how many of them start without a browser launch (warm browsers, room in
   * the project's own): BrowserPool.freeCapacity. The session limits (--max-sessions, per
   * project) are the caller's to apply on top, from the store's counts.
   */
  freeCapacity(projectId?: string): PoolCapacity {
    if (this.closed) return { sessions: 0, withoutLaunch: 0 };
    return this.options.pool.freeCapacity(projectId);
  }

  /**
   * Writes this node's readiness (BrowserPool.readiness) to the store once it has changed, for the
   * other nodes' placement: only for a node they can place on (one that advertised an address).
   * One write at a time; changes during a write are written after it, the latest only.
   */
  private publishReadiness(): void {
    if (this.closed || this.nodeInfo.advertiseUrl === undefined) return;
    if (this.readiness.writing) {
      this.readiness.again = true;
      return;
    }
    const ready = this.options.pool.readiness();
    const text = JSON.stringify(ready);
    if (text === this.readiness.published) return;
    this.readiness.writing = true;
    this.options.store
      .setNodeReady(this.options.nodeId, ready)
      .then(
        () => {
          this.readiness.published = text;
        },
        (error: unknown) =>
          this.options.log.warn(
            { err: error },
            "could not publish what this node can start without a launch",
          ),
      )
      .finally(() => {
        this.readiness.writing = false;
        if (this.readiness.again) {
          this.readiness.again = false;
          this.publishReadiness();
        }
      });
  }

  /** How the renewals of this node's lease went (for metrics): a copy. */
  leaseStats(): LeaseStats {
    return { ...this.stats };
  }

  /**
   * Takes this node's lease in the store and keeps it. Two timers of their own:
   *
   * - the renewal, every third of the lease (on the store's own connection for it, where it has
   *   connections: a renewal never queues behind request work). How late each ran and how long it
   *   took are kept (leaseStats), and a warning is logged when they ate more than a third of the
   *   lease. A renewal that finds the lease lapsed (the process stalled, the database was out of
   *   reach) takes it again and asks the store which of this node's sessions another node
   *   reclaimed meanwhile: those, and only those, are ended here. A stall alone ends nothing.
   * - the reclaim, as often: the sessions of nodes whose lease lapsed (killed, cut off) are ended,
   *   whichever node notices first, and the download directories of ended sessions removed.
   */
  async holdLease(): Promise<void> {
    const { store, nodeId, nodeLeaseMs, log } = this.options;
    await store.registerNode(nodeId, nodeLeaseMs, this.nodeInfo);
    log.info({ nodeId, leaseMs: nodeLeaseMs }, "holding this node's lease on its sessions");
    const intervalMs = Math.max(100, Math.floor(nodeLeaseMs / 3));
    const schedule = (due: number) => {
      if (this.closed) return;
      this.heartbeat = setTimeout(
        () => {
          void this.renewLease(due).finally(() => schedule(performance.now() + intervalMs));
        },
        Math.max(0, due - performance.now()),
      );
      this.heartbeat.unref();
    };
    schedule(performance.now() + intervalMs);

    let reclaiming = false;
    this.reclaimer = setInterval(() => {
      // A reclaim the database holds up is not stacked on by the next one.
      if (reclaiming || this.closed) return;
      reclaiming = true;
      this.reclaimLapsed()
        .catch((error: unknown) => log.warn({ err: error }, "reclaiming the sessions of lapsed nodes failed"))
        .finally(() => {
          reclaiming = false;
        });
    }, intervalMs);
    this.reclaimer.unref();
  }

  /**
   * Registers more about this node with its lease (the cluster's advertised address, once it was
   * checked to reach this node): from now on the other nodes forward to it and place sessions on it.
   */
  async advertise(info: NodeInfo): Promise<void> {
    this.nodeInfo = { ...this.nodeInfo, ...info };
    await this.options.store.registerNode(this.options.nodeId, this.options.nodeLeaseMs, this.registration());
  }

  /** What this node registers with its lease: its info, and what it can start without a launch once it is placed on. */
  private registration(): NodeInfo {
    if (this.nodeInfo.advertiseUrl === undefined) return this.nodeInfo;
    const ready = this.options.pool.readiness();
    this.readiness.published = JSON.stringify(ready);
    return { ...this.nodeInfo, ready };
  }

  /** Tells the other nodes that this one takes no new sessions (it is stopping). */
  async drain(): Promise<void> {
    await this.options.store
      .setNodeDraining(this.options.nodeId)
      .catch((error: unknown) =>
        this.options.log.warn({ err: error }, "could not mark this node as draining"),
      );
  }

  /** One renewal of the lease, due at `due` (performance.now() time). */
  private async renewLease(due: number): Promise<void> {
    if (this.closed) return;
    const { store, nodeId, nodeLeaseMs, log } = this.options;
    const startedAt = performance.now();
    const lagMs = Math.max(0, startedAt - due);
    let extended = false;
    try {
      // With the renewal, what it can start without a launch: a write between renewals that failed is made good.
      const ready = this.nodeInfo.advertiseUrl !== undefined ? this.options.pool.readiness() : undefined;
      extended = await store.renewNode(nodeId, nodeLeaseMs, ready);
      if (ready) this.readiness.published = JSON.stringify(ready);
      if (!extended && !this.closed) {
        this.stats.lapses++;
        await this.resumeLease();
      }
    } catch (error) {
      log.warn({ err: error, nodeId }, "renewing this node's lease failed");
    }
    const durationMs = performance.now() - startedAt;
    const stats = this.stats;
    stats.renewals++;
    if (!extended) stats.failures++;
    stats.lastLagMs = Math.round(lagMs);
    stats.maxLagMs = Math.max(stats.maxLagMs, stats.lastLagMs);
    stats.lastDurationMs = Math.round(durationMs);
    stats.maxDurationMs = Math.max(stats.maxDurationMs, stats.lastDurationMs);
    if (lagMs + durationMs > nodeLeaseMs / 3) {
      log.warn(
        { nodeId, lagMs: stats.lastLagMs, durationMs: stats.lastDurationMs, leaseMs: nodeLeaseMs },
        "this node's lease was renewed late: the event loop or the database held it up",
      );
    }
  }

  /**
   * The lease had lapsed: take it again, and end only the sessions that another node reclaimed
   * while it was lapsed (the store answers, under the same lock as reclaims).
   */
  private async resumeLease(): Promise<void> {
    const { store, nodeId, nodeLeaseMs, log } = this.options;
    const running = [...this.live.keys()];
    const reclaimed = await store.resumeNode(nodeId, nodeLeaseMs, running);
    // A reclaim may have forgotten the node's row: what the others need to know of it goes back.
    if (this.nodeInfo.advertiseUrl !== undefined || this.nodeInfo.maxSessions !== undefined)
      await store.registerNode(nodeId, nodeLeaseMs, this.registration());
    if (reclaimed.length === 0) {
      log.warn(
        { nodeId, sessions: running.length },
        "this node's lease lapsed, but no other node took its sessions: took the lease again and kept them",
      );
      return;
    }
    log.warn(
      { nodeId, sessions: running.length, reclaimed: reclaimed.length },
      "this node's lease lapsed and another node ended some of its sessions; ending them here",
    );
    await Promise.all(reclaimed.map((id) => this.end(id, "lease lost")));
  }

  private async reclaimLapsed(): Promise<void> {
    const { nodeIds, sessionIds } = await this.options.store.reclaimLapsedNodes({
      except: this.options.nodeId,
    });
    if (sessionIds.length > 0 || nodeIds.length > 0)
      this.options.log.info(
        { nodes: nodeIds, sessions: sessionIds.length },
        "ended the sessions of nodes whose lease lapsed",
      );
    // Their download directories, where this machine has them.
    await this.sweepSessionDirs();
    this.stats.reclaims++;
  }

  /**
   * The directory that holds this store's session directories on this machine (created on first
   * use): named after the store's own id (a random value kept in the store, the same for every
   * node sharing it), so that services with stores of their own never see each other's sessions.
   */
  sessionRoot(): Promise<string> {
    this.root ??= this.options.store.serviceSecret("session-files").then((secret) => {
      const id = createHash("sha256").update("deckhand session files\0").update(secret).digest("hex");
      return join(tmpdir(), `${SESSION_ROOT_PREFIX}${id.slice(0, 16)}`);
    });
    return this.root;
  }

  /** Removes the store's root on this machine if nothing is left in it (another node may use it). */
  private async removeEmptyRoot(): Promise<void> {
    const root = await this.root?.catch(() => undefined);
    if (root) await rmdir(root).catch(() => undefined);
  }

  /** A new download directory for the session, under the store's root. */
  private async makeSessionDir(id: string): Promise<string> {
    const root = await this.sessionRoot();
    for (let attempt = 0; ; attempt++) {
      await mkdir(root, { recursive: true, mode: 0o700 });
      try {
        return await mkdtemp(join(root, `${SESSION_DIR_PREFIX}${id}-`));
      } catch (error) {
        // Another node of the store on this machine removed the (empty) root as it closed.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt > 2) throw error;
      }
    }
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
    const downloadDir = await this.makeSessionDir(record.id);
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
        dh = Deckhand.inContext(ownBrowser.defaultContext(), { ...plan.deckhand, keepAlive: true }, KEEP);
        try {
          await dh.init();
        } catch (error) {
          ownBrowser.disconnect();
          throw error;
        }
        cdp = { browser: ownBrowser, contextId: undefined };
      } else {
        // No warm browser launches while this session's context and page are being made (see
        // BrowserPool.holdWarm): in a burst of starts it would take CPU from every one of them.
        const letWarm = this.options.pool.holdWarm();
        try {
          lease = await this.options.pool.acquire(record.projectId);
        } catch (error) {
          letWarm();
          throw error;
        }
        const settings = JSON.stringify(plan.context);
        const browser = lease.browser;
        this.startsIn.set(browser, (this.startsIn.get(browser) ?? 0) + 1);
        let counted = true;
        const startEnded = () => {
          counted = false;
          const left = (this.startsIn.get(browser) ?? 1) - 1;
          if (left > 0) this.startsIn.set(browser, left);
          else this.startsIn.delete(browser);
          return left;
        };
        try {
          const context =
            (await this.takeSpare(lease.browser, settings)) ?? (await lease.browser.newContext(plan.context));
          dh = Deckhand.inContext(context, plan.deckhand, KEEP);
          // Downloads land in the session's own directory (not the service user's ~/Downloads).
          // Set while init() runs, not before it: nothing can download before the session answers,
          // and a round trip to a busy browser is not waited for twice.
          const [download, init] = await Promise.allSettled([
            lease.browser.connection.root.send("Browser.setDownloadBehavior", {
              behavior: "allow",
              browserContextId: context.id,
              downloadPath: downloadDir,
            }),
            // init() disposes of the context itself when it fails.
            dh.init(),
          ]);
          if (init.status === "rejected") throw init.reason;
          if (download.status === "rejected") {
            await dh.close().catch(() => undefined);
            throw download.reason;
          }
          cdp = { browser: lease.browser, contextId: context.id };
          // The next start's spare, once no other start is under way in this browser: made while
          // they are, it would only take a renderer's start from them (the last one makes it).
          if (startEnded() === 0 && this.options.spareContexts)
            this.prepareSpare(lease.browser, plan.context, settings);
        } catch (error) {
          if (counted) startEnded();
          lease.release();
          throw error;
        } finally {
          letWarm();
        }
      }
    } catch (error) {
      await rm(downloadDir, { recursive: true, force: true }).catch(() => undefined);
      if (this.closed) await this.removeEmptyRoot();
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
    if (this.closed) {
      // Started while the service closed: it goes at once, and so does the root close() left.
      await this.end(record.id, "service shutdown");
      await this.removeEmptyRoot();
    }
    return session;
  }

  /**
   * The spare context of this pool browser, when it was made with the same settings and is still
   * whole (its one page open), for a session about to start there; undefined otherwise (a spare
   * that does not fit is disposed of). Most of a session's start is its first page: a renderer
   * process starts, and the page is set up over several round trips. A spare has done that ahead,
   * so a tenant's further session in a browser it already has starts in milliseconds.
   *
   * A spare is made only in a warm browser (no one's yet) or in a browser of the tenant whose
   * session just started there (the pool gives a browser to one tenant only, and never back),
   * holds nothing but a blank page the service opened, and is out of reach of CDP clients (each is
   * held to its own session's context). It goes with its browser.
   */
  private async takeSpare(browser: Browser, settings: string): Promise<Context | undefined> {
    const entry = this.spares.get(browser);
    if (!entry) return undefined;
    this.spares.delete(browser);
    entry.forget();
    // Being made already: waiting for it is still sooner than making another.
    const spare = await entry.made;
    if (!spare) return undefined;
    const pages = spare.context.pages();
    if (
      spare.settings === settings &&
      browser.isConnected() &&
      pages.length === 1 &&
      !pages[0]!.isClosed() &&
      spare.context.activePage() === pages[0]
    )
      return spare.context;
    await spare.context.close().catch(() => undefined);
    return undefined;
  }

  /** Makes a spare context in `browser` for its tenant's next session, unless it has one. */
  private prepareSpare(
    browser: Browser,
    options: Parameters<Browser["newContext"]>[0],
    settings: string,
  ): void {
    if (this.closed || this.spares.has(browser) || !browser.isConnected()) return;
    const entry: { made: Promise<Spare | undefined>; ready: boolean; forget: () => void } = {
      made: Promise.resolve(undefined),
      ready: false,
      forget: () => {},
    };
    entry.made = (async (): Promise<Spare | undefined> => {
      let context: Context | undefined;
      try {
        context = await browser.newContext(options);
        await context.newPage();
        entry.ready = true;
        return { context, settings };
      } catch {
        await context?.close().catch(() => undefined);
        return undefined;
      }
    })();
    // A browser that closes takes its spare with it; only the entry is left to forget.
    entry.forget = browser.onDisconnected(() => {
      if (this.spares.get(browser) === entry) this.spares.delete(browser);
    });
    this.spares.set(browser, entry);
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
      // Its node's lease lapsed. A reclaim ends its sessions unless that node has just taken its
      // lease again (the two are serialised in the store): the store's answer then decides.
      await this.options.store.reclaimLapsedNodes({ except: this.options.nodeId });
      if ((await this.options.store.getSession(record.id))?.status === "active")
        throw sessionElsewhere(record.id, record.nodeId);
      throw sessionEnded(record.id, "node lost");
    } else if (record.nodeId === undefined && this.options.sharedStore) {
      throw sessionElsewhere(record.id);
    }
    // Nobody runs it: a leftover of an earlier run, or of a node that is gone.
    await this.options.store.endSession(record.id, undefined, "not running anywhere");
    throw sessionEnded(record.id);
  }

  /** Ends a running session: its context is disposed of and its record marked ended. */
  end(id: string, reason: EndReason): Promise<void> {
    if (this.deferred.delete(id)) {
      this.options.log.info(
        { sessionId: id, reason },
        "session ended (its browser.cdpUrl was never attached)",
      );
      return this.options.store.endSession(id, undefined, reason).then(
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
      await this.options.store.endSession(id, undefined, reason).catch((error: unknown) => {
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
   * Removes the download directories of sessions that have ended but whose node could not remove
   * them: it was killed, or another node reclaimed its sessions. Only under this store's root (see
   * sessionRoot): every directory there is a session of this store, run by this node or by
   * another node of the same store on this machine, so the store says whether it has ended.
   * Directories of other services (their own roots) are never looked at.
   */
  async sweepSessionDirs(): Promise<void> {
    const root = await this.sessionRoot();
    let names: string[];
    try {
      names = await readdir(root);
    } catch {
      return;
    }
    for (const name of names) {
      const id = SESSION_DIR.exec(name)?.[1];
      if (!id || this.live.has(id)) continue;
      const record = await this.options.store.getSession(id);
      if (record && record.status === "active") continue;
      await rm(join(root, name), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async endOrphans(all: boolean): Promise<number> {
    const now = Date.now();
    let ended = 0;
    if (!all) await this.options.store.reclaimLapsedNodes({ except: this.options.nodeId });
    for (const record of await this.options.store.listActiveSessions()) {
      if (this.live.has(record.id)) continue;
      // Another node's, under its lease: that node runs it, or its lapsed lease ends it.
      if (!all && record.nodeId !== undefined && record.nodeId !== this.options.nodeId) continue;
      const timeout = (record.params.sessionCreateParams as { timeout?: number } | undefined)?.timeout;
      const idleMs = timeout !== undefined ? timeout * 1000 : this.options.idleTimeoutMs;
      if (all || now - record.lastActivityAt > idleMs) {
        // A session waiting for its browser.cdpUrl ends by its idle timeout too.
        this.deferred.delete(record.id);
        const reason = all ? "left over from an earlier run" : "idle timeout";
        if (await this.options.store.endSession(record.id, undefined, reason)) ended++;
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
    clearTimeout(this.heartbeat);
    clearInterval(this.reclaimer);
    await Promise.all(
      [...this.live.keys(), ...this.deferred.keys()].map((id) => this.end(id, "service shutdown")),
    );
    await Promise.all([...this.endings]);
    await this.options.pool.close();
    // Its sessions have ended: nothing is left for others to reclaim.
    await this.options.store.removeNode(this.options.nodeId).catch((error: unknown) => {
      this.options.log.warn({ err: error }, "could not give up this node's lease");
    });
    // The store's root goes once no node of it on this machine has a session left there.
    await this.removeEmptyRoot();
  }
}
