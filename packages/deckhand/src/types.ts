// Public types of the Deckhand client. Field names follow SERVICE-SPEC.md exactly.
// Types that belong to a layer (Page, Locator, Context, LLMClient) are defined there and
// re-exported from the package index; this file holds the option and result shapes.

import type { Page } from "./browser/page.ts";

// ---------- logging ----------

/** One log event. `level`: 0 error/essential, 1 info, 2 debug. */
export interface LogLine {
  category: string;
  message: string;
  level: 0 | 1 | 2;
  /** ISO 8601 time the line was made. */
  timestamp: string;
  auxiliary?: Record<
    string,
    { value: string; type: "object" | "string" | "html" | "integer" | "float" | "boolean" }
  >;
}

export type Logger = (line: LogLine) => void;

// ---------- models ----------

/** `"provider/model"`, or an object with the model name and provider options. */
export type ModelConfiguration =
  | string
  | {
      modelName: string;
      apiKey?: string;
      baseURL?: string;
      /** Extra HTTP headers sent to the provider. */
      headers?: Record<string, string>;
      /** Provider-specific options, passed through to the provider's factory. */
      [option: string]: unknown;
    };

// ---------- variables ----------

export type VariablePrimitive = string | number | boolean;
/** A value for a `%name%` placeholder. The object form lets the model see a description (never the value). */
export type VariableValue = VariablePrimitive | { value: VariablePrimitive; description?: string };
export type Variables = Record<string, VariableValue>;

// ---------- actions and results ----------

export interface Action {
  /** XPath (from observe), or any selector kind for act input. */
  selector: string;
  /** What the element is and what acting on it does; used to re-find it when the page changed. */
  description: string;
  /** `click`, `fill`, `type`, `press`, `hover`, `selectOption`, `check`, `uncheck`, `scrollTo`, ... */
  method?: string;
  arguments?: string[];
}

export interface ActResult {
  success: boolean;
  message: string;
  actionDescription: string;
  actions?: Action[];
  /** Present only in REMOTE mode with server caching on. */
  cacheStatus?: "HIT" | "MISS";
}

/** Anything that can be used where a page is expected: a Deckhand page, or a Playwright,
 * Puppeteer or Patchright page connected to the same browser. */
export type AnyPage = Page | { url(): string };

interface OperationOptions {
  model?: ModelConfiguration;
  /** Milliseconds. */
  timeout?: number;
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

export type ExtractPageTextResult = { pageText: string };
export type ExtractTextResult = { extraction: string; cacheStatus?: "HIT" | "MISS" };

// ---------- metrics and history ----------

type MetricGroup<P extends string> = {
  [K in
    | `${P}PromptTokens`
    | `${P}CompletionTokens`
    | `${P}ReasoningTokens`
    | `${P}CachedInputTokens`
    | `${P}InferenceTimeMs`]: number;
};

/** Section 2.12: five numbers per operation kind, and their totals. */
export type DeckhandMetrics = MetricGroup<"act"> &
  MetricGroup<"extract"> &
  MetricGroup<"observe"> &
  MetricGroup<"agent"> &
  MetricGroup<"total">;

export interface HistoryEntry {
  method: "act" | "extract" | "observe" | "navigate";
  parameters: unknown;
  result: unknown;
  /** ISO 8601. */
  timestamp: string;
}

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
  env: "LOCAL" | "REMOTE";
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
  llmClient?: import("./llm/client.ts").LLMClient;
  systemPrompt?: string;
  selfHeal?: boolean;
  experimental?: boolean;
  /** Milliseconds to wait for the DOM to settle before an operation. Default 30000. */
  domSettleTimeout?: number;
  /** Directory of the action cache: a successful act is replayed without the model next time. */
  cacheDir?: string;
  /**
   * Where the action cache keeps its entries, instead of files in `cacheDir`: any object with
   * `get(key)` and `put(key, entry)` (a Redis hash, a database table). LOCAL only.
   */
  actionCache?: import("./cache/action-cache.ts").ActionCacheStore;
  keepAlive?: boolean;
  serverCache?: boolean;
  verbose?: 0 | 1 | 2;
  logInferenceToFile?: boolean;
  disablePino?: boolean;
  logger?: Logger;
}
