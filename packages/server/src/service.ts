// The whole service: the HTTP app with the session handlers, the session manager and its browser
// pool, and the CDP proxy. Closing the app ends every session and closes every browser.

import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { type AppOptions, createApp } from "./app.ts";
import { installCdpProxy } from "./cdp-proxy/cdp-proxy.ts";
import {
  DEFAULT_NODE_LEASE_MS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_SESSION_DISCONNECT_GRACE_MS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
} from "./defaults.ts";
import { createLogger } from "./logger.ts";
import { createSessionHandlers } from "./operations/session-handlers.ts";
import { BrowserPool, type BrowserPoolOptions } from "./sessions/browser-pool.ts";
import type { CdpUrlHosts } from "./sessions/cdp-url-policy.ts";
import { SessionManager } from "./sessions/session-manager.ts";

export interface ServiceOptions extends Omit<AppOptions, "handlers"> {
  /** The browser pool: how many Chromium processes, how many sessions each, how they start. */
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
   * Hosts a session's browser.cdpUrl may attach to: "*" (any, the default) or a list (empty: none).
   * The service's own pool browsers are refused whatever this says.
   */
  cdpUrlHosts?: CdpUrlHosts;
  /**
   * Milliseconds a session started without keepAlive lives on after its last CDP client
   * disconnected, when no request comes. Default 30 s.
   */
  sessionDisconnectGraceMs?: number;
  /** This node's id in the store (its lease, its sessions' owner). Default: a new UUID. */
  nodeId?: string;
  /** Milliseconds this node's lease lasts unless renewed (every third of it). Default 15 s. */
  nodeLeaseMs?: number;
}

export interface Service {
  app: FastifyInstance;
  sessions: SessionManager;
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const logger = options.logger ?? createLogger();
  const idleTimeoutMs = options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
  const sharedStore = options.sharedStore ?? options.store.description.startsWith("postgres");
  const nodeId = options.nodeId ?? randomUUID();
  const sessions = new SessionManager({
    nodeId,
    nodeLeaseMs: options.nodeLeaseMs ?? DEFAULT_NODE_LEASE_MS,
    store: options.store,
    pool: new BrowserPool(options.browsers),
    log: logger,
    idleTimeoutMs,
    serverCache: options.serverCache ?? true,
    sharedStore,
    disconnectGraceMs: options.sessionDisconnectGraceMs ?? DEFAULT_SESSION_DISCONNECT_GRACE_MS,
    ...(options.cdpUrlHosts !== undefined ? { cdpUrlHosts: options.cdpUrlHosts } : {}),
  });
  const handlers = createSessionHandlers({
    sessions,
    store: options.store,
    log: logger,
    operationTimeoutMs: options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
  });
  // The lease first: sessions are started under it from the first request on.
  await sessions.holdLease();
  let app: FastifyInstance;
  try {
    app = await createApp({ ...options, logger, handlers, nodeId });
  } catch (error) {
    await sessions.close();
    throw error;
  }
  installCdpProxy(app, { store: options.store, verifier: app.deckhand.verifier, sessions });
  app.addHook("onClose", async () => {
    await sessions.close();
  });
  await sessions.sweepOrphans({
    all: !sharedStore,
    intervalMs: Math.min(60_000, Math.max(1000, idleTimeoutMs)),
  });
  return { app, sessions };
}
