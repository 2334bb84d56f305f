// Every error leaves the service as `{ success: false, error, message, code }` (message: the same text,
// under the reference service's name) with a fitting status. What
// the client reads is decided here, in one place: messages written for callers (ApiError, request
// validation, Deckhand's own errors) go out as they are; anything else is an internal error whose
// details (message, stack, cause) go only to the log, under the request id the client is given.

import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { MissingLLMConfigurationError, ServiceError, withModelAdvice } from "deckhand";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from "fastify-type-provider-zod";
import pino from "pino";
import { clientWasLogged, markClientLogged } from "./connections.ts";
import { ApiError } from "./errors.ts";
import { redactSecrets, redactUrlKey } from "./redact.ts";
import type { ErrorBody, ErrorDetails } from "./schemas/common.ts";
import { type SecretSet, secretsOf } from "./secrets.ts";

export interface PublicError {
  statusCode: number;
  body: ErrorBody;
  /** True when the client got a generic message and the real cause must be logged. */
  internal: boolean;
}

// Deckhand error codes whose cause is the caller's input or the caller's cancellation.
const SERVICE_ERROR_STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  INVALID_OPTIONS: 400,
  INVALID_MODEL_FORMAT: 400,
  MISSING_LLM_CONFIGURATION: 400,
  UNSUPPORTED_MODEL: 400,
  SCHEMA_VALIDATION: 422,
  // The page does not have what the operation was asked to act on.
  ELEMENT_NOT_FOUND: 422,
  XPATH_RESOLUTION: 422,
  CONTENT_FRAME_NOT_FOUND: 422,
  SHADOW_ROOT_MISSING: 422,
  IFRAME: 422,
  CLICK: 422,
  // Someone else failed: the web site, or the model provider's answer.
  NAVIGATION: 502,
  LLM_RESPONSE: 502,
  SESSION_NOT_FOUND: 404,
  TIMEOUT: 504,
  CANCELLED: 499,
};

const FASTIFY_ERRORS: Record<
  string,
  { statusCode: number; code: string; message?: (limit: number) => string }
> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    statusCode: 413,
    code: "BODY_TOO_LARGE",
    message: (limit) => `The request body is larger than this service accepts (${limit} bytes).`,
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    statusCode: 415,
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: () => "Send the request body as JSON, with the header content-type: application/json.",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    statusCode: 400,
    code: "INVALID_JSON",
    message: () => "The request body is not valid JSON.",
  },
  // The path itself is never repeated: it may carry a key in its query.
  FST_ERR_BAD_URL: {
    statusCode: 400,
    code: "INVALID_URL",
    message: () =>
      "The request path is not valid percent-encoding (a % must be followed by two hex digits that form " +
      "UTF-8). Encode the path with encodeURIComponent.",
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    statusCode: 414,
    code: "URI_TOO_LONG",
    message: () =>
      "A path parameter is longer than this service accepts (100 characters); a session id is a UUID of 36.",
  },
};

/** `/options/timeout` -> `options.timeout`, `/actions/0/selector` -> `actions[0].selector`. */
function fieldName(instancePath: string): string {
  return instancePath
    .split("/")
    .filter((part) => part !== "")
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), "");
}

function validationMessage(error: FastifyError): string {
  const context = error.validationContext ?? "request";
  const where =
    context === "headers" ? "header" : context === "params" ? "path parameter" : `${context} field`;
  const problems = (error.validation ?? []).slice(0, 5).map((issue) => {
    const field = fieldName(issue.instancePath);
    return field ? `${where} \`${field}\`: ${issue.message}` : `${context}: ${issue.message}`;
  });
  return `Invalid request: ${problems.join("; ") || error.message}`;
}

/**
 * The plain fields a Deckhand error carries besides its message (ZodSchemaValidationError's `path`,
 * ServiceElementNotFoundError's `selector`, ...), so that a REMOTE client can rebuild it whole.
 * Objects (issues, causes) stay in the service.
 */
function detailsOf(error: ServiceError): ErrorDetails | undefined {
  const details: ErrorDetails = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === "code" || key === "name") continue;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      details[key] = value;
  }
  return Object.keys(details).length > 0 ? details : undefined;
}

/**
 * The answer for `error`, with the request's secret values (`secrets`) removed from its message
 * and details: a provider that echoes the key it was sent must not hand it back, nor to the log.
 */
export function toPublicError(
  error: unknown,
  requestId: string,
  bodyLimit = 0,
  secrets?: SecretSet,
): PublicError {
  const answer = describeError(error, requestId, bodyLimit);
  if (!secrets || secrets.size === 0) return answer;
  return { ...answer, body: secrets.redactValue(answer.body) };
}

/** The error as logged: pino's serialisation, with the request's secret values removed. */
export function errorForLog(error: unknown, secrets: SecretSet): unknown {
  return secrets.redactValue(error instanceof Error ? pino.stdSerializers.err(error) : error);
}

/** How a client of the service gives what a model call was missing. */
export function serviceModelAdvice(error: MissingLLMConfigurationError): string {
  if (error.missing === "baseURL")
    return "Set `baseURL` in the request's model object (`options.model`, or `modelName` and its fields at start).";
  return (
    "Send the provider's key in the `x-model-api-key` header, or as `apiKey` in the request's model object " +
    '(`options.model`: { "modelName": "provider/model", "apiKey": "..." }).'
  );
}

