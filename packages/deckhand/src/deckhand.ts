// The public client: checks arguments, registers variables as secrets, applies each operation's
// deadline and records history. The work is done by a driver (driver.ts): LocalDriver runs it in
// this process, RemoteDriver asks the Deckhand service. The facade never branches on the mode.

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
import type { AnyPage } from "./browser/third-party.ts";
import { Deadline } from "./deadline.ts";
import type { Driver, OperationReport } from "./driver.ts";
import {
  ServiceBrowserClosedError,
  ServiceError,
  ServiceInitError,
  ServiceInvalidArgumentError,
  ServiceNotInitializedError,
} from "./errors.ts";
import { type ExportScriptOptions, exportScript, isScriptFormat, SCRIPT_FORMATS } from "./export/script.ts";
import { HistoryRecorder } from "./history.ts";
import type { InferSchema, SchemaInput } from "./llm/schema.ts";
import { LocalDriver } from "./local/local-driver.ts";
import { DeckhandLog, SecretRedactor } from "./log.ts";
import { MetricsRecorder } from "./metrics.ts";
import { redactVariables, registerVariables, variableValues } from "./ops/variables.ts";
import {
  type ActOptions,
  type DeckhandOptions,
  type ExtractOptions,
  isSchemaArgument,
  type ObserveOptions,
  type ResolvedOptions,
  resolveOptions,
} from "./options.ts";
import { RemoteDriver } from "./remote/remote-driver.ts";
import type {
  Action,
  ActResult,
  DeckhandMetrics,
  ExtractPageTextResult,
  ExtractTextResult,
  HistoryEntry,
  ModelConfiguration,
} from "./types.ts";
import {
  CALL_LOG,
  RECORDED,
  RECORDED_STEPS,
  RESOLVED_WITHOUT_MODEL,
  type RecordedOperation,
  type RecordedStep,
} from "./types.ts";

type State = "new" | "initializing" | "ready" | "closing" | "closed";

/** How a Deckhand made by Deckhand.inContext keeps its own records. */
export interface InContextOptions {
  /**
   * false: keep no history (`history` stays empty, and exportScript() has nothing to export), for
   * a caller that records the operations itself, as the service does in its replay record: an
   * instance that lives for hours otherwise holds a copy of every operation until it closes.
   * Default true.
   */
  history?: boolean;
}

export class Deckhand {
  /** The validated options (aliases folded in). */
  readonly options: ResolvedOptions;
  /** @internal */
  readonly log: DeckhandLog;
  /** @internal */
  readonly redactor: SecretRedactor;
  /** @internal */
  readonly historyRecorder = new HistoryRecorder();
  /**
   * The options objects of the acts and extracts an agent makes (see agentHost), and the agent's
   * deadline each runs under (a tool call's, or the run's).
   */
  private readonly agentCalls = new WeakMap<object, Deadline>();
  /** @internal */
  readonly metricsRecorder = new MetricsRecorder();
  private driver: Driver;
  private state: State = "new";
  private browser: Browser | undefined;
  private ctx: Context | undefined;
  private initPromise: Promise<void> | undefined;
  private closePromise: Promise<void> | undefined;
  /** Deadlines of the operations in flight (a browser that goes away aborts them). */
  private readonly running = new Set<Deadline>();
  /** The LOCAL report (`report` option), kept by the driver. */
  private get report(): OperationReport | undefined {
    return this.driver.report;
  }

  constructor(options: DeckhandOptions) {
    this.options = resolveOptions(options);
    this.redactor = new SecretRedactor();
    this.redactor.add(this.options.apiKey);
    if (typeof this.options.model === "object") this.redactor.add(this.options.model.apiKey);
    this.redactor.add(this.options.localBrowserLaunchOptions?.proxy?.password);
    this.log = new DeckhandLog({
      verbose: this.options.verbose,
      logger: this.options.logger,
      disablePino: this.options.disablePino,
      format: options.logFormat,
      redactor: this.redactor,
    });
    this.driver =
      this.options.env === "REMOTE"
        ? new RemoteDriver(this.options, this.log)
        : new LocalDriver(this.options, this.log, this.metricsRecorder);
  }

