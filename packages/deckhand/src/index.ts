// The public API of the deckhand package.

export { COMPUTER_USE_MODELS, supportsComputerUse } from "./agent/cua/index.ts";
export {
  compactMessages,
  DEFAULT_MAX_STEPS,
  DEFAULT_TOOL_TIMEOUT_MS,
} from "./agent/run.ts";
export type {
  AgentAction,
  AgentCallbacks,
  AgentConfig,
  AgentExecuteOptions,
  AgentIntegration,
  AgentMode,
  AgentResult,
  AgentStepEvent,
  AgentStreamResult,
  AgentUsage,
  McpClientLike,
} from "./agent/types.ts";
export { Browser, type BrowserOptions, type ContextOptions } from "./browser/browser.ts";
export { CdpChannel, type CdpChannelEvent, type CdpChannelListener } from "./browser/cdp/channel.ts";
export {
  type CdpMessageHead,
  type CdpMessageSource,
  CdpScanError,
  type MessageChange,
  rewriteMessage,
  scanCdpMessage,
} from "./browser/cdp/scan.ts";
export {
  type CdpTransport,
  type CdpTransportMessage,
  DRAINED_BACKLOG,
  joinMessage,
  messageHead,
  PipeTransport,
  WebSocketTransport,
  type WebSocketTransportOptions,
} from "./browser/cdp/transport.ts";
export { chromeSearchPaths, findChrome } from "./browser/chrome-path.ts";
export { Context } from "./browser/context.ts";
export type { ClearCookiesOptions, Cookie, CookieParam } from "./browser/cookies.ts";
export { Frame } from "./browser/frame.ts";
export type { ElementState } from "./browser/injected/dom-runtime.ts";
export type { ClickOptions, MouseButton } from "./browser/input.ts";
export {
  buildChromeArgs,
  type ChromeLaunchOptions,
  DEFAULT_ARGS,
  DEFAULT_VIEWPORT,
  type LaunchedChrome,
  launchChrome,
} from "./browser/launch.ts";
export { type FilePayload, Locator, type LocatorOptions, type TimeoutOption } from "./browser/locator.ts";
export {
  ConsoleMessage,
  Dialog,
  type GotoOptions,
  type InitScript,
  Page,
  type PageEventMap,
  type PageEventName,
  type ScreenshotOptions,
  type WaitUntil,
} from "./browser/page.ts";
export { type AnyPage, resolvePage } from "./browser/third-party.ts";
export {
  ActionCache,
  type ActionCacheStore,
  type CachedStep,
  type CacheEntry,
  FileActionCacheStore,
} from "./cache/action-cache.ts";
export { Deckhand, DeckhandAgent, type InContextOptions } from "./deckhand.ts";
export * from "./errors.ts";
export {
  type ExportScriptOptions,
  exportScript,
  isScriptFormat,
  recordFromReport,
  SCRIPT_FORMATS,
  type ScriptFormat,
} from "./export/script.ts";
export type { RecordedRow } from "./export/steps.ts";
export type {
  JSONSchema,
  LLMClient,
  LLMContentPart,
  LLMMessage,
  LLMRequest,
  LLMResponse,
  LLMUsage,
} from "./llm/client.ts";
export { legacyModelName, legacyModelWarning } from "./llm/legacy-models.ts";
export { DEFAULT_MODEL_NAME, parseModelName } from "./llm/resolve-model.ts";
export {
  checkJsonSchemaLimits,
  JSON_SCHEMA_LIMITS,
  JsonSchemaLimitError,
  type JsonSchemaLimitName,
  type JsonSchemaLimits,
} from "./llm/schema-limits.ts";
export {
  type ScriptedActAnswer,
  type ScriptedExtractAnswer,
  ScriptedLLMClient,
  type ScriptedObserveAnswer,
  type ScriptedQuestion,
} from "./llm/scripted-client.ts";
export {
  DeckhandLog,
  formatLogLine,
  MIN_SUBSTRING_SECRET,
  MIN_TEXT_SECRET,
  SecretRedactor,
  type Severity,
} from "./log.ts";
export { createMcpServer, toCallResult } from "./mcp/server.ts";
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
export { checkPageUrl, type PageUrlCheck, type PageUrlPolicy } from "./page-url.ts";
export {
  escapeHtml,
  groupByPage,
  type ReportStep,
  renderSessionReport,
  reportCsp,
  type SessionReportData,
  stepFailure,
  stepInstruction,
} from "./report/session-report.ts";
export { captureStepScreenshot, type StepScreenshotSettings } from "./report/step-screenshot.ts";
export {
  DEFAULT_TOKEN_BUDGET,
  type ElementRef,
  Snapshot,
  type SnapshotOptions,
  takeSnapshot,
} from "./snapshot/snapshot.ts";
export {
  clipToTokens,
  DEFAULT_TEXT_TOKENS,
  TOOLS,
  type ToolDefinition,
  type ToolOutput,
  type ToolResult,
  toolNamed,
} from "./tools/definitions.ts";
export type * from "./types.ts";
/** @internal The recorded operation on an ActResult (the service copies it into its replay record). */
export { RECORDED } from "./types.ts";
export { actionOnTheWire, actResultOnTheWire, type WireDoc, wireSchemas } from "./wire.ts";
