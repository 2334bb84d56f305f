// The public client: checks arguments, registers variables as secrets, applies each operation's
// deadline and records history. The work is done by a driver (driver.ts): LocalDriver runs it in
// this process, RemoteDriver asks the Deckhand service. The facade never branches on the mode.

import type { Browser } from "./browser/browser.ts";
import type { Context } from "./browser/context.ts";
import type { Page } from "./browser/page.ts";
import { type AnyPage, resolvePage } from "./browser/third-party.ts";
import { Deadline } from "./deadline.ts";
import type { Driver } from "./driver.ts";
import {
  ServiceBrowserClosedError,
  ServiceError,
  ServiceInitError,
  ServiceInvalidArgumentError,
  ServiceNotInitializedError,
} from "./errors.ts";
import { HistoryRecorder } from "./history.ts";
import { type InferSchema, isZod3Schema, isZod4Schema, type SchemaInput } from "./llm/schema.ts";
import { LocalDriver } from "./local/local-driver.ts";
import { DeckhandLog, SecretRedactor } from "./log.ts";
import { MetricsRecorder } from "./metrics.ts";
import { redactVariables, registerVariables } from "./ops/variables.ts";
import {
  type ActOptions,
  type DeckhandOptions,
  type ExtractOptions,
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

type State = "new" | "initializing" | "ready" | "closing" | "closed";

export class Deckhand {
  /** The validated options (aliases folded in). */
  readonly options: ResolvedOptions;
  /** @internal */
  readonly log: DeckhandLog;
  /** @internal */
  readonly redactor: SecretRedactor;
  /** @internal */
  readonly historyRecorder = new HistoryRecorder();
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
   * page there; close() disposes of the context and leaves the browser running.
   */
  static inContext(
    context: Context,
    options: Omit<DeckhandOptions, "env" | "localBrowserLaunchOptions">,
  ): Deckhand {
    const dh = new Deckhand({ ...options, env: "LOCAL" });
    dh.driver = new LocalDriver(dh.options, dh.log, dh.metricsRecorder, context);
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
    page.onNavigate = (parameters, result) => this.historyRecorder.record("navigate", parameters, result);
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
    if (page) return resolvePage(browser, page);
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
   * browser that goes away aborts it at once with ServiceBrowserClosedError.
   */
  private async underDeadline<T>(
    operation: string,
    options: { timeout?: number; signal?: AbortSignal },
    run: (deadline: Deadline) => Promise<T>,
  ): Promise<T> {
    const deadline = Deadline.start(operation, { timeout: options.timeout, signal: options.signal });
    this.running.add(deadline);
    try {
      return await deadline.run(run);
    } finally {
      this.running.delete(deadline);
    }
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
    const started = performance.now();
    const call = { ...this.callOptions(options), input, variables: options.variables };
    const result = await this.underDeadline("act()", options, (deadline) =>
      this.driver.act(page, call, deadline),
    );
    this.log.info("act", result.message, {
      success: result.success,
      ms: Math.round(performance.now() - started),
    });
    this.historyRecorder.record(
      "act",
      {
        ...(typeof input === "string" ? { instruction: input } : { action: input }),
        options: this.recordable(options),
      },
      result,
    );
    return result;
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
    const call = {
      ...this.callOptions(options),
      instruction: instruction as string | undefined,
      variables: options.variables,
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
    };
    const actions = await this.underDeadline("observe()", options, (deadline) =>
      this.driver.observe(page, call, deadline),
    );
    this.historyRecorder.record("observe", { instruction, options: this.recordable(options) }, actions);
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
    const schema = isSchema(second) ? (second as SchemaInput) : undefined;
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
    const data = await this.underDeadline("extract()", options, (deadline) =>
      this.driver.extract(page, call, deadline),
    );
    this.historyRecorder.record("extract", { instruction: first, options: this.recordable(options) }, data);
    return data;
  }

  private async pageText(options: ExtractOptions): Promise<ExtractPageTextResult> {
    const page = await this.targetPage(options.page, "extract()");
    const call = {
      ...this.callOptions(options),
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
    };
    const pageText = await this.underDeadline("extract()", options, (deadline) =>
      this.driver.pageText(page, call, deadline),
    );
    const result = { pageText };
    this.historyRecorder.record("extract", { options: this.recordable(options) }, result);
    return result;
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

function browserGone(): ServiceBrowserClosedError {
  return new ServiceBrowserClosedError(
    "The browser is no longer connected (it crashed, was killed or was closed). Start a new Deckhand instance (init()) to continue.",
  );
}

/** Whether extract()'s second argument is a schema (zod, or JSON Schema) rather than options. */
function isSchema(value: unknown): boolean {
  if (!value || typeof value !== "object") return false;
  if (isZod4Schema(value) || isZod3Schema(value)) return true;
  return ["type", "properties", "items", "$schema", "anyOf", "oneOf", "allOf", "$ref", "enum"].some(
    (k) => k in value,
  );
}
