// HTTP client of the Deckhand service: JSON requests and Server-Sent Event streams, and the
// mapping of the service's error bodies back onto Deckhand's error classes.

import * as errors from "../errors.ts";
import {
  BrowserbaseSessionNotFoundError,
  ServiceApiError,
  ServiceBrowserClosedError,
  ServiceCancelledError,
  type ServiceError,
} from "../errors.ts";
import type { DeckhandLog } from "../log.ts";

export interface ServiceClientOptions {
  baseUrl: string;
  apiKey: string;
  log: DeckhandLog;
  /** Sent as x-sdk-version. */
  sdkVersion: string;
}

export interface RequestOptions {
  /** Ask for Server-Sent Events and relay their log lines. */
  stream?: boolean;
  signal?: AbortSignal;
  /** The caller's model provider key, for this request only (x-model-api-key). */
  modelApiKey?: string;
  /** x-platform-cache-bypass: true. */
  bypassCache?: boolean;
  /** Called for each log event of a stream. */
  onLog?: (message: string) => void;
  /** The session the request is about, when its path does not name it (a resuming start). */
  sessionId?: string;
}

/** Plain fields of the error besides its message (e.g. `path`, `selector`), when it has some. */
type ErrorDetails = Record<string, string | number | boolean>;

interface ErrorBody {
  success: false;
  error: string;
  code: string;
  details?: ErrorDetails;
}

type ErrorClass = new (...args: string[]) => ServiceError;

/** The error classes a service error body may stand for, by their `code` (read off an instance). */
const BY_CODE = new Map<string, ErrorClass>();
for (const value of Object.values(errors)) {
  if (typeof value !== "function" || value === ServiceApiError) continue;
  const cls = value as unknown as ErrorClass;
  if (!(cls.prototype instanceof errors.ServiceError) && cls !== (errors.ServiceError as unknown)) continue;
  try {
    BY_CODE.set(new cls("", "").code, cls);
  } catch {
    // not constructible from strings: not one a response can stand for
  }
}

/** Own fields every error has; details never overwrite them. */
const RESERVED = new Set(["message", "name", "code", "stack", "cause"]);

/**
 * An error of the class `code` names, carrying the service's message and the error's own fields
 * (`details`: a ZodSchemaValidationError's path, a ServiceElementNotFoundError's selector, ...).
 * Constructors differ, so none is called.
 */
function rehydrate(
  code: string,
  message: string,
  details: ErrorDetails | undefined,
): ServiceError | undefined {
  const cls = BY_CODE.get(code);
  if (!cls) return undefined;
  const error = Object.create(cls.prototype) as ServiceError;
  for (const [key, value] of Object.entries(details ?? {})) {
    if (RESERVED.has(key)) continue;
    Object.defineProperty(error, key, { value, enumerable: true, writable: true, configurable: true });
  }
  Object.defineProperty(error, "message", { value: message, writable: true, configurable: true });
  Object.defineProperty(error, "name", { value: cls.name, writable: true, configurable: true });
  Object.defineProperty(error, "code", { value: code, writable: false, configurable: true });
  Error.captureStackTrace?.(error, rehydrate);
  return error;
}

export class ServiceClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly log: DeckhandLog;
  private readonly sdkVersion: string;

  constructor(options: ServiceClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.log = options.log;
    this.sdkVersion = options.sdkVersion;
  }

  /** The WebSocket URL of a path (http -> ws), and the headers its handshake needs. */
  websocket(path: string): { url: string; headers: Record<string, string> } {
    const url = new URL(`${this.baseUrl}/v1${path}`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return { url: url.toString(), headers: { "x-platform-api-key": this.apiKey } };
  }

  async request<T>(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<T> {
    const headers: Record<string, string> = {
      "x-platform-api-key": this.apiKey,
      "x-language": "typescript",
      "x-sdk-version": this.sdkVersion,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.modelApiKey) headers["x-model-api-key"] = options.modelApiKey;
    if (options.bypassCache) headers["x-platform-cache-bypass"] = "true";
    if (options.stream) {
      headers["x-stream-response"] = "true";
      headers.accept = "text/event-stream";
    }
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted)
        throw options.signal.reason ?? new ServiceCancelledError(`${method} ${path} was cancelled.`);
      const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
      throw new ServiceBrowserClosedError(
        `The Deckhand service at ${this.baseUrl} could not be reached (${(error as Error).message}` +
          `${typeof code === "string" ? `: ${code}` : ""}). Is it running? ` +
          "Set apiUrl or PLATFORM_API_URL to its address.",
      );
    }
    const type = response.headers.get("content-type") ?? "";
    if (response.ok && type.includes("text/event-stream")) return this.readStream<T>(response, path, options);
    const text = await response.text();
    // A text answer (an exported script) is the answer itself.
    if (response.ok && type.startsWith("text/plain")) return text as T;
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok)
      throw this.errorFrom(response.status, parsed as ErrorBody | undefined, path, options.sessionId);
    const envelope = parsed as { success?: boolean; data?: T } | undefined;
    return (envelope && "data" in envelope ? envelope.data : parsed) as T;
  }

  private async readStream<T>(response: Response, path: string, options: RequestOptions): Promise<T> {
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const data = block
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (!data) continue;
          const event = JSON.parse(data) as {
            type: "system" | "log";
            data: {
              status: string;
              /** A log line object; a plain string from services before it. */
              message?: string | { category?: string; message?: string };
              result?: unknown;
              actionId?: string;
              cacheStatus?: string;
              error?: string;
              code?: string;
              details?: ErrorDetails;
            };
          };
          if (event.type === "log" && event.data.message) {
            const line = event.data.message;
            const text =
              typeof line === "string" ? line : `${line.category ?? "service"}: ${line.message ?? ""}`;
            if (options.onLog) options.onLog(text);
            else this.log.debug("remote", text);
          } else if (event.type === "system" && event.data.status === "finished") {
            const { result, actionId, cacheStatus } = event.data;
            return {
              result,
              ...(actionId !== undefined ? { actionId } : {}),
              ...(cacheStatus !== undefined ? { cacheStatus } : {}),
            } as T;
          } else if (event.type === "system" && event.data.status === "error") {
            throw this.errorFrom(
              500,
              {
                success: false,
                error: event.data.error ?? "unknown error",
                code: event.data.code ?? "",
                ...(event.data.details ? { details: event.data.details } : {}),
              },
              path,
            );
          }
        }
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw error;
    } finally {
      reader.cancel().catch(() => undefined);
    }
    throw new ServiceApiError(
      502,
      "STREAM_ENDED",
      `The service's stream for ${path} ended without a result.`,
    );
  }

  private errorFrom(
    status: number,
    body: ErrorBody | undefined,
    path: string,
    sessionId = /\/sessions\/([^/]+)\//.exec(path)?.[1],
  ): ServiceError {
    const message = body?.error ?? `The service answered ${status} for ${path}.`;
    const code = body?.code ?? "";
    // Unknown, another key's, or ended: for the client, a session it cannot use.
    if (code === "SESSION_NOT_FOUND" || code === "SESSION_ENDED")
      return new BrowserbaseSessionNotFoundError(decodeURIComponent(sessionId ?? ""));
    return (
      (code ? rehydrate(code, message, body?.details) : undefined) ??
      new ServiceApiError(status, code || `HTTP_${status}`, message)
    );
  }
}
