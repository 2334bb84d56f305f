// The whole service: the HTTP app with the session handlers, the session manager and its browser
// pool, and the CDP proxy. Closing the app ends every session and closes every browser.

import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { type AppOptions, createApp } from "./app.ts";
import { installCdpProxy } from "./cdp-proxy/cdp-proxy.ts";
import { Cluster } from "./cluster/cluster.ts";
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_NODE_LEASE_MS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_SESSION_DISCONNECT_GRACE_MS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
} from "./defaults.ts";
import { createLogger } from "./logger.ts";
import { installMcp } from "./mcp.ts";
import { ServiceMetrics, type SessionState } from "./metrics.ts";
import { createSessionHandlers } from "./operations/session-handlers.ts";
import { ANYWHERE, type EgressPolicy } from "./policy/egress.ts";
import { BrowserPool, type BrowserPoolOptions } from "./sessions/browser-pool.ts";
import { SessionManager } from "./sessions/session-manager.ts";
import { DevToolsFrontend } from "./viewer/devtools-frontend.ts";
import { registerViewer } from "./viewer/routes.ts";
import { type StepScreenshotOptions, StepScreenshots } from "./viewer/step-screenshots.ts";

/** Several nodes on one PostgreSQL behind a load balancer (README, "Running several nodes"). */
export interface ClusterSettings {
  /** Where the other nodes reach this one (`--advertise-url`): checked by Service.advertise once it listens. */
  advertiseUrl: string;
  /** Shared by every node, at least 32 characters (`--cluster-secret`, DECKHAND_CLUSTER_SECRET). */
  secret: string;
}

export interface ServiceOptions extends Omit<AppOptions, "handlers" | "cluster"> {
  /**
   * Join the other nodes of this store as a cluster: forward requests for their sessions to them,
   * place new sessions where there is most room. Needs a shared store (PostgreSQL).
   */
  cluster?: ClusterSettings;
  /**
   * The browser pool: how many Chromium processes, how many sessions each, who may share one
   * (`isolation`: "project", the default, or "session"), how they start.
   */
  browsers?: BrowserPoolOptions;
  /** Server cache default for sessions whose start does not say (serverCache). Default true. */
  serverCache?: boolean;
  /** Milliseconds an operation may take when neither call nor session gives a timeout. */
  operationTimeoutMs?: number;
  /**
   * Whether the store is shared with other service nodes. Default: true for PostgreSQL. With a
   * store of its own, sessions left active by an earlier run are ended at start.
   */
  sharedStore?: boolean;
  /**
   * Where a session's browser.cdpUrl may attach (policy/egress.ts). Default: anywhere; the CLI
   * makes it none when the service listens beyond loopback. The service's own port is refused
   * whatever this says.
   */
  cdpUrlHosts?: EgressPolicy;
  /** Where a call's model baseURL may lead. Default: anywhere; the CLI makes it public addresses beyond loopback. */
  modelBaseUrlHosts?: EgressPolicy;
  /** Most tabs a session may have open at once (default 20). */
  maxTabsPerSession?: number;
  /** Largest CDP message a proxy client may send, in bytes (default 8 MiB). */
  cdpMaxMessageBytes?: number;
  /**
   * Bytes per second the CDP proxy clients of one session may send together (default 16 MiB).
   * Past it the proxy stops reading their sockets until the excess is paid at that rate.
   */
  cdpBytesPerSecond?: number;
  /**
   * Milliseconds a session started without keepAlive lives on after its last CDP client
   * disconnected, when no request comes. Default 30 s.
   */
  sessionDisconnectGraceMs?: number;
  /** This node's id in the store (its lease, its sessions' owner). Default: a new UUID. */
  nodeId?: string;
  /** Milliseconds this node's lease lasts unless renewed (every third of it). Default 15 s. */
  nodeLeaseMs?: number;
  /** The screenshot of every step (quality, size, retention; `enabled: false` takes none). */
  screenshots?: StepScreenshotOptions;
}

export interface Service {
  app: FastifyInstance;
  sessions: SessionManager;
  /** What the service counts; serve it with listenMetrics (metrics-route.ts) or metricsToken. */
  metrics: ServiceMetrics;
  /** The node's cluster, when it is one's. */
  cluster?: Cluster;
  /**
   * Once the app listens: checks that the cluster's advertised address reaches this node and
   * registers it, after which other nodes forward to it and place sessions on it. Nothing without a
   * cluster.
   */
  advertise(): Promise<void>;
}

