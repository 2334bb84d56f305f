// Errors the service answers with on purpose: each carries its HTTP status and a stable code, and
// its message is safe to send to the client. Anything else that escapes a route is an internal
// error and the client only learns that it happened (see error-handler.ts).

export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  /** Plain fields a client may act on (sent as the error body's `details`). */
  readonly details: Record<string, string | number | boolean> | undefined;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    details?: Record<string, string | number | boolean>,
  ) {
    super(message);
    this.name = "ApiError";
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
  }
}

/** 404: indistinguishable for a session that does not exist and one of another project. */
export function sessionNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "SESSION_NOT_FOUND",
    `Session ${JSON.stringify(id)} was not found (it may never have existed or belong to another API key's project).`,
  );
}

/** 410: the session existed and has ended; only its replay is still readable. */
export function sessionEnded(id: string, reason?: "node lost"): ApiError {
  return new ApiError(
    410,
    "SESSION_ENDED",
    `Session ${JSON.stringify(id)} has ended${reason === "node lost" ? " (the node that ran it was lost: its lease lapsed)" : ""}. ` +
      "Its replay is still readable; start a new session to continue.",
    reason ? { reason } : undefined,
  );
}

/**
 * 409: the session runs on another node of the service, which holds its lease. This node leaves it
 * alone (no end, no change behind the owner's back).
 */
export function sessionElsewhere(id: string, nodeId?: string): ApiError {
  return new ApiError(
    409,
    "SESSION_ELSEWHERE",
    `Session ${JSON.stringify(id)} runs on another node of this service` +
      `${nodeId ? ` (node ${nodeId}), which holds its lease` : ""}; this node does not act on it. Send its ` +
      "requests to the node that started it (route by session id), or start a new session.",
    nodeId ? { nodeId } : undefined,
  );
}

/**
 * 401: the API key was revoked while a request of it was running: the operation is stopped and
 * answered with this (a stream's final `error` event), and the key is refused from now on.
 */
export function keyRevoked(): ApiError {
  return new ApiError(
    401,
    "KEY_REVOKED",
    "The API key was revoked while this operation ran; the operation was stopped. Use another key of the project.",
  );
}

/** 429: no room for another session right now. */
export function atCapacity(maxSessions: number): ApiError {
  return new ApiError(
    429,
    "AT_CAPACITY",
    `The service is running its maximum of ${maxSessions} sessions. End a session, or retry later.`,
  );
}

/** 429: the caller's project has all the sessions it may have. */
export function projectAtCapacity(maxSessionsPerProject: number): ApiError {
  return new ApiError(
    429,
    "PROJECT_AT_CAPACITY",
    `This API key's project is running its maximum of ${maxSessionsPerProject} sessions (the service's ` +
      "--max-sessions-per-project). End one of them, or retry later.",
  );
}

export function notImplemented(): ApiError {
  return new ApiError(501, "NOT_IMPLEMENTED", "not implemented yet");
}
