// The secret values of a request, wherever they turn up in free text. A model provider that
// echoes the key it was sent (in an error message, a cause, a stack) would otherwise carry it into
// the service's log, the error body and the replay; so would a page that shows a variable's value.
//
// The values: the API key (header or query), `x-model-api-key`, every value of a model
// configuration that is not its name, provider or address (apiKey, header values, provider
// options), variable values, and passwords. They are removed from:
//
// - error bodies and a stream's error event (error-handler.ts, sse.ts), with the request's own set;
// - replay records and an operation's log events (operations/recorded-operation.ts), the same;
// - the request's own log lines of failure (error-handler.ts), with the request's set;
// - every log line the process writes (logger.ts), with the keys (not the variable values) of all
//   requests in flight and of those that ended in the last minute (LIVE_SECRETS), so that a line
//   written later, by another part of the service, is covered too.
//
// The rule for matching, so that nothing leaks and nothing is garbled: a value of 8 characters or
// more is removed wherever it appears; one of 3 to 7 (a PIN, a short name) only where it stands as
// a word of its own (not inside a longer word or number); one or two characters are not looked for
// in text at all (they stay blanked where they stand: a variable's value, a key field). Removing "u"
// or "0" from every text would garble all of them (every "127.0.0.1") and, by what is missing, give
// the value away.

import { MIN_SUBSTRING_SECRET, MIN_TEXT_SECRET } from "deckhand";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "./errors.ts";
import { REDACTED } from "./redact.ts";

// The rule's lengths are the library's (one rule for LOCAL and REMOTE): values at least
// MIN_SUBSTRING_SECRET long are removed wherever they appear, shorter ones only as whole words,
// and those shorter than MIN_TEXT_SECRET are not looked for in text.
export { MIN_SUBSTRING_SECRET, MIN_TEXT_SECRET } from "deckhand";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The forms a value takes in text: as it is, and inside a JSON string (a log line). */
function formsOf(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  return json === value ? [value] : [value, json];
}

function patternOf(values: Iterable<string>): RegExp | undefined {
  const long: string[] = [];
  const short: string[] = [];
  for (const value of values) {
    for (const form of formsOf(value)) (form.length >= MIN_SUBSTRING_SECRET ? long : short).push(form);
  }
  // Longest first, so that a value containing another is removed whole.
  const byLength = (a: string, b: string) => b.length - a.length;
  const alternatives = [
    ...long.sort(byLength).map(escapeRegExp),
    ...short.sort(byLength).map((s) => `(?<![\\p{L}\\p{N}_])${escapeRegExp(s)}(?![\\p{L}\\p{N}_])`),
  ];
  return alternatives.length > 0 ? new RegExp(alternatives.join("|"), "gu") : undefined;
}

/** A set of secret values and the removal of them from text. */
export class SecretSet {
  private readonly values = new Set<string>();
  private pattern: RegExp | undefined;
  private stale = false;

  /** Adds a value (strings, numbers and booleans; empty and blank ones are ignored). */
  add(value: unknown): void {
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") return;
    const text = String(value);
    if (text.trim().length < MIN_TEXT_SECRET || text === REDACTED || this.values.has(text)) return;
    this.values.add(text);
    this.stale = true;
  }

  get size(): number {
    return this.values.size;
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.values.values();
  }

  redact(text: string): string {
    if (this.stale) {
      this.pattern = patternOf(this.values);
      this.stale = false;
    }
    return this.pattern ? text.replace(this.pattern, REDACTED) : text;
  }

  /** A copy of `value` with the secrets removed from every string in it (plain objects and arrays). */
  redactValue<T>(value: T): T {
    if (this.values.size === 0) return value;
    const walk = (v: unknown, depth: number): unknown => {
      if (typeof v === "string") return this.redact(v);
      if (v === null || typeof v !== "object" || depth > 64) return v;
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(v)) out[this.redact(key)] = walk(child, depth + 1);
      return out;
    };
    return walk(value, 0) as T;
  }
}

/** How long a request's values stay in LIVE_SECRETS after it ended: lines written late are covered. */
const LINGER_MS = 60_000;
/** Most values LIVE_SECRETS keeps; past it, those released longest ago go first. */
const LIVE_MAX = 2000;
/** Most secret values one request may carry (variables, model options, keys). */
export const MAX_REQUEST_SECRETS = 200;

/**
 * The values of every request in flight, and of every one that ended in the last minute: the
 * log's last line of defence (logger.ts runs every line through `redact`).
 */
export class LiveSecrets {
  /** value -> requests holding it, and when the last one let go. */
  private readonly held = new Map<string, { holders: number; releasedAt: number }>();
  private pattern: RegExp | undefined;
  private stale = false;
  private readonly lingerMs: number;

  constructor(lingerMs = LINGER_MS) {
    this.lingerMs = lingerMs;
  }