  // ---------- lifecycle ----------

  /**
   * A Deckhand that works in an existing browser context, for example one isolated context per
   * session in a browser shared by many (what the Deckhand service does). init() opens its first
   * page there; close() disposes of the context and leaves the browser running. `instance.history:
   * false` keeps no history (see InContextOptions).
   */
  static inContext(
    context: Context,
    options: Omit<DeckhandOptions, "env" | "localBrowserLaunchOptions">,
    instance: InContextOptions = {},
  ): Deckhand {
    const dh = new Deckhand({ ...options, env: "LOCAL" });
    dh.driver = new LocalDriver(dh.options, dh.log, dh.metricsRecorder, context);
    if (instance.history === false) dh.historyRecorder.stopKeeping();
    return dh;
  }

  /** Starts the browser (or attaches to one) and opens the first page. Call once, before anything else. */
  init(): Promise<void> {
    if (this.state === "closing" || this.state === "closed") {
      return Promise.reject(new ServiceInitError("This Deckhand instance was closed; create a new one."));
    }
    this.initPromise ??= this.start();
    return this.initPromise;
  }

  private async start(): Promise<void> {
    this.state = "initializing";
    const started = performance.now();
    try {
      const { browser, context } = await this.driver.start();
      this.browser = browser;
      this.ctx = context;
      if (!context.activePage()) await context.newPage();
      for (const page of context.pages()) this.watchPage(page);
      context.onPage((page) => this.watchPage(page));
      browser.onDisconnected(() => {
        if (this.state !== "ready") return;
        this.log.error("browser", "The browser disconnected (closed or crashed).");
        const error = browserGone();
        for (const deadline of this.running) deadline.abort(error);
      });
      this.state = "ready";
      this.log.info("init", "browser ready", {
        ms: Math.round(performance.now() - started),
        cdpUrl: browser.wsEndpoint,
      });
    } catch (error) {
      this.state = "closed";
      throw await this.driver.abandon(error);
    }
  }

  private watchPage(page: Page): void {
    page.onNavigate = (parameters, result) => {
      this.historyRecorder.record("navigate", parameters, result);
      this.report?.navigated(page, { ...parameters }, { ...result });
    };
  }

  /**
   * Ends the instance. Without keepAlive the browser Deckhand launched is closed and its
   * temporary profile removed; with keepAlive (or a browser attached through cdpUrl) Deckhand only
   * disconnects. `force` stops at once, even while an earlier close is still running.
   */
  close(options: { force?: boolean } = {}): Promise<void> {
    if (this.state === "closed" && !this.browser) return Promise.resolve();
    if (this.closePromise && !options.force) return this.closePromise;
    this.state = "closing";
    const browser = this.browser;
    this.closePromise = (async () => {
      try {
        await this.initPromise?.catch(() => undefined);
        if (this.report && !options.force) {
          const file = await this.report
            .write(undefined, this.historyRecorder.recordedRows())
            .catch((error: unknown) => {
              this.log.error("report", "the report could not be written", { error: String(error) });
              return undefined;
            });
          if (file) this.log.info("report", `report written to ${file}`, { file });
        }
        await this.driver.close(browser ?? this.browser, options.force ?? false);
      } finally {
        this.browser = undefined;
        this.state = "closed";
      }
    })();
    return this.closePromise;
  }

  // ---------- AI operations ----------

  /** The page an operation targets: the `page` option (any supported page object) or the active page. */
  private async targetPage(page: AnyPage | undefined, what: string): Promise<Page> {
    const browser = this.ready(what);
    if (page) return browser.pageOf(page);
    return this.page;
  }

