// The LOCAL driver: launches Chromium (or attaches to one, or works in a context it was given) and
// runs act, observe and extract in this process, with the model called from here.

import { runAgent } from "../agent/run.ts";
import type { AgentResult, AgentStreamResult } from "../agent/types.ts";
import { Browser } from "../browser/browser.ts";
import type { Context } from "../browser/context.ts";
import { browserEndpoint } from "../browser/endpoint.ts";
import { domRuntime } from "../browser/in-page.ts";
import { DEFAULT_VIEWPORT, launchChrome } from "../browser/launch.ts";
import type { Page } from "../browser/page.ts";
import { ActionCache } from "../cache/action-cache.ts";
import { callLogText, type Deadline, withoutCallLog } from "../deadline.ts";
import type {
  ActCall,
  AgentCall,
  Driver,
  ExtractCall,
  ObserveCall,
  PageTextCall,
  SessionInfo,
} from "../driver.ts";
import { ServiceInitError } from "../errors.ts";
import { ModelCaller } from "../llm/caller.ts";
import type { DeckhandLog } from "../log.ts";
import type { MetricsRecorder } from "../metrics.ts";
import { actOnAction } from "../ops/act-action.ts";
import { actWithModel } from "../ops/act-model.ts";
import type { OperationContext } from "../ops/context.ts";
import { extract } from "../ops/extract.ts";
import { observe } from "../ops/observe.ts";
import { ObservedTargets } from "../ops/observed.ts";
import type { ResolvedOptions } from "../options.ts";
import { ReportRecorder } from "../report/report-recorder.ts";
import { outlineScript } from "../snapshot/in-page.ts";
import { takeSnapshot } from "../snapshot/snapshot.ts";
import {
  type Action,
  type ActResult,
  CALL_LOG,
  type DeckhandMetrics,
  type ModelConfiguration,
  RECORDED_STEPS,
} from "../types.ts";

/**
 * Longest an act waits, after its input, for a navigation that input started to commit (a server
 * slow to answer): a commit normally follows within a round trip to the site.
 */
const NAVIGATION_COMMIT_WAIT_MS = 10_000;

export class LocalDriver implements Driver {
  readonly session: SessionInfo = { sessionId: undefined, sessionUrl: undefined, debugUrl: undefined };
  private readonly options: ResolvedOptions;
  private readonly log: DeckhandLog;
  private readonly metricsRecorder: MetricsRecorder;
  private readonly caller: ModelCaller;
  private readonly cache: ActionCache | undefined;
  /** What the Actions observe returned pointed at (act(action) checks its target against it). */
  private readonly observed = new ObservedTargets();
  /** A context of someone else's browser to work in (Deckhand.inContext), instead of a browser of our own. */
  private readonly givenContext: Context | undefined;
  private browser: Browser | undefined;
  /** The run's report (`report` option). */
  readonly report: ReportRecorder | undefined;

  constructor(options: ResolvedOptions, log: DeckhandLog, metrics: MetricsRecorder, context?: Context) {
    this.options = options;
    this.log = log;
    this.metricsRecorder = metrics;
    this.givenContext = context;
    this.caller = new ModelCaller({
      model: options.model,
      llmClient: options.llmClient,
      systemPrompt: options.systemPrompt,
      log,
      metrics,
      logInferenceToFile: options.logInferenceToFile,
    });
    const store = options.actionCache ?? options.cacheDir;
    this.cache = store ? new ActionCache(store, log) : undefined;
    this.report =
      options.report === undefined
        ? undefined
        : new ReportRecorder({
            dir: options.report,
            metrics: () => this.metrics(),
            redact: (text) => log.redactor.redact(text),
          });
  }

  async start(): Promise<{ browser: Browser; context: Context }> {
    this.browser = this.givenContext ? this.givenContext.browser : await this.launchOrAttach();
    // Every operation reads pages with these: each new document gets them as it appears.
    this.browser.prewarm([domRuntime, outlineScript]);
    return { browser: this.browser, context: this.givenContext ?? this.browser.defaultContext() };
  }

  private async launchOrAttach(): Promise<Browser> {
    const launch = this.options.localBrowserLaunchOptions ?? {};
    const proxy = launch.proxy;
    // A browser of the caller's (cdpUrl) keeps its own window size unless a viewport is asked for.
    const viewport = launch.viewport ?? (launch.cdpUrl ? undefined : DEFAULT_VIEWPORT);
    const settings = {
      viewport,
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
      windowSize: viewport,
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

  async abandon(error: unknown): Promise<Error> {
    if (this.givenContext) await this.givenContext.close().catch(() => undefined);
    else if (this.browser) await this.browser.close().catch(() => undefined);
    if (error instanceof ServiceInitError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    return new ServiceInitError(`Deckhand could not start: ${this.log.redactor.redact(reason)}`, {
      cause: error,
    });
  }

  private context(page: Page, model: ModelConfiguration | undefined, deadline: Deadline): OperationContext {
    if (typeof model === "object") this.log.redactor.add(model.apiKey);
    return {
      page,
      caller: this.caller,
      log: this.log,
      redactor: this.log.redactor,
      model,
      domSettleTimeout: this.options.domSettleTimeout,
      selfHeal: this.options.selfHeal,
      explicitInstructions: this.options.explicitInstructions,
      deadline,
      observed: this.observed,
    };
  }

  /**
   * Runs an operation so that what it throws says nothing the model was not shown either: an
   * error's message can quote the page (what covers an element), where a variable's value is.
   */
  private async masked<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof Error) error.message = this.log.redactor.mask(error.message);
      throw error;
    }
  }

