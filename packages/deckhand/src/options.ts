// The options of the Deckhand client and of its operations, and the check of the options given to
// `new Deckhand(...)`, which says precisely which one is wrong. Unknown option names are allowed (a
// newer caller may pass options this version ignores).

import { z } from "zod";
import type { AnyPage } from "./browser/third-party.ts";
import type { ActionCacheStore } from "./cache/action-cache.ts";
import { ServiceEnvironmentError } from "./errors.ts";
import type { LLMClient } from "./llm/client.ts";
import { isZod3Schema, isZod4Schema } from "./llm/schema.ts";
import type { Logger, ModelConfiguration, Variables } from "./types.ts";

// ---------- client options ----------

export interface ProxyOptions {
  /** `http://host:port`, `socks5://host:port`, ... */
  server: string;
  /** Comma-separated hosts that bypass the proxy. */
  bypass?: string;
  username?: string;
  password?: string;
}

export interface LocalBrowserLaunchOptions {
  headless?: boolean;
  executablePath?: string;
  /** Remote debugging port; a free one is picked when unset. */
  port?: number;
  args?: string[];
  /** `true` drops every default argument; an array drops exactly those strings. */
  ignoreDefaultArgs?: boolean | string[];
  /** Profile directory, kept across runs. A fresh temporary one (removed on close) when unset. */
  userDataDir?: string;
  viewport?: { width: number; height: number };
  devtools?: boolean;
  proxy?: ProxyOptions;
  ignoreHTTPSErrors?: boolean;
  /** Attach to a running browser instead of launching one. */
  cdpUrl?: string;
  /** Milliseconds to wait for the browser to start. Default 30000. */
  connectTimeoutMs?: number;
}

export interface SessionCreateParams {
  keepAlive?: boolean;
  /** Idle timeout of the remote session, in seconds. */
  timeout?: number;
  userMetadata?: Record<string, unknown>;
  browserSettings?: { viewport?: { width: number; height: number }; [key: string]: unknown };
  [key: string]: unknown;
}

export interface DeckhandOptions {
  /** `"BROWSERBASE"` is accepted as the reference library's name for `"REMOTE"`. */
  env: "LOCAL" | "REMOTE" | "BROWSERBASE";
  /** Platform API key (REMOTE); also read from PLATFORM_API_KEY. */
  apiKey?: string;
  /** Address of the Deckhand service (REMOTE); also read from PLATFORM_API_URL. */
  apiUrl?: string;
  /** Resume this remote session instead of starting one. */
  sessionId?: string;
  /** Alias of `sessionId`. */
  browserbaseSessionID?: string;
  sessionCreateParams?: SessionCreateParams;
  /** Alias of `sessionCreateParams`. */
  browserbaseSessionCreateParams?: SessionCreateParams;
  localBrowserLaunchOptions?: LocalBrowserLaunchOptions;
  model?: ModelConfiguration;
  llmClient?: LLMClient;
  systemPrompt?: string;
  selfHeal?: boolean;
  /**
   * Carry out explicit instructions ("click the Sign in button", "type %email% into the Email
   * field") without a model when exactly one visible element fits. Default true; false sends every
   * act instruction to the model.
   */
  explicitInstructions?: boolean;
  experimental?: boolean;
  /** Milliseconds to wait for the DOM to settle before an operation. Default 30000. */
  domSettleTimeout?: number;
  /** Directory of the action cache: a successful act is replayed without the model next time. */
  cacheDir?: string;
  /**
   * Where the action cache keeps its entries, instead of files in `cacheDir`: any object with
   * `get(key)` and `put(key, entry)` (a Redis hash, a database table). LOCAL only.
   */
  actionCache?: ActionCacheStore;
  /**
   * LOCAL only: a directory where the run's report is written, one self-contained HTML file (every
   * operation with its result, tokens and screenshots) at close() and on writeReport(). REMOTE
   * sessions have theirs at `sessionUrl`.
   */
  report?: string;
  keepAlive?: boolean;
  serverCache?: boolean;
  verbose?: 0 | 1 | 2;
  logInferenceToFile?: boolean;
  disablePino?: boolean;
  /**
   * How the default logger (no `logger`, pino not disabled) writes to stderr: `"pretty"` readable
   * lines, `"json"` JSON lines, `"auto"` (default) readable on a terminal and JSON otherwise. The
   * environment variable DECKHAND_LOG_FORMAT sets it when the option is not given.
   */
  logFormat?: "auto" | "pretty" | "json";
  logger?: Logger;
}

