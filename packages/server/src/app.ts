// Builds the service's Fastify instance: validation and serialisation from the zod schemas, JSON
// error bodies for everything, API-key auth on /v1, the OpenAPI document, and the session routes
// whose browser work `handlers` supplies.

import Fastify, { type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import type pino from "pino";
import { installAccessLog } from "./access-log.ts";
import { installAuth, KeyVerifier } from "./auth.ts";
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  defaultMaxSessionsPerProject,
} from "./defaults.ts";
import { handleClientError, handleFrameworkError, installErrorHandling } from "./error-handler.ts";
import { registerFrontPage } from "./front-page.ts";
import { installHeaderAliases } from "./header-aliases.ts";
import { installJsonBodyParser } from "./json-body.ts";
import { RevocationWatch } from "./key-revocation.ts";
import { createLogger } from "./logger.ts";
import { API_VERSION, registerOpenApi, registerOpenApiRoute } from "./openapi.ts";
import type { SessionHandlers } from "./routes/handlers.ts";
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
  // Typed as a plain FastifyInstance: the pino logger's own type would otherwise spread into every
  // route and plugin signature.
  const app = Fastify({
    loggerInstance: options.logger ?? createLogger(),
    // One line per request instead, written by installAccessLog.
    disableRequestLogging: true,
    bodyLimit: config.bodyLimit,
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
  app.decorate("deckhand", { store: options.store, config, verifier, revocations, inflight, links });
  app.addHook("onClose", (_instance, done) => {
    revocations.stop();
    done();
  });
  installAccessLog(app);
  installJsonBodyParser(app);
  installErrorHandling(app, config.bodyLimit);
  // Before secrets and auth: they read the spec's header names only.
  installHeaderAliases(app);
  installSecrets(app);
  installShutdown(app, inflight, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
  installAuth(app, verifier);
  await registerOpenApi(app);
  await registerFrontPage(app, { store: options.store, apiVersion: API_VERSION });

  await app.register(async (scope) => {
    registerOpenApiRoute(scope);
    registerRoutes(scope, {
      store: options.store,
      handlers: options.handlers ?? {},
      maxSessions: config.maxSessions,
      maxSessionsPerProject: config.maxSessionsPerProject,
      ...(options.nodeId !== undefined ? { nodeId: options.nodeId } : {}),
    });
  });
  return app;
}
