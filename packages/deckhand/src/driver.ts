// What does the work behind the Deckhand facade: a driver per mode. The LOCAL driver (local/)
// runs the operations in this process against a browser it launched or attached to; the REMOTE
// driver (remote/) asks the Deckhand service. The facade (deckhand.ts) checks arguments, registers
// variables, applies the deadline and records history, and never branches on the mode.

import type {
  AgentConfig,
  AgentExecuteOptions,
  AgentHost,
  AgentResult,
  AgentStreamResult,
} from "./agent/types.ts";
import type { Browser } from "./browser/browser.ts";
import type { Context } from "./browser/context.ts";
import type { Page } from "./browser/page.ts";
import type { Deadline } from "./deadline.ts";
import type { ExportScriptOptions } from "./export/script.ts";
import type { SchemaInput } from "./llm/schema.ts";
import type { Action, ActResult, DeckhandMetrics, ModelConfiguration, Variables } from "./types.ts";

/** What every operation call carries besides its own parameters. */
export interface CallOptions {
  /** A model for this call only. */
  model?: ModelConfiguration;
  /** The caller's timeout (ms); the deadline enforces it, REMOTE also sends it to the service. */
  timeout?: number;
  /** REMOTE: use the service's cache for this call. */
  serverCache?: boolean;
}

export interface ActCall extends CallOptions {
  input: string | Action;
  variables?: Variables;
}

export interface ObserveCall extends CallOptions {
  instruction?: string;
  variables?: Variables;
  selector?: string;
  ignoreSelectors?: string[];
}

export interface ExtractCall extends CallOptions {
  instruction: string;
  schema?: SchemaInput;
  selector?: string;
  ignoreSelectors?: string[];
  screenshot?: boolean;
}

export interface PageTextCall extends CallOptions {
  selector?: string;
  ignoreSelectors?: string[];
}

export interface AgentCall {
  config: AgentConfig;
  options: AgentExecuteOptions;
  /** The instance's own act/extract, log, secrets and metrics: what the agent's tools use (LOCAL). */
  host: AgentHost;
}

/** The remote session a driver works in (REMOTE only). */
export interface SessionInfo {
  sessionId: string | undefined;
  sessionUrl: string | undefined;
  debugUrl: string | undefined;
}

/**
 * The run's report (the LOCAL `report` option, report/report-recorder.ts): the facade tells it of
 * every operation and navigation; it is written at close() or by writeReport().
 */
export interface OperationReport {
  /** Values to hide wherever the report shows text (a call's variables). */
  addSecrets(values: readonly unknown[]): void;
  /** Runs an operation as a step of the report. */
  run<T>(method: string, page: Page, parameters: Record<string, unknown>, run: () => Promise<T>): Promise<T>;
  navigated(page: Page, parameters: Record<string, unknown>, result: Record<string, unknown>): void;
  /**
   * Writes the report; resolves to the file's path. `record`: the run's operations in the replay
   * record's shape (history.ts recordedRows), kept in the report for `deckhand export --from-report`.
   */
  write(title?: string, record?: readonly unknown[]): Promise<string>;
}

export interface Driver {
  /** The run's report, when the options ask for one (LOCAL only). */
  readonly report: OperationReport | undefined;
  /** Starts (launches, attaches, or opens a session) and gives the browser and the context to work in. */
  start(): Promise<{ browser: Browser; context: Context }>;
  /** Undoes a start that failed part of the way (closes what it opened), and says what to throw. */
  abandon(error: unknown): Promise<Error>;
  act(page: Page, call: ActCall, deadline: Deadline): Promise<ActResult>;
  observe(page: Page, call: ObserveCall, deadline: Deadline): Promise<Action[]>;
  extract(page: Page, call: ExtractCall, deadline: Deadline): Promise<unknown>;
  /** Runs an agent task: LOCAL in this process, REMOTE on the service. */
  agentExecute(page: Page, call: AgentCall, deadline: Deadline): Promise<AgentResult | AgentStreamResult>;
  /** The page's outline, with no model call. */
  pageText(page: Page, call: PageTextCall, deadline: Deadline): Promise<string>;
  metrics(): Promise<DeckhandMetrics>;
  /** Ends the instance: closes or disconnects the browser, ends or leaves the session, as the options say. */
  close(browser: Browser | undefined, force: boolean): Promise<void>;
  readonly session: SessionInfo;
  /** REMOTE: the script of the session, as the service exports it (LOCAL exports its own record). */
  exportScript?(options: ExportScriptOptions): Promise<string>;
}
