// Builds the service's Fastify instance: validation and serialisation from the zod schemas, JSON
// error bodies for everything, API-key auth on /v1, the OpenAPI document, and the session routes
// whose browser work `handlers` supplies.

import Fastify, { type FastifyInstance, LogController } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import type pino from "pino";
import { installAccessLog } from "./access-log.ts";
import { installAuth, KeyVerifier } from "./auth.ts";
import type { Cluster } from "./cluster/cluster.ts";
import { installClusterRouting, installForwardedCheck } from "./cluster/routing.ts";
import { type ConnectionLimits, limitConnectionsPerAddress, serverTimeouts } from "./connections.ts";
import { registerDashboard } from "./dashboard/routes.ts";
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_CONNECTION_IDLE_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_READY_MAX_EVENT_LOOP_LAG_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  defaultMaxSessionsPerProject,
} from "./defaults.ts";
import { handleClientError, handleFrameworkError, installErrorHandling } from "./error-handler.ts";
import { EventLoopLag } from "./event-loop.ts";
import { registerFrontPage } from "./front-page.ts";
import { installHeaderAliases } from "./header-aliases.ts";
import { installJsonBodyParser } from "./json-body.ts";
import { RevocationWatch } from "./key-revocation.ts";
import { createLogger } from "./logger.ts";
import { ServiceMetrics } from "./metrics.ts";
import { registerMetricsRoute } from "./metrics-route.ts";
import { API_VERSION, registerOpenApi, registerOpenApiRoute } from "./openapi.ts";
import type { SessionHandlers } from "./routes/handlers.ts";
import type { ReadinessCheck } from "./routes/health.ts";
import { registerRoutes } from "./routes/index.ts";
import { installSecrets } from "./secrets.ts";
import { InflightOperations, installShutdown } from "./shutdown.ts";
import type { Store } from "./store/store.ts";
import { type LinkLifetimes, SessionLinks } from "./viewer/session-links.ts";

export interface AppOptions {
  store: Store;
  /** The browser work of the session routes; a missing handler answers 501 NOT_IMPLEMENTED. */
  handlers?: Partial<SessionHandlers>;
  /** Keys accepted besides the store's (`DECKHAND_API_KEYS`). */
  operatorKeys?: readonly string[];
  /** Largest accepted request body, in bytes (413 above). Default 1 MiB. */
  bodyLimit?: number;
  /** Most active sessions (429 AT_CAPACITY beyond). Default 10. */
  maxSessions?: number;
  /** Most active sessions of one project (429 PROJECT_AT_CAPACITY beyond). Default: half of maxSessions. */
  maxSessionsPerProject?: number;
  /** Milliseconds of inactivity after which a session may be ended. Default 10 minutes. Enforced by the session manager. */
  sessionIdleTimeoutMs?: number;
  /**
   * On close, milliseconds that operations in flight (and streams) get to finish before they are
   * answered with 503 SHUTTING_DOWN (a stream: its final `error` event) and every connection is
   * cut. Default 10 s.
   */
  shutdownGraceMs?: number;
  /** Default: JSON lines to stdout at level info, secrets redacted (see createLogger). */
  logger?: pino.Logger;
  /**
   * This service node, when its sessions are held under a lease (createService): new sessions are
   * started under it, and requests for another live node's sessions answer 409 SESSION_ELSEWHERE.
   */
  nodeId?: string;
  /** How long signed session links (sessionUrl, debugUrl, cdpUrl) work; see viewer/session-links.ts. */
  linkLifetimes?: Partial<LinkLifetimes>;
  /** Milliseconds for a request's headers to arrive (408 and closed after). Default 10 s. */
  headersTimeoutMs?: number;
  /**
   * Milliseconds for a whole request, headers and body, to arrive (408 and closed after); at least
   * headersTimeoutMs. Responses (streams too) are not bound by it. Default 30 s.
   */
  requestTimeoutMs?: number;
  /** Milliseconds a kept-alive connection may wait for its next request. Default 72 s. */
  connectionIdleTimeoutMs?: number;
  /**
   * Most connections open at once from one address (one IPv6 /64), WebSockets included; one more is
   * answered 429 TOO_MANY_CONNECTIONS and closed. 0: no limit. Default 256.
   */
  maxConnectionsPerAddress?: number;
  /** The metrics the service counts into; default: new ones (see metrics.ts). */
  metrics?: ServiceMetrics;
  /**
   * GET /metrics on the service's port answers requests with `Authorization: Bearer <token>`.
   * Default: none, and /metrics is 404 here (metrics-route.ts has a listener of its own).
   */
  metricsToken?: string;
  /** Event-loop lag (recent maximum, ms) above which /readyz answers 503. Default 1000. */
  readyMaxEventLoopLagMs?: number;
  /**
   * This node's cluster (several nodes on one PostgreSQL): requests for other nodes' sessions are
   * forwarded to them, new sessions placed on the node with the most room, and `maxSessions` is
   * this node's own. Without it, another live node's session answers 409 SESSION_ELSEWHERE and
   * `maxSessions` counts every session of the store.
   */
  cluster?: Cluster;
}