  /** Options as they may be recorded: no page object, no variable values, no keys. */
  private recordable(options: {
    page?: unknown;
    signal?: AbortSignal;
    variables?: ActOptions["variables"];
    model?: ModelConfiguration;
  }): Record<string, unknown> {
    const { page: _page, signal: _signal, variables, ...rest } = options;
    const out: Record<string, unknown> = this.redactor.redactValue(rest);
    if (variables) out.variables = redactVariables(variables);
    return out;
  }

  /**
   * Runs an operation under its deadline (the caller's `timeout` and `signal`). While it runs, a
   * browser that goes away aborts it at once with ServiceBrowserClosedError. An agent's call runs
   * as a step of the agent's deadline instead: its waits go to that call log (which the tool's
   * answer to the model ends with), and it ends when the tool's time does.
   */
  private async underDeadline<T>(
    operation: string,
    options: { timeout?: number; signal?: AbortSignal },
    run: (deadline: Deadline) => Promise<T>,
  ): Promise<T> {
    const agent = this.agentCalls.get(options);
    const deadline =
      agent?.child(operation) ??
      Deadline.start(operation, {
        timeout: options.timeout,
        signal: options.signal,
        mask: (line) => this.redactor.mask(line),
      });
    this.running.add(deadline);
    try {
      return await deadline.run(run);
    } finally {
      this.running.delete(deadline);
    }
  }

  /** Runs an operation, as a step of the LOCAL report when there is one. */
  private reported<T>(
    method: string,
    page: Page,
    parameters: Record<string, unknown>,
    run: () => Promise<T>,
  ): Promise<T> {
    return this.report ? this.report.run(method, page, parameters, run) : run();
  }

  /**
   * Writes the LOCAL report now (it is also written at close()): one HTML file in the `report`
   * directory with every operation so far and its screenshots. Resolves to the file's path.
   */
  async writeReport(): Promise<string> {
    if (!this.report) {
      throw new ServiceInvalidArgumentError(
        'writeReport() needs the `report` option: new Deckhand({ env: "LOCAL", report: "./reports" }).',
      );
    }
    return this.report.write(undefined, this.historyRecorder.recordedRows());
  }

  /** The options every driver call carries. */
  private callOptions(options: { model?: ModelConfiguration; timeout?: number; serverCache?: boolean }) {
    if (typeof options.model === "object") this.redactor.add(options.model.apiKey);
    return { model: options.model, timeout: options.timeout, serverCache: options.serverCache };
  }

  /**
   * Performs an action on the page: from an instruction (the model chooses the element and the
   * method), or from an Action (observe's result; no model call).
   */
  async act(input: string | Action, options: ActOptions = {}): Promise<ActResult> {
    const page = await this.targetPage(options.page, "act()");
    if (
      typeof input === "string"
        ? !input.trim()
        : !input || typeof input !== "object" || typeof input.selector !== "string"
    ) {
      throw new ServiceInvalidArgumentError(
        "act() needs an instruction string or an Action ({ selector, description, method, arguments }).",
      );
    }
    registerVariables(options.variables, this.redactor);
    this.report?.addSecrets(variableValues(options.variables));
    const started = performance.now();
    const startedAt = Date.now();
    const startUrl = page.url();
    const call = { ...this.callOptions(options), input, variables: options.variables };
    const result = await this.reported(
      "act",
      page,
      {
        ...(typeof input === "string" ? { instruction: input } : { action: input }),
        options: this.recordable(options),
      },
      () => this.underDeadline("act()", options, (deadline) => this.driver.act(page, call, deadline)),
    );
    const withoutModel = (result as { [RESOLVED_WITHOUT_MODEL]?: true })[RESOLVED_WITHOUT_MODEL] === true;
    this.log.info("act", result.message, {
      success: result.success,
      ms: Math.round(performance.now() - started),
      ...(withoutModel ? { model: "none (explicit instruction, 0 tokens)" } : {}),
    });
    this.historyRecorder.record(
      "act",
      {
        ...(typeof input === "string" ? { instruction: input } : { action: input }),
        options: this.recordable(options),
      },
      withoutModel ? { ...result, resolvedWithoutModel: true } : result,
      (result as { [CALL_LOG]?: readonly string[] })[CALL_LOG],
    );
    this.recordSteps(page, input, options, result, startUrl, startedAt);
    return result;
  }

