// Errors the service answers with on purpose: each carries its HTTP status and a stable code, and
// its message is safe to send to the client. Anything else that escapes a route is an internal
// error and the client only learns that it happened (see error-handler.ts).

export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;

  constructor(statusCode: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.statusCode = statusCode;
    this.code = code;
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
export function sessionEnded(id: string): ApiError {
  return new ApiError(
    410,
    "SESSION_ENDED",
    `Session ${JSON.stringify(id)} has ended. Its replay is still readable; start a new session to continue.`,
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
