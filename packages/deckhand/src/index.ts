// The public API of the deckhand package.

export { Browser, type BrowserOptions, type ContextOptions } from "./browser/browser.ts";
export { CdpChannel, type CdpChannelEvent, type CdpChannelListener } from "./browser/cdp/channel.ts";
export {
  type CdpTransport,
  PipeTransport,
  WebSocketTransport,
  type WebSocketTransportOptions,
} from "./browser/cdp/transport.ts";
export { chromeSearchPaths, findChrome } from "./browser/chrome-path.ts";
export { Context } from "./browser/context.ts";
export { Frame } from "./browser/frame.ts";
export type { ElementState } from "./browser/injected/dom-runtime.ts";
export type { ClickOptions, MouseButton } from "./browser/input.ts";
export {
  type ChromeLaunchOptions,
  DEFAULT_ARGS,
  type LaunchedChrome,
  launchChrome,
} from "./browser/launch.ts";
export { type FilePayload, Locator, type TimeoutOption } from "./browser/locator.ts";
export { type GotoOptions, Page, type ScreenshotOptions, type WaitUntil } from "./browser/page.ts";
export { type AnyPage, resolvePage } from "./browser/third-party.ts";
export {
  ActionCache,
  type ActionCacheStore,
  type CachedStep,
  type CacheEntry,
  FileActionCacheStore,
} from "./cache/action-cache.ts";
export { Deckhand } from "./deckhand.ts";
export * from "./errors.ts";
export type {
  JSONSchema,
  LLMClient,
  LLMContentPart,
  LLMMessage,
  LLMRequest,
  LLMResponse,
  LLMUsage,
} from "./llm/client.ts";
export { DEFAULT_MODEL_NAME, parseModelName } from "./llm/resolve-model.ts";
export {
  checkJsonSchemaLimits,
  JSON_SCHEMA_LIMITS,
  JsonSchemaLimitError,
  type JsonSchemaLimitName,
  type JsonSchemaLimits,
} from "./llm/schema-limits.ts";
export { DeckhandLog, MIN_SUBSTRING_SECRET, MIN_TEXT_SECRET, SecretRedactor } from "./log.ts";
export { MetricsRecorder } from "./metrics.ts";
export { variableValue, variableValues } from "./ops/variables.ts";
export type {
  ActOptions,
  DeckhandOptions,
  ExtractOptions,
  LocalBrowserLaunchOptions,
  ObserveOptions,
  OperationOptions,
  ProxyOptions,
  SessionCreateParams,
} from "./options.ts";
export {
  DEFAULT_TOKEN_BUDGET,
  type ElementRef,
  Snapshot,
  type SnapshotOptions,
  takeSnapshot,
} from "./snapshot/snapshot.ts";
export type * from "./types.ts";
export { actionOnTheWire, actResultOnTheWire } from "./wire.ts";