  /**
   * Keeps what an act did for the script exports (LOCAL: the REMOTE driver's results carry no
   * steps; the service records its own): where it ran and its recorded steps, on the result
   * (RECORDED, for the service's replay record) and in the instance's record.
   */
  private recordSteps(
    page: Page,
    input: string | Action,
    options: ActOptions,
    result: ActResult,
    startUrl: string,
    timestamp: number,
  ): void {
    const steps = (result as { [RECORDED_STEPS]?: RecordedStep[] })[RECORDED_STEPS];
    if (!steps) return;
    const recorded: RecordedOperation = {
      page: page.targetId,
      startUrl,
      endUrl: page.isClosed() ? startUrl : page.url(),
      steps,
    };
    Object.defineProperty(result, RECORDED, { value: recorded, enumerable: false });
    if (this.agentCalls.has(options)) return;
    this.historyRecorder.recordRow({
      method: "act",
      parameters: { input: this.redactor.maskValue(input), options: this.recordable(options) },
      result: { ...(this.redactor.maskValue({ ...result }) as Record<string, unknown>), recorded },
      timestamp,
    });
  }

  /**
   * The run so far as a script: `playwright-test` (default), a @playwright/test spec that does
   * what the run did with no Deckhand and no model, or `deckhand`, act(action) steps that run with
   * no model while the page is unchanged and find a moved element again with it. Variables stay
   * `%name%` in the record and are read from the environment by the script; their values are
   * never written. REMOTE: the service exports its record of the session.
   */
  async exportScript(options: ExportScriptOptions = {}): Promise<string> {
    this.ready("exportScript()");
    if (options.format !== undefined && !isScriptFormat(options.format)) {
      throw new ServiceInvalidArgumentError(
        `exportScript() format must be one of ${SCRIPT_FORMATS.join(", ")}; got ${JSON.stringify(options.format)}.`,
      );
    }
    if (this.driver.exportScript) return this.driver.exportScript(options);
    return exportScript(this.historyRecorder.recordedRows(), { ...options, recordedIn: "a LOCAL run" });
  }

  /**
   * Finds elements: with an instruction, the ones that match it (most relevant first); without,
   * every interactive element (no model call). Each result is an Action act() accepts as is.
   */
  async observe(instruction?: string | ObserveOptions, options: ObserveOptions = {}): Promise<Action[]> {
    if (typeof instruction === "object" && instruction !== null) {
      options = instruction;
      instruction = undefined;
    }
    const page = await this.targetPage(options.page, "observe()");
    registerVariables(options.variables, this.redactor);
    this.report?.addSecrets(variableValues(options.variables));
    const call = {
      ...this.callOptions(options),
      instruction: instruction as string | undefined,
      variables: options.variables,
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
    };
    const actions = await this.reported(
      "observe",
      page,
      { instruction, options: this.recordable(options) },
      () => this.underDeadline("observe()", options, (deadline) => this.driver.observe(page, call, deadline)),
    );
    this.historyRecorder.record("observe", { instruction, options: this.recordable(options) }, actions);
    this.historyRecorder.recordRow({
      method: "observe",
      parameters: { instruction, options: this.recordable(options) },
      result: { actions: this.redactor.maskValue(actions) },
      timestamp: Date.now(),
    });
    return actions;
  }

