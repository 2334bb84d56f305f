// The seam between HTTP and browsers. The routes do everything that is about HTTP and the store
// (auth, validation, session ownership and state, capacity, streaming, error bodies); a
// SessionHandlers implementation does the work on the browser. A handler that is not provided
// answers 501 NOT_IMPLEMENTED.

import type { FastifyRequest } from "fastify";
import type { AuthContext } from "../auth.ts";
import type { OperationHeaders, StartHeaders } from "../schemas/common.ts";
import type {
  SessionActBody,
  SessionActData,
  SessionAgentExecuteBody,
  SessionAgentExecuteData,
  SessionExtractBody,
  SessionExtractData,
  SessionNavigateBody,
  SessionNavigateData,
  SessionObserveBody,
  SessionObserveData,
} from "../schemas/session-operations.ts";
import type { SessionStartData, SessionStartParams } from "../schemas/session-start.ts";
import type { OperationControls } from "../sse.ts";
import type { SessionRecord, Store } from "../store/store.ts";

export interface RouteContext {
  request: FastifyRequest;
  /** The caller's key and project. */
  auth: AuthContext;
  store: Store;
}

export interface StartContext extends RouteContext {
  /** The validated body, aliases folded in (`sessionId`, `sessionCreateParams`). */
  params: SessionStartParams;
  headers: StartHeaders;
  /** `x-model-api-key`, for this request only: never store or log it. */
  modelApiKey?: string;
  /**
   * The session's row. New sessions: already created (status active, counted against
   * --max-sessions); if the handler throws, the route ends it again. Resumed: the caller's own
   * active session named by `sessionId`.
   */
  session: SessionRecord;
  resumed: boolean;
}

export interface OperationContext<Body> extends RouteContext, OperationControls {
  /** The caller's own active session (the route answered 404/410 otherwise). */
  session: SessionRecord;
  /** The validated body; unknown fields are already dropped. */
  body: Body;
  headers: OperationHeaders;
  /** `x-model-api-key`, for this request only: never store or log it. */
  modelApiKey?: string;
  /** `x-platform-cache-bypass: true`: do not read the server cache for this call. */
  cacheBypass: boolean;
  /**
   * Says whether the server cache served the answer, for the `x-platform-cache-status` header of a
   * JSON answer. Needed where the result cannot carry `cacheStatus` itself (observe's array).
   */
  reportCacheStatus(status: "HIT" | "MISS"): void;
}

export interface EndContext extends RouteContext {
  /** The caller's own active session. The route marks it ended after the handler returns. */
  session: SessionRecord;
}

/** What SessionStart's handler returns; the route adds `sessionId`. */
export type SessionStartResult = Omit<SessionStartData, "sessionId">;

export interface SessionHandlers {
  sessionStart(context: StartContext): Promise<SessionStartResult>;
  sessionAct(context: OperationContext<SessionActBody>): Promise<SessionActData>;
  sessionExtract(context: OperationContext<SessionExtractBody>): Promise<SessionExtractData>;
  sessionObserve(context: OperationContext<SessionObserveBody>): Promise<SessionObserveData>;
  sessionNavigate(context: OperationContext<SessionNavigateBody>): Promise<SessionNavigateData>;
  sessionAgentExecute(context: OperationContext<SessionAgentExecuteBody>): Promise<SessionAgentExecuteData>;
  /** Closes the session's browser (or lets it live on with keepAlive). */
  sessionEnd(context: EndContext): Promise<void>;
}

/** What every route registration needs. */
export interface RouteDeps {
  store: Store;
  handlers: Partial<SessionHandlers>;
  maxSessions: number;
  /** This service node, whose lease its sessions are started under (none: no node checks). */
  nodeId?: string;
  /** Most active sessions of one project. Default: maxSessions. */
  maxSessionsPerProject?: number;
  /** maxSessions counts this node's sessions only (a cluster node); otherwise every session of the store. */
  perNodeCapacity?: boolean;
}