  async act(page: Page, call: ActCall, deadline: Deadline): Promise<ActResult> {
    const ctx = this.context(page, call.model, deadline);
    const since = Date.now();
    const done = await this.masked(() =>
      typeof call.input === "string"
        ? actWithModel(ctx, { instruction: call.input, variables: call.variables, cache: this.cache })
        : actOnAction(ctx, call.input, call.variables),
    );
    const result = await this.afterNavigation(ctx.page, since, deadline, done);
    // What the result says is written from the page (element names, errors): a variable's value
    // the page shows appears as its %name%, as it did to the model.
    const mask = (text: string) => this.log.redactor.mask(text);
    // A failed act says what it tried: its message ends with the operation's call log (masked as
    // it was written), in place of the part of it a failure's own message carried.
    const callLog = result.success ? [] : deadline.callLog.lines();
    const masked: ActResult = {
      ...result,
      message:
        callLog.length > 0
          ? withoutCallLog(mask(result.message)) + callLogText(callLog)
          : mask(result.message),
      actionDescription: mask(result.actionDescription),
      ...(result.actions
        ? { actions: result.actions.map((a) => ({ ...a, description: mask(a.description) })) }
        : {}),
    };
    // The recorded steps (not an enumerable field, so not copied above) go on to the facade.
    const steps = (done as { [RECORDED_STEPS]?: unknown })[RECORDED_STEPS];
    if (steps) Object.defineProperty(masked, RECORDED_STEPS, { value: steps, enumerable: false });
    if (callLog.length > 0) Object.defineProperty(masked, CALL_LOG, { value: callLog, enumerable: false });
    return masked;
  }

  /**
   * An act whose input started a navigation of the page returns once it has committed, so that
   * page.url() is the new document's at once (as after goto); one that did not commit says so.
   */
  private async afterNavigation(
    page: Page,
    since: number,
    deadline: Deadline,
    result: ActResult,
  ): Promise<ActResult> {
    if (!result.success || deadline.aborted) return result;
    const navigation = await page.awaitInputNavigation(since, deadline, NAVIGATION_COMMIT_WAIT_MS);
    if (!navigation || navigation.state === "committed") return result;
    const note =
      navigation.state === "pending"
        ? `The page started a navigation to ${navigation.url} that had not committed after ` +
          `${NAVIGATION_COMMIT_WAIT_MS / 1000} s; page.url() still shows the page before it.`
        : `The page asked for a navigation to ${navigation.url} that did not commit (no new document: an ` +
          "empty response, a download, or the page cancelled it).";
    this.log.info("act", this.log.redactor.mask(note));
    return { ...result, message: `${result.message} ${note}` };
  }

  observe(page: Page, call: ObserveCall, deadline: Deadline): Promise<Action[]> {
    return this.masked(() =>
      observe(this.context(page, call.model, deadline), {
        instruction: call.instruction,
        variables: call.variables,
        selector: call.selector,
        ignoreSelectors: call.ignoreSelectors,
      }),
    );
  }

  extract(page: Page, call: ExtractCall, deadline: Deadline): Promise<unknown> {
    return this.masked(() =>
      extract(this.context(page, call.model, deadline), {
        instruction: call.instruction,
        schema: call.schema,
        selector: call.selector,
        ignoreSelectors: call.ignoreSelectors,
        screenshot: call.screenshot,
      }),
    );
  }

  agentExecute(page: Page, call: AgentCall, deadline: Deadline): Promise<AgentResult | AgentStreamResult> {
    return runAgent({
      host: { ...call.host, cacheStore: this.cache?.store },
      page,
      config: call.config,
      options: call.options,
      deadline,
    });
  }

  async pageText(page: Page, call: PageTextCall, deadline: Deadline): Promise<string> {
    const snapshot = await takeSnapshot(page, {
      selector: call.selector,
      ignoreSelectors: call.ignoreSelectors,
      tokenBudget: false,
      domSettleTimeout: this.options.domSettleTimeout,
      deadline,
    });
    // The page as a model would see it: a variable's value the page shows is its %name%.
    return this.log.redactor.mask(snapshot.text);
  }

  metrics(): Promise<DeckhandMetrics> {
    return Promise.resolve(this.metricsRecorder.snapshot());
  }

  async close(browser: Browser | undefined, force: boolean): Promise<void> {
    if (!browser) return;
    if (this.givenContext) {
      // The browser is shared: only this instance's context goes (unless it is to be kept).
      if (!this.options.keepAlive) await this.givenContext.close();
    } else if (this.options.keepAlive || !browser.launched) browser.disconnect();
    else if (force) await browser.kill();
    else await browser.close();
  }
}