// ---------- operation options ----------

export interface OperationOptions {
  model?: ModelConfiguration;
  /** Milliseconds. */
  timeout?: number;
  /**
   * Cancels the operation in flight: it rejects with the signal's reason (a Deckhand error) or
   * ServiceCancelledError, and its model call is aborted.
   */
  signal?: AbortSignal;
  page?: AnyPage;
  /** REMOTE only: use the service's cache for this call. Defaults to the instance setting. */
  serverCache?: boolean;
}

export interface ActOptions extends OperationOptions {
  variables?: Variables;
}

export interface ExtractOptions extends OperationOptions {
  selector?: string;
  ignoreSelectors?: string[];
  /** Send a PNG of the viewport with the outline (needs a model with vision). */
  screenshot?: boolean;
}

export interface ObserveOptions extends OperationOptions {
  variables?: Variables;
  selector?: string;
  ignoreSelectors?: string[];
}

// ---------- checking the client options ----------

const port = z.number().int().min(0).max(65535);
const size = z.object({ width: z.number().int().positive(), height: z.number().int().positive() });
const stringList = z.array(z.string());

const modelConfiguration = z.union([
  z.string().min(1),
  z.looseObject({
    modelName: z.string().min(1),
    apiKey: z.string().optional(),
    baseURL: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);

const launchOptions = z.looseObject({
  headless: z.boolean().optional(),
  executablePath: z.string().min(1).optional(),
  port: port.optional(),
  args: stringList.optional(),
  ignoreDefaultArgs: z.union([z.boolean(), stringList]).optional(),
  userDataDir: z.string().min(1).optional(),
  viewport: size.optional(),
  devtools: z.boolean().optional(),
  proxy: z
    .looseObject({
      server: z.string().min(1),
      bypass: z.string().optional(),
      username: z.string().optional(),
      password: z.string().optional(),
    })
    .optional(),
  ignoreHTTPSErrors: z.boolean().optional(),
  cdpUrl: z
    .string()
    .regex(/^(wss?|https?):\/\//, "must start with ws://, wss://, http:// or https://")
    .optional(),
  connectTimeoutMs: z.number().positive().optional(),
});

const sessionCreateParams = z.looseObject({
  keepAlive: z.boolean().optional(),
  timeout: z.number().positive().optional(),
  userMetadata: z.record(z.string(), z.unknown()).optional(),
});

const deckhandOptions = z.looseObject({
  env: z.enum(["LOCAL", "REMOTE", "BROWSERBASE"], {
    error: 'must be "LOCAL" or "REMOTE" ("BROWSERBASE" is taken as REMOTE)',
  }),
  apiKey: z.string().min(1).optional(),
  apiUrl: z.url().optional(),
  sessionId: z.string().min(1).optional(),
  browserbaseSessionID: z.string().min(1).optional(),
  sessionCreateParams: sessionCreateParams.optional(),
  browserbaseSessionCreateParams: sessionCreateParams.optional(),
  localBrowserLaunchOptions: launchOptions.optional(),
  model: modelConfiguration.optional(),
  llmClient: z
    .custom<object>(
      (v) =>
        typeof v === "object" && v !== null && typeof (v as { generate?: unknown }).generate === "function",
      "must be an object with a generate(request) method (see LLMClient)",
    )
    .optional(),
  systemPrompt: z.string().optional(),
  selfHeal: z.boolean().optional(),
  explicitInstructions: z.boolean().optional(),
  experimental: z.boolean().optional(),
  domSettleTimeout: z.number().min(0).optional(),
  cacheDir: z.string().min(1).optional(),
  report: z.string().min(1, { error: "must be a directory path" }).optional(),
  actionCache: z
    .custom<object>(
      (v) =>
        typeof v === "object" &&
        v !== null &&
        typeof (v as { get?: unknown }).get === "function" &&
        typeof (v as { put?: unknown }).put === "function",
      "must be an object with get(key) and put(key, entry) methods (see ActionCacheStore)",
    )
    .optional(),
  keepAlive: z.boolean().optional(),
  serverCache: z.boolean().optional(),
  verbose: z.union([z.literal(0), z.literal(1), z.literal(2)], { error: "must be 0, 1 or 2" }).optional(),
  logInferenceToFile: z.boolean().optional(),
  disablePino: z.boolean().optional(),
  logFormat: z.enum(["auto", "pretty", "json"]).optional(),
  logger: z.custom<(line: unknown) => void>((v) => typeof v === "function", "must be a function").optional(),
});

/** Validated options with the aliases folded into their neutral names. */
export type ResolvedOptions = Omit<DeckhandOptions, "env"> & {
  env: "LOCAL" | "REMOTE";
  selfHeal: boolean;
  explicitInstructions: boolean;
  domSettleTimeout: number;
  verbose: 0 | 1 | 2;
  keepAlive: boolean;
  serverCache: boolean;
};

export function resolveOptions(input: unknown): ResolvedOptions {
  if (typeof input !== "object" || input === null) {
    throw new ServiceEnvironmentError("options", 'pass an object such as { env: "LOCAL" }.');
  }
  const parsed = deckhandOptions.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "options";
    const got = valueAt(input, issue.path);
    // Never echo what might be a credential.
    const secret = /key|password|secret|token/i.test(String(issue.path[issue.path.length - 1] ?? ""));
    throw new ServiceEnvironmentError(
      path,
      `${issue.message} (got ${secret ? `a ${typeof got}` : describe(got)}).`,
    );
  }
  const options = input as DeckhandOptions;
  if (options.cacheDir && options.actionCache) {
    throw new ServiceEnvironmentError(
      "actionCache",
      "cannot be given together with cacheDir: both say where the action cache lives. Keep one of them.",
    );
  }
  if (options.report !== undefined && options.env === "REMOTE") {
    throw new ServiceEnvironmentError(
      "report",
      "is for LOCAL runs: a REMOTE session's report is the page at its sessionUrl (deckhand.sessionUrl).",
    );
  }
  const createParams = options.sessionCreateParams ?? options.browserbaseSessionCreateParams;
  return {
    ...options,
    // The reference library's name for the remote environment; Deckhand's REMOTE is its service.
    env: options.env === "BROWSERBASE" ? "REMOTE" : options.env,
    sessionId: options.sessionId ?? options.browserbaseSessionID,
    sessionCreateParams: createParams,
    selfHeal: options.selfHeal ?? true,
    explicitInstructions: options.explicitInstructions ?? true,
    domSettleTimeout: options.domSettleTimeout ?? 30_000,
    verbose: options.verbose ?? 1,
    keepAlive: options.keepAlive ?? createParams?.keepAlive ?? false,
    serverCache: options.serverCache ?? true,
  };
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
  return value;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

/**
 * Whether extract()'s second argument is a schema (zod 3 or 4, or JSON Schema) rather than its
 * options: the facade reads its overloads with it.
 */
export function isSchemaArgument(value: unknown): boolean {
  if (!value || typeof value !== "object") return false;
  if (isZod4Schema(value) || isZod3Schema(value)) return true;
  return ["type", "properties", "items", "$schema", "anyOf", "oneOf", "allOf", "$ref", "enum"].some(
    (k) => k in value,
  );
}
