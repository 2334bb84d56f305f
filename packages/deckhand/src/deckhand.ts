// The public client. It checks the options, starts (or attaches to) the browser, and hands the AI
// operations to the layer that runs them.

import { Browser } from "./browser/browser.ts";
import type { Context } from "./browser/context.ts";
import { launchChrome } from "./browser/launch.ts";
import type { Page } from "./browser/page.ts";
import { resolvePage } from "./browser/third-party.ts";
import { ActionCache } from "./cache/action-cache.ts";
import {
  ServiceError,
  ServiceInitError,
  ServiceInvalidArgumentError,
  ServiceNotInitializedError,
} from "./errors.ts";
import { HistoryRecorder } from "./history.ts";
import { type InferSchema, isZod3Schema, isZod4Schema, ModelCaller, type SchemaInput } from "./llm/index.ts";
import { DeckhandLog, SecretRedactor } from "./log.ts";
import { MetricsRecorder } from "./metrics.ts";
import { actOnAction, actWithModel } from "./ops/act.ts";
import { type OperationContext, withDeadline } from "./ops/context.ts";
import { extract as extractWithModel } from "./ops/extract.ts";
import { observe as observeWithModel } from "./ops/observe.ts";
import { redactVariables, registerVariables } from "./ops/variables.ts";
import { type ResolvedOptions, resolveOptions } from "./options.ts";
import { RemoteSession } from "./remote/remote-session.ts";
import { takeSnapshot } from "./snapshot/snapshot.ts";
import type {
  Action,
  ActOptions,
  ActResult,
  AnyPage,
  DeckhandMetrics,
  DeckhandOptions,
  ExtractOptions,
  ExtractPageTextResult,
  ExtractTextResult,
  HistoryEntry,
  ModelConfiguration,
  ObserveOptions,
} from "./types.ts";

type State = "new" | "initializing" | "ready" | "closing" | "closed";

/**
 * `signal` cancels an operation in flight (it rejects with the signal's reason and its model call
 * is aborted), e.g. the service cancels a client's operation when the client disconnects.
 */