  /** The page outline, with no model call. */
  extract(options?: ExtractOptions): Promise<ExtractPageTextResult>;
  /** A text answer about the page. */
  extract(instruction: string, options?: ExtractOptions): Promise<ExtractTextResult>;
  /** Data from the page, shaped by a zod (v4 or v3) or JSON Schema. */
  extract<S extends SchemaInput>(
    instruction: string,
    schema: S,
    options?: ExtractOptions,
  ): Promise<InferSchema<S>>;
  async extract(
    first?: string | ExtractOptions,
    second?: SchemaInput | ExtractOptions,
    third?: ExtractOptions,
  ): Promise<unknown> {
    if (first === undefined || (typeof first === "object" && first !== null))
      return this.pageText(first ?? {});
    if (typeof first !== "string" || !first.trim()) {
      throw new ServiceInvalidArgumentError(
        "extract() takes an instruction string, optionally a schema, then options.",
      );
    }
    const schema = isSchemaArgument(second) ? (second as SchemaInput) : undefined;
    // extract(instruction, undefined, options) (a schema that is optional at the call site) keeps its options.
    const options: ExtractOptions =
      (schema ? third : ((second as ExtractOptions | undefined) ?? third)) ?? {};
    const page = await this.targetPage(options.page, "extract()");
    const call = {
      ...this.callOptions(options),
      instruction: first,
      schema,
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
      screenshot: options.screenshot,
    };
    const data = await this.reported(
      "extract",
      page,
      { instruction: first, options: this.recordable(options) },
      () => this.underDeadline("extract()", options, (deadline) => this.driver.extract(page, call, deadline)),
    );
    this.historyRecorder.record("extract", { instruction: first, options: this.recordable(options) }, data);
    if (!this.agentCalls.has(options)) this.recordExtract(first, options, data);
    return data;
  }

  /** Keeps an extract for the script exports, as the service's replay record keeps it. */
  private recordExtract(instruction: string, options: ExtractOptions, data: unknown): void {
    const masked = this.redactor.maskValue(data);
    this.historyRecorder.recordRow({
      method: "extract",
      parameters: { instruction, options: this.recordable(options) },
      // As the service's replay record keeps it: an object as it is, anything else as { value }.
      result:
        masked !== null && typeof masked === "object" && !Array.isArray(masked)
          ? (masked as Record<string, unknown>)
          : { value: masked },
      timestamp: Date.now(),
    });
  }

  private async pageText(options: ExtractOptions): Promise<ExtractPageTextResult> {
    const page = await this.targetPage(options.page, "extract()");
    const call = {
      ...this.callOptions(options),
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
    };
    const pageText = await this.reported("extract", page, { options: this.recordable(options) }, () =>
      this.underDeadline("extract()", options, (deadline) => this.driver.pageText(page, call, deadline)),
    );
    const result = { pageText };
    this.historyRecorder.record("extract", { options: this.recordable(options) }, result);
    if (!this.agentCalls.has(options)) {
      this.historyRecorder.recordRow({
        method: "extract",
        parameters: { options: this.recordable(options) },
        // An export reads an extract's strings of up to 200 characters (assertExtracts): a longer
        // outline is not kept in the record.
        result: { pageText: pageText.length <= 200 ? this.redactor.mask(pageText) : "" },
        timestamp: Date.now(),
      });
    }
    return result;
  }

  // ---------- the agent ----------

  /**
   * An agent for autonomous multi-step tasks: `dh.agent(config).execute(instruction)`. Its own
   * model calls count under the `agent*` metrics; the act/extract calls its tools make count
   * under theirs and appear in the history.
   */
  agent(config: AgentConfig & { stream: true }): DeckhandAgent<AgentStreamResult>;
  agent(config?: AgentConfig): DeckhandAgent<AgentResult>;
  agent(config: AgentConfig = {}): DeckhandAgent<AgentResult> | DeckhandAgent<AgentStreamResult> {
    if (config === null || typeof config !== "object")
      throw new ServiceInvalidArgumentError("agent() takes a configuration object (or nothing).");
    return new DeckhandAgent<AgentResult>(config, (options) => this.agentExecute(config, options));
  }