/** The live sessions of this node by state, for the metrics. */
function sessionStates(sessions: SessionManager): Record<SessionState, number> {
  const states: Record<SessionState, number> = { busy: 0, idle: 0, ending: 0 };
  for (const session of sessions.sessions()) {
    states[session.ended ? "ending" : session.pending > 0 ? "busy" : "idle"]++;
  }
  return states;
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const logger = options.logger ?? createLogger();
  const idleTimeoutMs = options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
  const sharedStore = options.sharedStore ?? options.store.description.startsWith("postgres");
  const nodeId = options.nodeId ?? randomUUID();
  if (options.cluster && !sharedStore) {
    throw new RangeError(
      "A cluster needs a store the nodes share (PostgreSQL, --database-url); SQLite serves one node.",
    );
  }
  const pool = new BrowserPool(options.browsers);
  const cluster = options.cluster
    ? new Cluster({
        store: options.store,
        nodeId,
        log: logger,
        readiness: () => pool.readiness(),
        sharesBrowsers: pool.isolation === "project",
        ...options.cluster,
      })
    : undefined;
  // Known once the app listens: the port a caller must not make the service call itself on.
  let app: FastifyInstance | undefined;
  const ownPort = () => {
    const address = app?.server.address();
    return typeof address === "object" && address ? address.port : undefined;
  };
  const sessions = new SessionManager({
    nodeId,
    nodeLeaseMs: options.nodeLeaseMs ?? DEFAULT_NODE_LEASE_MS,
    store: options.store,
    pool,
    log: logger,
    idleTimeoutMs,
    serverCache: options.serverCache ?? true,
    sharedStore,
    disconnectGraceMs: options.sessionDisconnectGraceMs ?? DEFAULT_SESSION_DISCONNECT_GRACE_MS,
    ...(options.cdpUrlHosts !== undefined ? { cdpUrlHosts: options.cdpUrlHosts } : {}),
    ...(options.maxTabsPerSession !== undefined ? { maxTabsPerSession: options.maxTabsPerSession } : {}),
    ownPort,
    nodeInfo: { maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS },
    // Warm browsers (each with a spare context) make a project's first session fast; a spare
    // context in each of its browsers makes its next ones fast. --warm-browsers 0 turns both off
    // (every start as before). Under --isolation session a browser has one session only: a spare
    // made after a start would never be used.
    spareContexts: pool.warmTarget > 0 && pool.isolation === "project",
  });
  const screenshots =
    options.screenshots?.enabled === false
      ? undefined
      : new StepScreenshots(options.store, logger, options.screenshots);
  const metrics = options.metrics ?? new ServiceMetrics();
  metrics.setSources({
    sessionStates: () => sessionStates(sessions),
    // The lease's renewals (SessionManager.leaseStats).
    leaseStats: () => sessions.leaseStats(),
    browserPool: () => sessions.pool.stats(),
    spareContexts: () => sessions.spareContexts(),
  });
  const handlers = createSessionHandlers({
    metrics,
    screenshots,
    sessions,
    store: options.store,
    log: logger,
    operationTimeoutMs: options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
    modelEgress: { policy: options.modelBaseUrlHosts ?? ANYWHERE, ownPort },
  });
  // The lease first: sessions are started under it from the first request on.
  await sessions.holdLease();
  try {
    const { cluster: _settings, ...appOptions } = options;
    app = await createApp({
      ...appOptions,
      logger,
      handlers,
      nodeId,
      metrics,
      ...(cluster ? { cluster } : {}),
    });
  } catch (error) {
    await sessions.close();
    await cluster?.close();
    throw error;
  }
  registerViewer(app, {
    store: options.store,
    links: app.deckhand.links,
    sessions,
    devtools: new DevToolsFrontend({
      log: logger,
      ...(options.browsers?.headless !== undefined ? { headless: options.browsers.headless } : {}),
      ...(options.browsers?.executablePath ? { executablePath: options.browsers.executablePath } : {}),
      ...(options.browsers?.args ? { args: options.browsers.args } : {}),
    }),
  });
  app.deckhand.readinessChecks.push(() => sessions.pool.unavailable());
  const cdpDeps = {
    store: options.store,
    verifier: app.deckhand.verifier,
    revocations: app.deckhand.revocations,
    links: app.deckhand.links,
    sessions,
    ...(options.cdpMaxMessageBytes !== undefined ? { maxMessageBytes: options.cdpMaxMessageBytes } : {}),
    ...(options.cdpBytesPerSecond !== undefined ? { bytesPerSecond: options.cdpBytesPerSecond } : {}),
    // The proxy's bytes in and out (CdpProxyDeps.onTraffic).
    onTraffic: (direction: "in" | "out", bytes: number) => metrics.cdpBytes(direction, bytes),
    onThrottled: () => metrics.cdpThrottled(),
    ...(cluster ? { cluster } : {}),
  };
  installCdpProxy(app, cdpDeps);
  installMcp(app, {
    verifier: app.deckhand.verifier,
    idleTimeoutMs: idleTimeoutMs,
    ...(cluster ? { cluster } : {}),
  });
  // Stopping: the other nodes place nothing new here from now on, while this node's operations
  // get the shutdown grace to finish (shutdown.ts).
  app.addHook("preClose", async () => {
    await sessions.drain();
  });
  app.addHook("onClose", async () => {
    screenshots?.stop();
    await sessions.close();
    await cluster?.close();
  });
  screenshots?.startPruning();
  const service = app;
  await sessions.sweepOrphans({
    all: !sharedStore,
    intervalMs: Math.min(60_000, Math.max(1000, idleTimeoutMs)),
  });
  // Warm browsers launch in the background: the service answers before they are up.
  sessions.pool.warmUp();
  return {
    app: service,
    sessions,
    metrics,
    ...(cluster ? { cluster } : {}),
    advertise: async () => {
      if (!cluster) return;
      await cluster.checkAdvertised();
      await sessions.advertise({ advertiseUrl: cluster.advertiseUrl });
    },
  };
}