  /** Holds `values` until the returned function is called (and for the linger after it). */
  hold(values: Iterable<string>): () => void {
    const taken = [...values];
    if (taken.length === 0) return () => {};
    for (const value of taken) {
      const entry = this.held.get(value);
      if (entry) entry.holders++;
      else {
        this.held.set(value, { holders: 1, releasedAt: 0 });
        this.stale = true;
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = Date.now();
      for (const value of taken) {
        const entry = this.held.get(value);
        if (!entry) continue;
        entry.holders--;
        entry.releasedAt = now;
      }
    };
  }

  redact(text: string): string {
    this.sweep();
    if (this.stale) {
      this.pattern = patternOf(this.held.keys());
      this.stale = false;
    }
    return this.pattern ? text.replace(this.pattern, REDACTED) : text;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.lingerMs;
    const released: [string, number][] = [];
    for (const [value, entry] of this.held) {
      if (entry.holders > 0) continue;
      if (entry.releasedAt < cutoff) {
        this.held.delete(value);
        this.stale = true;
      } else released.push([value, entry.releasedAt]);
    }
    if (this.held.size <= LIVE_MAX) return;
    // Over the cap (a flood of new keys): the ones released longest ago go first. Those of requests
    // still running always stay.
    released.sort((a, b) => a[1] - b[1]);
    for (const [value] of released) {
      if (this.held.size <= LIVE_MAX) break;
      this.held.delete(value);
      this.stale = true;
    }
  }
}

/** The process's LiveSecrets (one for every service and logger in it). */
export const LIVE_SECRETS = new LiveSecrets();

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const MODEL_FIELD = /^(model|executionModel)$/;
const MODEL_NOT_SECRET = new Set(["modelName", "provider", "baseURL"]);
const PASSWORD_FIELD = /^(password|passphrase|secret|client[-_]?secret|api[-_]?key)$/i;
const KEY_HEADERS = [
  "x-platform-api-key",
  "x-bb-api-key",
  "x-model-api-key",
  "authorization",
  "proxy-authorization",
];

/** Every string inside `value` (numbers and booleans are settings, never keys). */
function leaves(value: unknown, into: SecretSet, depth = 0): void {
  if (depth > 32) return;
  if (Array.isArray(value)) for (const item of value) leaves(item, into, depth + 1);
  else if (isObject(value)) for (const child of Object.values(value)) leaves(child, into, depth + 1);
  else if (typeof value === "string") into.add(value);
}

/**
 * The secret values a request body carries: `keys` gets those of model configurations and
 * passwords, `variables` the values of variables.
 */
function bodySecrets(body: unknown, keys: SecretSet, variables: SecretSet, depth = 0): void {
  if (depth > 32 || body === null || typeof body !== "object") return;
  if (Array.isArray(body)) {
    for (const item of body) bodySecrets(item, keys, variables, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(body)) {
    if (MODEL_FIELD.test(key) && isObject(value)) {
      for (const [field, v] of Object.entries(value)) if (!MODEL_NOT_SECRET.has(field)) leaves(v, keys);
    } else if (key === "variables" && isObject(value)) {
      for (const v of Object.values(value)) variables.add(isObject(v) ? v.value : v);
    } else if (PASSWORD_FIELD.test(key)) {
      leaves(value, keys);
    } else {
      bodySecrets(value, keys, variables, depth + 1);
    }
  }
}

declare module "fastify" {
  interface FastifyRequest {
    /** The secret values of this request (set on every request by installSecrets). */
    secrets: SecretSet;
  }
}

/**
 * Collects each request's secret values (the key headers first, the body's once it is parsed),
 * lends its keys to LIVE_SECRETS while the request runs, and takes them back when its response is
 * done (a stream: when its connection closes). A body with more than MAX_REQUEST_SECRETS values is
 * refused: each one costs every line of text it is removed from.
 */
export function installSecrets(app: FastifyInstance): void {
  app.decorateRequest("secrets", null as unknown as SecretSet);
  const lend = (reply: FastifyReply, values: SecretSet) => {
    if (values.size === 0) return;
    const release = LIVE_SECRETS.hold(values);
    reply.raw.once("close", release);
  };
  app.addHook("onRequest", async (request, reply) => {
    const secrets = new SecretSet();
    for (const header of KEY_HEADERS) {
      const value = request.headers[header];
      for (const v of Array.isArray(value) ? value : [value]) secrets.add(v);
    }
    // The API key may come in the query (the CDP endpoint), under any spelling of its name.
    const query = request.query;
    if (isObject(query)) {
      for (const [name, v] of Object.entries(query)) if (/^api[-_]?key$/i.test(name)) leaves(v, secrets);
    }
    request.secrets = secrets;
    lend(reply, secrets);
  });
  app.addHook("preHandler", async (request, reply) => {
    const keys = new SecretSet();
    const variables = new SecretSet();
    bodySecrets(request.body, keys, variables);
    if (keys.size + variables.size > MAX_REQUEST_SECRETS) {
      throw new ApiError(
        400,
        "TOO_MANY_SECRETS",
        `Invalid request: the body carries more than ${MAX_REQUEST_SECRETS} secret values (variable values, ` +
          "model options and keys together). Send fewer variables, or split the work into several calls.",
      );
    }
    for (const value of keys) request.secrets.add(value);
    for (const value of variables) request.secrets.add(value);
    lend(reply, keys);
  });
}

/** The request's secrets, also for code that may run before installSecrets' hook (framework errors). */
export function secretsOf(request: FastifyRequest): SecretSet {
  return request.secrets ?? new SecretSet();
}
