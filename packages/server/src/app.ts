// Builds the service's Fastify instance: validation and serialisation from the zod schemas, JSON
// error bodies for everything, API-key auth on /v1, the OpenAPI document, and the session routes
// whose browser work `handlers` supplies.

import Fastify, { type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import type pino from "pino";
import { installAuth, KeyVerifier } from "./auth.ts";
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  defaultMaxSessionsPerProject,
} from "./defaults.ts";
import { installErrorHandling } from "./error-handler.ts";
import { installJsonBodyParser } from "./json-body.ts";
import { RevocationWatch } from "./key-revocation.ts";
import { createLogger } from "./logger.ts";
import { registerOpenApi, registerOpenApiRoute } from "./openapi.ts";
import type { SessionHandlers } from "./routes/handlers.ts";
import { registerRoutes } from "./routes/index.ts";
import type { Store } from "./store/store.ts";

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
   * On close, milliseconds that requests in flight (and streams) get to finish before every
   * connection is cut. Default 10 s.
   */
  shutdownGraceMs?: number;
  /** Default: JSON lines to stdout at level info, secrets redacted (see createLogger). */
  logger?: pino.Logger;
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
    deckhand: { store: Store; config: ServiceConfig; verifier: KeyVerifier; revocations: RevocationWatch };
  }
}

/**
 * `close()` stops accepting connections and waits for the open ones. Idle keep-alive connections
 * are closed at once, but a connection in the middle of a long stream, or one a client opened and
 * never used, would hold the close for as long as the client likes; after the grace period they
 * are cut (which aborts the operations of streams still running).
 */
function installShutdownGrace(app: FastifyInstance, graceMs: number): void {
  app.addHook("preClose", (done) => {
    const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
    timer.unref();
    app.server.once("close", () => clearTimeout(timer));
    done();
  });
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
    bodyLimit: config.bodyLimit,
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const verifier = new KeyVerifier(options.store, options.operatorKeys);
  const revocations = new RevocationWatch(options.store, { log: app.log });
  app.decorate("deckhand", { store: options.store, config, verifier, revocations });
  app.addHook("onClose", (_instance, done) => {
    revocations.stop();
    done();
  });
  installJsonBodyParser(app);
  installErrorHandling(app, config.bodyLimit);
  installAuth(app, verifier);
  installShutdownGrace(app, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
  await registerOpenApi(app);

  await app.register(async (scope) => {
    registerOpenApiRoute(scope);
    registerRoutes(scope, {
      store: options.store,
      handlers: options.handlers ?? {},
      maxSessions: config.maxSessions,
      maxSessionsPerProject: config.maxSessionsPerProject,
    });
  });
  return app;
}
