// @deckhand/server: the Deckhand service as a library (the CLI is bin/deckhand-server.js).

export { type AppOptions, createApp, type ServiceConfig } from "./app.ts";
export { type AuthContext, authOf, KeyVerifier } from "./auth.ts";
export { Cluster, freeCapacity, parseAdvertiseUrl } from "./cluster/cluster.ts";
export { ClusterTrust, type ForwardedClaim, NODE_HEADER, OWNER_HEADER } from "./cluster/trust.ts";
export * from "./defaults.ts";
export { ApiError, atCapacity, notImplemented, sessionEnded, sessionNotFound } from "./errors.ts";
export { createLogger, type LoggerOptions, type LogLevel } from "./logger.ts";
export {
  type LeaseStats,
  type MetricsSources,
  type OperationKind,
  type OperationOutcome,
  ServiceMetrics,
  type SessionState,
} from "./metrics.ts";
export { listenMetrics, type MetricsListener } from "./metrics-route.ts";
export { API_VERSION } from "./openapi.ts";
export { REDACTED, redactSecrets } from "./redact.ts";
export type {
  EndContext,
  OperationContext,
  RouteContext,
  SessionHandlers,
  SessionStartResult,
  StartContext,
} from "./routes/handlers.ts";
export { registerRoutes } from "./routes/index.ts";
export { loadActiveSession, loadOwnSession } from "./routes/session-access.ts";
export * from "./schemas/index.ts";
export { type ClusterSettings, createService, type Service, type ServiceOptions } from "./service.ts";
export {
  type BrowserLease,
  BrowserPool,
  type BrowserPoolOptions,
  type BrowserPoolStats,
  type PoolCapacity,
} from "./sessions/browser-pool.ts";
export { type CdpTarget, LiveSession, type SessionDefaults } from "./sessions/live-session.ts";
export { costOf, priceOf } from "./sessions/pricing.ts";
export { type EndReason, SessionManager, type SessionManagerOptions } from "./sessions/session-manager.ts";
export { type OperationControls, type OperationData, runOperation, wantsStream } from "./sse.ts";
export { parseOperatorKeys } from "./store/api-keys.ts";
export { DEFAULT_DATA_DIR, type OpenStoreOptions, openStore } from "./store/open-store.ts";
export type * from "./store/store.ts";