  /** The instance as the agent's tools use it: its public act and extract, its log, secrets, metrics. */
  private agentHost(): AgentHost {
    return {
      act: (input, { deadline, ...options }) => {
        // Its steps are exported as part of the agent run (its row), not as acts of their own.
        const marked = { ...options };
        this.agentCalls.set(marked, deadline);
        return this.act(input, marked);
      },
      extract: (instruction, schema, { deadline, ...options }) => {
        // The agent's reads (its tools, its check of a claimed success) belong to its run's row.
        const marked = { ...options };
        this.agentCalls.set(marked, deadline);
        return schema ? this.extract(instruction, schema, marked) : this.extract(instruction, marked);
      },
      log: this.log,
      redactor: this.redactor,
      metrics: this.metricsRecorder,
      defaultModel: this.options.model,
      cacheStore: undefined,
      domSettleTimeout: this.options.domSettleTimeout,
    };
  }

  private async agentExecute(
    config: AgentConfig,
    options: AgentExecuteOptions,
  ): Promise<AgentResult | AgentStreamResult> {
    const page = await this.targetPage(options.page, "agent().execute()");
    registerVariables(options.variables, this.redactor);
    if (typeof config.model === "object") this.redactor.add(config.model.apiKey);
    if (typeof config.executionModel === "object") this.redactor.add(config.executionModel.apiKey);
    const call = { config, options, host: this.agentHost() };
    const started = performance.now();
    const startedAt = Date.now();
    const startUrl = page.url();
    if (config.stream) {
      // The stream outlives this call: its deadline ends when its result does.
      const deadline = Deadline.start("agent().execute()", {
        signal: options.signal,
        mask: (line) => this.redactor.mask(line),
      });
      this.running.add(deadline);
      const end = () => {
        this.running.delete(deadline);
        deadline.dispose();
      };
      try {
        const streamed = (await this.driver.agentExecute(page, call, deadline)) as AgentStreamResult;
        // Its result is logged and recorded (for the script exports) as a run's that is not
        // streamed, before the caller's await of it sees it.
        const result = streamed.result.then((done) => {
          this.concludeAgentRun(page, options, done, startUrl, startedAt, started);
          return done;
        });
        result.then(end, end);
        return Object.assign(streamed, { result });
      } catch (error) {
        end();
        throw error;
      }
    }
    const result = (await this.underDeadline("agent().execute()", { signal: options.signal }, (deadline) =>
      this.driver.agentExecute(page, call, deadline),
    )) as AgentResult;
    this.concludeAgentRun(page, options, result, startUrl, startedAt, started);
    return result;
  }

  /** The end of an agent run, streamed or not: its log line and its record. */
  private concludeAgentRun(
    page: Page,
    options: AgentExecuteOptions,
    result: AgentResult,
    startUrl: string,
    startedAt: number,
    started: number,
  ): void {
    this.log.info("agent", result.message, {
      success: result.success,
      steps: result.actions.length,
      ms: Math.round(performance.now() - started),
    });
    this.recordAgentRun(page, options, result, startUrl, startedAt);
  }

  /**
   * Keeps an agent run for the script exports, LOCAL (the service records its own): one row, as the
   * service's replay record keeps it, its steps being the run's actions (act with its recorded
   * steps, goto, keys, scroll, wait).
   */
  private recordAgentRun(
    page: Page,
    options: AgentExecuteOptions,
    result: AgentResult,
    startUrl: string,
    timestamp: number,
  ): void {
    if (this.driver.exportScript) return;
    const recorded: RecordedOperation = {
      page: page.targetId,
      startUrl,
      endUrl: page.isClosed() ? startUrl : page.url(),
      steps: [],
    };
    Object.defineProperty(result, RECORDED, { value: recorded, enumerable: false });
    const { messages: _messages, ...rest } = result as AgentResult & { messages?: unknown };
    this.historyRecorder.recordRow({
      method: "agentExecute",
      parameters: { executeOptions: { instruction: this.redactor.mask(options.instruction) } },
      result: { ...(this.redactor.maskValue(rest) as Record<string, unknown>), recorded },
      timestamp,
    });
  }

  /**
   * Tokens and inference time of every model call so far, per operation and in total (spec 2.12).
   * In REMOTE mode they come from the service's record of the session.
   */
  get metrics(): Promise<DeckhandMetrics> {
    return this.driver.metrics();
  }

