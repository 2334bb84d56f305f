// The service's pino logger. Secrets are removed three times over: request headers are never logged
// except a harmless few (the request serialiser below); every plain object logged anywhere
// (bodies, options, parameters) passes through redactSecrets, which blanks API keys, model
// configurations and variable values at any depth; and every line, as written, has the keys of the
// requests in flight (and of those that ended in the last minute) removed wherever they appear
// (LIVE_SECRETS: a key a model provider echoed into an error message, say).

import type { FastifyRequest } from "fastify";
import pino from "pino";
import pretty from "pino-pretty";
import { REDACTED, redactSecrets, redactUrlKey } from "./redact.ts";
import { LIVE_SECRETS } from "./secrets.ts";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

/** JSON lines (for a log collector), or readable lines (for a person at a terminal). */
export type LogFormat = "json" | "pretty";

export interface LoggerOptions {
  level?: LogLevel;
  /** Default json. */
  format?: LogFormat;
  /** Where lines go. Default: stdout. */
  destination?: pino.DestinationStream;
}

/** The format to use when none was asked for: readable on a terminal, JSON anywhere else. */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stdout): LogFormat {
  return stream.isTTY ? "pretty" : "json";
}

/**
 * pino's own pretty printer, fed the lines as the JSON format writes them (so every redaction
 * above has been done): `time LEVEL: message`, an access line as `GET /path 200 12 ms`, the
 * request id and other fields after it on the same line.
 */
function prettyStream(destination: NodeJS.WritableStream | undefined): pino.DestinationStream {
  return pretty({
    destination: destination ?? 1,
    sync: true,
    colorize: process.stdout.isTTY === true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "req,res,responseTime",
    messageFormat: (log, messageKey) => {
      const req = log.req as { method?: string; url?: string } | undefined;
      const res = log.res as { statusCode?: number } | undefined;
      if (req?.method && res)
        return `${req.method} ${req.url} ${res.statusCode ?? "-"} ${Math.round(Number(log.responseTime ?? 0))} ms`;
      return String(log[messageKey] ?? "");
    },
  });
}

// Headers worth having in a request log line; everything else (keys, cookies) stays out.
const LOGGED_HEADERS = ["user-agent", "x-language", "x-sdk-version", "x-stream-response", "content-length"];

function serializeRequest(request: FastifyRequest) {
  const headers: Record<string, unknown> = {};
  for (const name of LOGGED_HEADERS) {
    const value = request.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  // The CDP endpoint accepts the API key as ?apiKey=; it must not reach the log through the URL.
  const url = request.url === undefined ? undefined : redactUrlKey(request.url);
  return { method: request.method, url, remoteAddress: request.ip, headers };
}

/**
 * The response part of an access log line. Fastify logs its reply object, not Node's response:
 * pino's standard serializer reads `headersSent` from it, finds none, and writes `statusCode:
 * null`. The status is the reply's (or, for a hijacked reply, the raw response's).
 */
function serializeResponse(reply: { statusCode?: number; raw?: { statusCode?: number } }) {
  return { statusCode: reply.raw?.statusCode ?? reply.statusCode ?? null };
}

export function createLogger(options: LoggerOptions = {}): pino.Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: null,
      // Defence in depth for code that logs raw header objects under the usual names.
      redact: {
        paths: [
          'req.headers["x-platform-api-key"]',
          'req.headers["x-model-api-key"]',
          'req.headers["x-bb-api-key"]',
          "req.headers.authorization",
          'headers["x-platform-api-key"]',
          'headers["x-model-api-key"]',
          'headers["x-bb-api-key"]',
          "headers.authorization",
        ],
        censor: REDACTED,
      },
      formatters: { log: (object) => redactSecrets(object) },
      hooks: { streamWrite: (line) => LIVE_SECRETS.redact(line) },
      serializers: { req: serializeRequest, res: serializeResponse, err: pino.stdSerializers.err },
    },
    options.format === "pretty"
      ? prettyStream(options.destination as NodeJS.WritableStream | undefined)
      : (options.destination ?? pino.destination({ dest: 1, sync: false })),
  );
}
