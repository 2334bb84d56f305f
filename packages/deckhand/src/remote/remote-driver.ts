// The REMOTE driver: a session on the Deckhand service. Operations go over HTTP (remote-session.ts),
// the page API over the service's CDP proxy, so `page.goto`, locators and screenshots work as in
// LOCAL mode. The operation's deadline travels as the request's signal (and `timeout` in its body).

import type { AgentResult } from "../agent/types.ts";
import type { Browser } from "../browser/browser.ts";
import type { Context } from "../browser/context.ts";
import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import type {
  ActCall,
  AgentCall,
  CallOptions,
  Driver,
  ExtractCall,
  ObserveCall,
  PageTextCall,
  SessionInfo,
} from "../driver.ts";
import { ServiceError, ServiceInitError, ServiceInvalidArgumentError } from "../errors.ts";
import type { ExportScriptOptions } from "../export/script.ts";
import type { DeckhandLog } from "../log.ts";
import type { ResolvedOptions } from "../options.ts";
import type { Action, ActResult, DeckhandMetrics, ExtractPageTextResult } from "../types.ts";
import { type RemoteCallOptions, RemoteSession } from "./remote-session.ts";

export class RemoteDriver implements Driver {
  private readonly remote: RemoteSession;
  private readonly options: ResolvedOptions;
  private readonly log: DeckhandLog;
  private browser: Browser | undefined;
  /** A REMOTE session's report is the page at its sessionUrl (the `report` option is LOCAL only). */
  readonly report = undefined;

  constructor(options: ResolvedOptions, log: DeckhandLog) {
    this.options = options;
    this.log = log;
    this.remote = new RemoteSession(options, log);
  }

  get session(): SessionInfo {
    return {
      sessionId: this.remote.sessionId,
      sessionUrl: this.remote.sessionUrl,
      debugUrl: this.remote.debugUrl,
    };
  }

  async start(): Promise<{ browser: Browser; context: Context }> {
    this.browser = await this.remote.start();
    return { browser: this.browser, context: this.browser.defaultContext() };
  }

  async abandon(error: unknown): Promise<Error> {
    this.browser?.disconnect();
    // A session this instance started (not one it came to resume) is ended again.
    const missing = error instanceof ServiceError && error.code === "SESSION_NOT_FOUND";
    if (!missing && !this.options.sessionId && this.remote.sessionId)
      await this.remote.end().catch(() => undefined);
    if (error instanceof ServiceError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    return new ServiceInitError(`Deckhand could not start: ${this.log.redactor.redact(reason)}`, {
      cause: error,
    });
  }

  /** Per-call options of an operation: the target page travels as its frame id. */
  private callOptions(page: Page, call: CallOptions, deadline: Deadline): RemoteCallOptions {
    return {
      model: call.model,
      timeout: call.timeout,
      serverCache: call.serverCache,
      // Always name the tab: the service's active page may differ from this client's.
      frameId: page.targetId,
      signal: deadline.signal,
    };
  }

  async act(page: Page, call: ActCall, deadline: Deadline): Promise<ActResult> {
    const result = await this.remote.act(call.input, call.variables, this.callOptions(page, call, deadline));
    // The service returns once a navigation the act started has committed; this connection to the
    // page may not have had the commit's event yet, and page.url() must say where the page is now.
    if (result.success) await deadline.race(page.syncMainFrame()).catch(() => undefined);
    return result;
  }

  observe(page: Page, call: ObserveCall, deadline: Deadline): Promise<Action[]> {
    return this.remote.observe(call.instruction, call, this.callOptions(page, call, deadline));
  }

  extract(page: Page, call: ExtractCall, deadline: Deadline): Promise<unknown> {
    return this.remote.extract(call.instruction, call.schema, call, this.callOptions(page, call, deadline));
  }

  /**
   * The run happens on the service. What cannot cross the wire (functions, clients, schemas the
   * service would have to validate, a stream) is a clear error before any request.
   */
  async agentExecute(page: Page, call: AgentCall, deadline: Deadline): Promise<AgentResult> {
    const { config, options } = call;
    const local = [
      config.tools && Object.keys(config.tools).length ? "agent tools (config.tools)" : "",
      config.integrations?.length ? "MCP integrations (config.integrations)" : "",
      config.stream ? "stream: true" : "",
      options.callbacks && Object.keys(options.callbacks).length ? "callbacks" : "",
      options.output ? "output" : "",
      options.excludeTools?.length ? "excludeTools" : "",
      options.messages?.length ? "messages" : "",
    ].filter(Boolean);
    if (local.length)
      throw new ServiceInvalidArgumentError(
        `agent().execute() in REMOTE mode cannot use ${local.join(", ")}: the run happens on the service and ` +
          "these live in this process. Run the agent in LOCAL mode to use them.",
      );
    const data = await this.remote.agentExecute(
      config,
      {
        instruction: options.instruction,
        ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
        ...(options.toolTimeout !== undefined ? { toolTimeout: options.toolTimeout } : {}),
        ...(options.highlightCursor !== undefined ? { highlightCursor: options.highlightCursor } : {}),
        ...(options.variables ? { variables: options.variables } : {}),
      },
      { ...this.callOptions(page, {}, deadline), serverCache: this.options.serverCache },
    );
    return data.result as unknown as AgentResult;
  }

  async pageText(page: Page, call: PageTextCall, deadline: Deadline): Promise<string> {
    const result = await this.remote.extract(
      undefined,
      undefined,
      { selector: call.selector, ignoreSelectors: call.ignoreSelectors },
      this.callOptions(page, call, deadline),
    );
    return (result as ExtractPageTextResult).pageText;
  }

  metrics(): Promise<DeckhandMetrics> {
    return this.remote.metrics();
  }

  exportScript(options: ExportScriptOptions): Promise<string> {
    return this.remote.exportScript(options);
  }

  async close(browser: Browser | undefined): Promise<void> {
    browser?.disconnect();
    if (this.options.keepAlive) return;
    await this.remote
      .end()
      .catch((error: unknown) =>
        this.log.error("remote", `ending the session failed: ${(error as Error).message}`),
      );
  }
}