function describeError(error: unknown, requestId: string, bodyLimit: number): PublicError {
  const reply = (
    statusCode: number,
    code: string,
    message: string,
    internal = false,
    details?: ErrorDetails,
  ): PublicError => ({
    statusCode,
    body: { success: false, error: message, message, code, ...(details ? { details } : {}) },
    internal,
  });

  if (error instanceof ApiError)
    return reply(error.statusCode, error.code, error.message, false, error.details);
  if (error instanceof MissingLLMConfigurationError) {
    // The library's advice names its options and the environment; a client of the service gives
    // a model with each request. `howToFix` is then the service's advice, which the message ends
    // with, so that a client (the CLI, an MCP server) can put its own in its place.
    const advice = serviceModelAdvice(error);
    return reply(
      400,
      error.code,
      withModelAdvice(error, () => advice),
      false,
      {
        ...detailsOf(error),
        howToFix: advice,
      },
    );
  }
  if (error instanceof ServiceError) {
    const status = SERVICE_ERROR_STATUS[error.code] ?? 500;
    // Deckhand's messages are written for callers (what failed, what to do); the cause stays in the log.
    return reply(status, error.code, error.message, status >= 500, detailsOf(error));
  }
  const fastifyError = error as Partial<FastifyError> | null;
  if (
    hasZodFastifySchemaValidationErrors(error) ||
    (fastifyError?.validation && fastifyError.validationContext)
  ) {
    return reply(400, "INVALID_REQUEST", validationMessage(error as FastifyError));
  }
  if (error && typeof error === "object" && !isResponseSerializationError(error)) {
    const known = fastifyError?.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
    if (known)
      return reply(known.statusCode, known.code, known.message?.(bodyLimit) ?? String(fastifyError?.message));
    const status = fastifyError?.statusCode;
    // Fastify's own 4xx errors (empty body, bad content length, ...) describe the request, not us.
    if (
      typeof status === "number" &&
      status >= 400 &&
      status < 500 &&
      fastifyError?.code?.startsWith("FST_")
    ) {
      return reply(status, "INVALID_REQUEST", String(fastifyError.message));
    }
  }
  return reply(
    500,
    "INTERNAL",
    `Internal server error. The details are in the service's log under request id ${requestId}.`,
    true,
  );
}

/**
 * The request's body stopped arriving because its connection closed (the client hung up, or it was
 * cut for being too slow): Node's "aborted" error, a body stream destroyed under the parser.
 */
function clientWentAway(request: FastifyRequest, error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  if (request.raw.complete) return false;
  return (
    code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || request.raw.socket?.destroyed === true
  );
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  bodyLimit: number,
): FastifyReply {
  const secrets = secretsOf(request);
  if (clientWentAway(request, error)) {
    // Nobody is left to answer; a client cut for its slowness was logged once already.
    const socket = request.raw.socket as Socket | undefined;
    if (!clientWasLogged(socket)) {
      if (socket) markClientLogged(socket);
      request.log.debug(
        { remotePort: socket?.remotePort, code: (error as { code?: string } | null)?.code },
        "the client closed the connection before its request arrived whole",
      );
    }
    return reply;
  }
  const answer = toPublicError(error, request.id, bodyLimit, secrets);
  if (answer.internal) {
    request.log.error(
      {
        err: errorForLog(error, secrets),
        body: redactSecrets(request.body),
        url: redactUrlKey(request.url),
        method: request.method,
      },
      "request failed",
    );
  } else {
    request.log.info({ statusCode: answer.statusCode, code: answer.body.code }, answer.body.error);
  }
  return reply.status(answer.statusCode).send(answer.body);
}

/** Fastify's `frameworkErrors`: errors of routing, before any hook or route runs. */
export function handleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  bodyLimit: number,
): void {
  void sendError(request, reply, error, bodyLimit);
}

// Node's HTTP parser codes for the requests it cannot read at all, in words a caller can act on.
const CLIENT_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: "HEADERS_TOO_LARGE",
    message: "The request line and headers are larger than this service accepts (16 KiB). Send less.",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: "REQUEST_TIMEOUT",
    message: "The request did not arrive in time. Send the whole request at once.",
  },
};

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused (not HTTP/1.1, a bad header,
 * a bad Content-Length, headers too large, too slow). No route is involved, so the answer is written
 * to the socket directly, in the service's error shape, and the connection is closed.
 */
export function handleClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  const status = known?.status ?? 400;
  const message =
    known?.message ??
    `The request is not valid HTTP/1.1 (${error.code ?? "unreadable"}): check the request line, the headers ` +
      "and Content-Length.";
  const body = JSON.stringify({
    success: false,
    error: message,
    message,
    code: known?.code ?? "BAD_HTTP_REQUEST",
  } satisfies ErrorBody);
  const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
  // A request whose headers had arrived was waiting for its body.
  const receiving = (socket as Socket & { parser?: { incoming?: { complete?: boolean } | null } }).parser
    ?.incoming;
  const phase = receiving && !receiving.complete ? "body" : "headers";
  if (timedOut) this.deckhand?.metrics.slowClientClosed(phase);
  markClientLogged(socket);
  this.log.debug(
    {
      code: error.code,
      remoteAddress: socket.remoteAddress,
      remotePort: socket.remotePort,
      ...(timedOut ? { phase } : {}),
    },
    timedOut
      ? `slow client closed: its request ${phase} did not arrive in time`
      : "unreadable HTTP request refused",
  );
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error, bodyLimit));
  app.setNotFoundHandler((request, reply) => {
    const message = `No route ${request.method} ${request.url.split("?")[0]}. See GET /v1/openapi.json for the API.`;
    return reply
      .status(404)
      .send({ success: false, error: message, message, code: "NOT_FOUND" } satisfies ErrorBody);
  });
}