type Cancellable<T> = T & { signal?: AbortSignal };

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
  /** @internal */
  readonly caller: ModelCaller;
  private readonly cache: ActionCache | undefined;
  private state: State = "new";
  private browser: Browser | undefined;
  private ctx: Context | undefined;
  /** Set by inContext(): Deckhand works in this context of someone else's browser. */
  private givenContext: Context | undefined;
  /** env REMOTE: the session on the Deckhand service. */
  private readonly remote: RemoteSession | undefined;
  private initPromise: Promise<void> | undefined;
  private closePromise: Promise<void> | undefined;

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
    this.caller = new ModelCaller({
      model: this.options.model,
      llmClient: this.options.llmClient,
      systemPrompt: this.options.systemPrompt,
      log: this.log,
      metrics: this.metricsRecorder,
      logInferenceToFile: this.options.logInferenceToFile,
    });
    this.remote = this.options.env === "REMOTE" ? new RemoteSession(this.options, this.log) : undefined;
    // REMOTE: the service caches (serverCache); RemoteSession warns that cacheDir has no effect.
    const store = this.options.actionCache ?? this.options.cacheDir;
    this.cache = store && !this.remote ? new ActionCache(store, this.log) : undefined;
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
    dh.givenContext = context;
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
      if (this.remote) {
        this.browser = await this.remote.start();
        this.ctx = this.browser.defaultContext();
      } else if (this.givenContext) {
        this.browser = this.givenContext.browser;
        this.ctx = this.givenContext;
      } else {
        this.browser = await this.startLocalBrowser();
        this.ctx = this.browser.defaultContext();
      }
      if (!this.ctx.activePage()) await this.ctx.newPage();
      for (const page of this.ctx.pages()) this.watchPage(page);
      this.ctx.onPage((page) => this.watchPage(page));
      this.browser.onDisconnected(() => {
        if (this.state === "ready")
          this.log.error("browser", "The browser disconnected (closed or crashed).");
      });
      this.state = "ready";
      this.log.info("init", "browser ready", {
        ms: Math.round(performance.now() - started),
        cdpUrl: this.browser.wsEndpoint,
      });
    } catch (error) {
      this.state = "closed";
      if (this.remote) {
        this.browser?.disconnect();
        if (error instanceof ServiceError && error.code === "SESSION_NOT_FOUND") throw error;
        if (!this.options.sessionId && this.remote.sessionId) await this.remote.end().catch(() => undefined);
        if (error instanceof ServiceError) throw error;
      } else if (this.givenContext) await this.givenContext.close().catch(() => undefined);
      else if (this.browser) await this.browser.close().catch(() => undefined);
      if (error instanceof ServiceInitError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new ServiceInitError(`Deckhand could not start: ${this.redactor.redact(reason)}`, {
        cause: error,
      });
    }
  }

  private async startLocalBrowser(): Promise<Browser> {
    const launch = this.options.localBrowserLaunchOptions ?? {};
    const proxy = launch.proxy;
    const settings = {
      viewport: launch.viewport,
      ignoreHTTPSErrors: launch.ignoreHTTPSErrors,
      proxyCredentials: proxy?.username
        ? { username: proxy.username, password: proxy.password ?? "" }
        : undefined,
      connectTimeoutMs: launch.connectTimeoutMs,
    };
    if (launch.cdpUrl) {
      const endpoint = await browserEndpoint(launch.cdpUrl);
      return Browser.connect(endpoint, settings);
    }
    const launched = await launchChrome({
      executablePath: launch.executablePath,
      headless: launch.headless ?? true,
      port: launch.port,
      args: launch.args,
      ignoreDefaultArgs: launch.ignoreDefaultArgs,
      userDataDir: launch.userDataDir,
      windowSize: launch.viewport,
      devtools: launch.devtools,
      proxy: proxy ? { server: proxy.server, bypass: proxy.bypass } : undefined,
      keepAlive: this.options.keepAlive,
      timeoutMs: launch.connectTimeoutMs,
    });
    this.log.debug("init", "browser launched", {
      pid: launched.pid,
      executablePath: launched.executablePath,
    });
    try {
      return await Browser.connect(launched, settings);
    } catch (error) {
      await launched.kill();
      throw error;
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
        const current = browser ?? this.browser;
        if (this.remote) {
          current?.disconnect();
          if (!this.options.keepAlive)
            await this.remote
              .end()
              .catch((error: unknown) =>
                this.log.error("remote", `ending the session failed: ${(error as Error).message}`),
              );
          return;
        }
        if (!current) return;
        if (this.givenContext) {
          // The browser is shared: only this instance's context goes (unless it is to be kept).
          if (!this.options.keepAlive) await this.givenContext.close();
        } else if (this.options.keepAlive || !current.launched) current.disconnect();
        else if (options.force) await current.kill();
        else await current.close();
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

  private operationContext(
    page: Page,
    model: ModelConfiguration | undefined,
    signal: AbortSignal,
    deadline: number | undefined,
  ): OperationContext {
    if (typeof model === "object") this.redactor.add(model.apiKey);
    return {
      page,
      caller: this.caller,
      log: this.log,
      redactor: this.redactor,
      model,
      domSettleTimeout: this.options.domSettleTimeout,
      selfHeal: this.options.selfHeal,
      signal,
      deadline,
    };
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
   * Performs an action on the page: from an instruction (the model chooses the element and the
   * method), or from an Action (observe's result; no model call).
   */
  async act(input: string | Action, options: Cancellable<ActOptions> = {}): Promise<ActResult> {
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
    const result = await withDeadline("act()", options.timeout, options.signal, (signal, deadline) => {
      if (this.remote) {
        return this.remote.act(input, options.variables, { ...this.remoteOptions(options, page), signal });
      }
      const ctx = this.operationContext(page, options.model, signal, deadline);
      return typeof input === "string"
        ? actWithModel(ctx, { instruction: input, variables: options.variables, cache: this.cache })
        : actOnAction(ctx, input, options.variables);
    });
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
  async observe(
    instruction?: string | Cancellable<ObserveOptions>,
    options: Cancellable<ObserveOptions> = {},
  ): Promise<Action[]> {
    if (typeof instruction === "object" && instruction !== null) {
      options = instruction;
      instruction = undefined;
    }
    const page = await this.targetPage(options.page, "observe()");
    registerVariables(options.variables, this.redactor);
    const params = {
      instruction: instruction as string | undefined,
      variables: options.variables,
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
    };
    const actions = await withDeadline("observe()", options.timeout, options.signal, (signal, deadline) =>
      this.remote
        ? this.remote.observe(params.instruction, params, { ...this.remoteOptions(options, page), signal })
        : observeWithModel(this.operationContext(page, options.model, signal, deadline), params),
    );
    this.historyRecorder.record("observe", { instruction, options: this.recordable(options) }, actions);
    return actions;
  }

  /** The page outline, with no model call. */
  extract(options?: Cancellable<ExtractOptions>): Promise<ExtractPageTextResult>;
  /** A text answer about the page. */
  extract(instruction: string, options?: Cancellable<ExtractOptions>): Promise<ExtractTextResult>;
  /** Data from the page, shaped by a zod (v4 or v3) or JSON Schema. */
  extract<S extends SchemaInput>(
    instruction: string,
    schema: S,
    options?: Cancellable<ExtractOptions>,
  ): Promise<InferSchema<S>>;
  async extract(
    first?: string | Cancellable<ExtractOptions>,
    second?: SchemaInput | Cancellable<ExtractOptions>,
    third?: Cancellable<ExtractOptions>,
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
    const options: Cancellable<ExtractOptions> =
      (schema ? third : ((second as Cancellable<ExtractOptions> | undefined) ?? third)) ?? {};
    const page = await this.targetPage(options.page, "extract()");
    const params = {
      selector: options.selector,
      ignoreSelectors: options.ignoreSelectors,
      screenshot: options.screenshot,
    };
    const data = await withDeadline("extract()", options.timeout, options.signal, (signal, deadline) =>
      this.remote
        ? this.remote.extract(first, schema, params, { ...this.remoteOptions(options, page), signal })
        : extractWithModel(this.operationContext(page, options.model, signal, deadline), {
            instruction: first,
            schema,
            ...params,
          }),
    );
    this.historyRecorder.record("extract", { instruction: first, options: this.recordable(options) }, data);
    return data;
  }

  private async pageText(options: Cancellable<ExtractOptions>): Promise<ExtractPageTextResult> {
    const page = await this.targetPage(options.page, "extract()");
    const pageText = await withDeadline("extract()", options.timeout, options.signal, async (signal) => {
      if (this.remote) {
        const params = { selector: options.selector, ignoreSelectors: options.ignoreSelectors };
        const remote = await this.remote.extract(undefined, undefined, params, {
          ...this.remoteOptions(options, page),
          signal,
        });
        return (remote as ExtractPageTextResult).pageText;
      }
      const snapshot = await takeSnapshot(page, {
        selector: options.selector,
        ignoreSelectors: options.ignoreSelectors,
        tokenBudget: false,
        domSettleTimeout: this.options.domSettleTimeout,
      });
      return snapshot.text;
    });
    const result = { pageText };
    this.historyRecorder.record("extract", { options: this.recordable(options) }, result);
    return result;
  }

  /** Per-call options of a REMOTE operation: the target page travels as its frame id. */
  private remoteOptions(
    options: { model?: ModelConfiguration; timeout?: number; serverCache?: boolean },
    page: Page,
  ) {
    return {
      model: options.model,
      timeout: options.timeout,
      serverCache: options.serverCache,
      // Always name the tab: the service's active page may differ from this client's.
      frameId: page.targetId,
    };
  }

  /**
   * Tokens and inference time of every model call so far, per operation and in total (spec 2.12).
   * In REMOTE mode they come from the service's record of the session.
   */
  get metrics(): Promise<DeckhandMetrics> {
    if (this.remote) return this.remote.metrics();
    return Promise.resolve(this.metricsRecorder.snapshot());
  }

  // ---------- properties ----------

  private ready(what: string): Browser {
    if (this.state !== "ready" || !this.browser) {
      if (this.state === "closing" || this.state === "closed")
        throw new ServiceNotInitializedError(`${what} (after close())`);
      throw new ServiceNotInitializedError(what);
    }
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
    return this.remote?.sessionId;
  }

  /** A shareable link to the remote session; undefined for local runs. */
  get sessionUrl(): string | undefined {
    return this.remote?.sessionUrl;
  }

  /** A direct debugger link; undefined for local runs. */
  get debugUrl(): string | undefined {
    return this.remote?.debugUrl;
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

/** Whether extract()'s second argument is a schema (zod, or JSON Schema) rather than options. */
function isSchema(value: unknown): boolean {
  if (!value || typeof value !== "object") return false;
  if (isZod4Schema(value) || isZod3Schema(value)) return true;
  return ["type", "properties", "items", "$schema", "anyOf", "oneOf", "allOf", "$ref", "enum"].some(
    (k) => k in value,
  );
}

/** A browser-level WebSocket URL from a ws:// URL or an http://host:port DevTools address. */
async function browserEndpoint(cdpUrl: string): Promise<string> {
  if (cdpUrl.startsWith("ws")) return cdpUrl;
  const url = new URL("/json/version", cdpUrl);
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new ServiceInitError(
      `No browser answered at ${cdpUrl} (${(error as Error).message}). Is it running with --remote-debugging-port?`,
    );
  }
  if (!response.ok)
    throw new ServiceInitError(`${url} answered ${response.status}; is it a Chrome DevTools address?`);
  const body = (await response.json()) as { webSocketDebuggerUrl?: string };
  if (!body.webSocketDebuggerUrl) throw new ServiceInitError(`${url} did not name a webSocketDebuggerUrl.`);
  return body.webSocketDebuggerUrl;
}