  // ---------- properties ----------

  private ready(what: string): Browser {
    if (this.state !== "ready" || !this.browser) {
      if (this.state === "closing" || this.state === "closed")
        throw new ServiceNotInitializedError(`${what} (after close())`);
      throw new ServiceNotInitializedError(what);
    }
    if (!this.browser.isConnected()) throw browserGone();
    return this.browser;
  }

  /** The pages of the browser: newPage(), pages(), activePage(), setActivePage(page). */
  get context(): Context {
    this.ready("context");
    return this.ctx!;
  }

  /** The active page (shorthand for context.activePage()). */
  get page(): Page {
    const page = this.context.activePage();
    if (!page) throw new ServiceError("There is no open page. Open one with deckhand.context.newPage().");
    return page;
  }

  /** The DevTools WebSocket URL of the browser, for connecting another library (Playwright's connectOverCDP, Puppeteer's connect). */
  connectURL(): string {
    const url = this.ready("connectURL()").wsEndpoint;
    if (url === undefined) {
      throw new ServiceError(
        "connectURL(): this browser is driven over its DevTools pipe and has no DevTools URL (it was launched " +
          "with debuggingPort: false). Launch it with a debugging port to connect another library.",
      );
    }
    return url;
  }

  /** The remote session's id; undefined for local runs. */
  get sessionId(): string | undefined {
    return this.driver.session.sessionId;
  }

  /** A shareable link to the remote session; undefined for local runs. */
  get sessionUrl(): string | undefined {
    return this.driver.session.sessionUrl;
  }

  /** A direct debugger link; undefined for local runs. */
  get debugUrl(): string | undefined {
    return this.driver.session.debugUrl;
  }

  /** Alias of sessionId (the v3 name). */
  get browserbaseSessionID(): string | undefined {
    return this.sessionId;
  }

  /** Alias of sessionUrl (the v3 name). */
  get browserbaseSessionURL(): string | undefined {
    return this.sessionUrl;
  }

  /** Alias of debugUrl (the v3 name). */
  get browserbaseDebugURL(): string | undefined {
    return this.debugUrl;
  }

  /** Every act, extract, observe and navigation, in call order. */
  get history(): Promise<readonly HistoryEntry[]> {
    return Promise.resolve(this.historyRecorder.list());
  }
}

/** What `dh.agent(config)` gives: `execute(instruction | options)`. */
export class DeckhandAgent<R extends AgentResult | AgentStreamResult = AgentResult> {
  readonly config: AgentConfig;
  private readonly run: (options: AgentExecuteOptions) => Promise<AgentResult | AgentStreamResult>;

  /** @internal */
  constructor(
    config: AgentConfig,
    run: (options: AgentExecuteOptions) => Promise<AgentResult | AgentStreamResult>,
  ) {
    this.config = config;
    this.run = run;
  }

  /**
   * Runs the task until the agent calls done, is stuck, or uses maxSteps. An error inside the run
   * is a result with success: false; an abort (signal) rejects with a typed error. With
   * `stream: true` in the config: the AI SDK stream result plus a `result` promise.
   */
  execute(instructionOrOptions: string | AgentExecuteOptions): Promise<R> {
    const options =
      typeof instructionOrOptions === "string" ? { instruction: instructionOrOptions } : instructionOrOptions;
    if (
      !options ||
      typeof options !== "object" ||
      typeof options.instruction !== "string" ||
      !options.instruction.trim()
    )
      return Promise.reject(
        new ServiceInvalidArgumentError(
          'agent().execute() needs an instruction: execute("...") or execute({ instruction: "..." }).',
        ),
      );
    return this.run(options) as Promise<R>;
  }
}

function browserGone(): ServiceBrowserClosedError {
  return new ServiceBrowserClosedError(
    "The browser is no longer connected (it crashed, was killed or was closed). Start a new Deckhand instance (init()) to continue.",
  );
}