export interface ServiceConfig {
  bodyLimit: number;
  maxSessions: number;
  maxSessionsPerProject: number;
  sessionIdleTimeoutMs: number;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The service's store and settings, for code that runs beside the routes (e.g. an idle sweeper). */
    deckhand: {
      store: Store;
      config: ServiceConfig;
      verifier: KeyVerifier;
      revocations: RevocationWatch;
      /** The operations running now; answered and stopped at shutdown (see shutdown.ts). */
      inflight: InflightOperations;
      /** Signs and checks the session links (sessionUrl, debugUrl, cdpUrl). */
      links: SessionLinks;
      /** What the service counts (GET /metrics). */
      metrics: ServiceMetrics;
      /** The event-loop lag monitor (its recent maximum feeds /readyz and the metrics). */
      eventLoop: EventLoopLag;
      /** What /readyz checks besides the store; the service adds its own (the browser pool). */
      readinessChecks: ReadinessCheck[];
    };
  }
}

export async function createApp(options: AppOptions): Promise<FastifyInstance> {
  const config: ServiceConfig = {
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    maxSessionsPerProject:
      options.maxSessionsPerProject ??
      defaultMaxSessionsPerProject(options.maxSessions ?? DEFAULT_MAX_SESSIONS),
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  };
  const limits: ConnectionLimits = {
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    idleTimeoutMs: options.connectionIdleTimeoutMs ?? DEFAULT_CONNECTION_IDLE_TIMEOUT_MS,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  };
  if (limits.requestTimeoutMs < limits.headersTimeoutMs) {
    throw new RangeError(
      `requestTimeoutMs (${limits.requestTimeoutMs}) must be at least headersTimeoutMs (${limits.headersTimeoutMs}): ` +
        "the whole request cannot arrive before its headers.",
    );
  }
  if (options.metricsToken !== undefined && options.metricsToken.length < 16) {
    throw new RangeError(
      "metricsToken must be at least 16 characters (a random secret, e.g. `openssl rand -hex 32`).",
    );
  }
  const metrics = options.metrics ?? new ServiceMetrics();
  // Typed as a plain FastifyInstance: the pino logger's own type would otherwise spread into every
  // route and plugin signature.
  const app = Fastify({
    loggerInstance: options.logger ?? createLogger(),
    // One line per request instead, written by installAccessLog.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // Header, body and idle timeouts (connections.ts).
    ...serverTimeouts(limits),
    // Errors Fastify and Node answer before any route runs (a path that is not valid percent-encoding,
    // a path parameter over its length, a request that is not valid HTTP) and the answer while
    // closing get the service's error shape too.
    frameworkErrors: (error, request, reply) => handleFrameworkError(error, request, reply, config.bodyLimit),
    clientErrorHandler: handleClientError,
    return503OnClosing: false,
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const verifier = new KeyVerifier(options.store, options.operatorKeys);
  const revocations = new RevocationWatch(options.store, { log: app.log });
  const inflight = new InflightOperations();
  const links = await SessionLinks.create(options.store, verifier, options.linkLifetimes);
  limitConnectionsPerAddress(app.server, limits.maxConnectionsPerAddress, app.log, metrics);
  const eventLoop = new EventLoopLag().start();
  metrics.setSources({ eventLoop });
  const maxLagMs = options.readyMaxEventLoopLagMs ?? DEFAULT_READY_MAX_EVENT_LOOP_LAG_MS;
  const readinessChecks: ReadinessCheck[] = [
    () => {
      const lag = eventLoop.recentMaxMs();
      return lag > maxLagMs
        ? `the event loop stalled for ${Math.round(lag)} ms in the last 10 s (threshold ${maxLagMs} ms)`
        : undefined;
    },
  ];
  app.decorate("deckhand", {
    store: options.store,
    config,
    verifier,
    revocations,
    inflight,
    links,
    metrics,
    eventLoop,
    readinessChecks,
  });
  app.addHook("onClose", (_instance, done) => {
    revocations.stop();
    eventLoop.stop();
    done();
  });
  installAccessLog(app);
  // Before auth: a forwarded request's claim stands in for its API key.
  installForwardedCheck(app, options.cluster);
  installJsonBodyParser(app);
  installErrorHandling(app, config.bodyLimit);
  // Before secrets and auth: they read the spec's header names only.
  installHeaderAliases(app);
  installSecrets(app);
  installShutdown(app, inflight, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
  installAuth(app, verifier);
  await registerOpenApi(app);
  if (options.metricsToken !== undefined) registerMetricsRoute(app, metrics, options.metricsToken);
  await registerFrontPage(app, { store: options.store, apiVersion: API_VERSION });
  // The project dashboard (/dashboard): its own encapsulated plugin, cookies and forms (dashboard/routes.ts).
  await registerDashboard(app, { store: options.store, verifier, links });

  if (options.cluster) {
    installClusterRouting(app, options.cluster, {
      store: options.store,
      links,
      maxSessionsPerProject: config.maxSessionsPerProject,
    });
  }
  await app.register(async (scope) => {
    registerOpenApiRoute(scope);
    registerRoutes(scope, {
      store: options.store,
      handlers: options.handlers ?? {},
      maxSessions: config.maxSessions,
      maxSessionsPerProject: config.maxSessionsPerProject,
      ...(options.nodeId !== undefined ? { nodeId: options.nodeId } : {}),
      perNodeCapacity: options.cluster !== undefined,
    });
  });
  return app;
}
