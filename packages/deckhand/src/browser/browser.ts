// One browser over one connection (its DevTools WebSocket, or the pipe of a browser launched
// without a port). Targets attach automatically (and paused, so that each is set
// up before its first script runs): tabs become Pages in their Context, out-of-process iframes
// become frames of their Page.

import type { Protocol } from "devtools-protocol";
import { ServiceBrowserClosedError, ServiceTimeoutError } from "../errors.ts";
import { CdpConnection, type CdpSession } from "./cdp/connection.ts";
import type { CdpTransport } from "./cdp/transport.ts";
import { Context } from "./context.ts";
import type { InjectedScript } from "./injected-script.ts";
import type { LaunchedChrome } from "./launch.ts";
import { Page, type PageSettings } from "./page.ts";
import { type AnyPage, resolvePage } from "./third-party.ts";

export interface BrowserOptions extends PageSettings {
  ignoreHTTPSErrors?: boolean;
  connectTimeoutMs?: number;
  /** Sent with the WebSocket handshake (e.g. `x-platform-api-key` for the service's CDP proxy). */
  headers?: Record<string, string>;
}

export interface ContextOptions extends PageSettings {
  proxy?: { server: string; bypass?: string };
}

export class Browser {
  readonly connection: CdpConnection;
  /** Present when Deckhand started this browser (and so may stop it). */
  readonly launched: LaunchedChrome | undefined;
  private readonly options: BrowserOptions;
  private readonly contextMap = new Map<string, Context>();
  private readonly contextSettings = new Map<Context, PageSettings>();
  private defaultCtx!: Context;
  private defaultContextId: string | undefined;
  /** Settles once the default context's id is known (or could not be asked). */
  private contextsKnown: Promise<void> = Promise.resolve();
  private readonly pagesByTarget = new Map<string, Page>();
  private readonly attaching = new Map<string, Promise<Page | undefined>>();
  private readonly pageWaiters = new Map<string, ((page: Page) => void)[]>();
  /** @internal In-page scripts installed in every document as it appears (see prewarm). */
  prewarmed: readonly InjectedScript<unknown>[] = [];
  /** @internal The tab that receives input (the newest tab, or the last one brought to front). */
  frontTargetId: string | undefined;

  private constructor(
    connection: CdpConnection,
    options: BrowserOptions,
    launched: LaunchedChrome | undefined,
  ) {
    this.connection = connection;
    this.options = options;
    this.launched = launched;
  }

  /**
   * Connects to a browser and attaches to its pages: by its DevTools WebSocket URL, over a
   * transport opened already (e.g. a `WebSocketTransport` with options of its own), or a browser
   * `launchChrome` started (over its pipe, whether or not it also opened a port for other tools;
   * over its WebSocket for a keepAlive launch, which has no pipe). `launched` with a URL: the
   * browser this process started there (close()
   * stops it).
   */
  static async connect(
    endpoint: string | LaunchedChrome | CdpTransport,
    options: BrowserOptions = {},
    launched?: LaunchedChrome,
  ): Promise<Browser> {
    let connection: CdpConnection;
    if (typeof endpoint !== "string" && "send" in endpoint) {
      connection = new CdpConnection(endpoint, (endpoint as { url?: string }).url);
    } else if (typeof endpoint !== "string") {
      launched = endpoint;
      if (endpoint.pipe) {
        endpoint.pipe.ref();
        // The WebSocket URL, when there is one, is for other tools (connectURL).
        connection = new CdpConnection(endpoint.pipe, endpoint.wsEndpoint);
      } else if (endpoint.wsEndpoint) {
        connection = await CdpConnection.connect(
          endpoint.wsEndpoint,
          options.connectTimeoutMs,
          options.headers,
        );
      } else {
        throw new ServiceBrowserClosedError(
          "The launched browser has neither a DevTools pipe nor a WebSocket.",
        );
      }
    } else {
      connection = await CdpConnection.connect(endpoint, options.connectTimeoutMs, options.headers);
    }
    const browser = new Browser(connection, options, launched);
    try {
      await browser.start();
    } catch (error) {
      connection.close();
      throw error;
    }
    return browser;
  }

  private async start(): Promise<void> {
    const root = this.connection.root;
    this.defaultCtx = new Context(this, undefined);
    this.contextSettings.set(this.defaultCtx, this.options);
    root.on("Target.attachedToTarget", (e) => this.targetAttached(e));
    root.on("Target.detachedFromTarget", (e) => this.targetDetached(e));
    // Sent together (the browser answers in order, so no round trip waits for another): which
    // context is the default (pages announced from now on wait for this, so that each lands in
    // the default context rather than one made up for an id not yet known), auto-attach, and the
    // pages already open.
    this.contextsKnown = root
      .send("Target.getBrowserContexts")
      .then((contexts) => {
        this.defaultContextId = contexts.defaultBrowserContextId;
      })
      .catch(() => undefined);
    const setup: Promise<unknown>[] = [
      this.contextsKnown,
      root.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
    ];
    if (this.options.ignoreHTTPSErrors)
      setup.push(root.send("Security.setIgnoreCertificateErrors", { ignore: true }));
    const listed = root.send("Target.getTargets").catch(() => ({ targetInfos: [] }));
    await Promise.all(setup);
    // Existing pages were announced before setAutoAttach answered; let their setup finish. Under
    // heavy load an announcement can come later still, so wait for every page the browser lists.
    const { targetInfos } = await listed;
    const pages = targetInfos.filter((t) => t.type === "page" && !this.pagesByTarget.has(t.targetId));
    await Promise.all([
      ...this.attaching.values(),
      ...pages.map((t) => this.waitForPage(t.targetId, 5_000).catch(() => undefined)),
    ]);
  }

  /**
   * Installs these in-page scripts in every document of this browser as soon as it appears (and
   * now in the documents already there), so that the first operation on a new page does not wait
   * for their compile. For the scripts every operation uses.
   */
  prewarm(scripts: readonly InjectedScript<unknown>[]): void {
    this.prewarmed = scripts;
    for (const page of this.pagesByTarget.values()) for (const frame of page.frames()) frame.prewarm();
  }

  /** The DevTools WebSocket URL; undefined for a browser driven over its pipe (it has no TCP endpoint). */
  get wsEndpoint(): string | undefined {
    return this.connection.url;
  }

  isConnected(): boolean {
    return !this.connection.closed;
  }

  onDisconnected(handler: () => void): () => void {
    this.connection.on("close", handler);
    return () => this.connection.off("close", handler);
  }

  defaultContext(): Context {
    return this.defaultCtx;
  }

  contexts(): Context[] {
    return [this.defaultCtx, ...this.contextMap.values()];
  }

  /** An isolated context (own cookies and storage), e.g. one per service session. */
  async newContext(options: ContextOptions = {}): Promise<Context> {
    const { browserContextId } = await this.connection.root.send("Target.createBrowserContext", {
      disposeOnDetach: true,
      ...(options.proxy ? { proxyServer: options.proxy.server, proxyBypassList: options.proxy.bypass } : {}),
    });
    const context = new Context(this, browserContextId);
    this.contextMap.set(browserContextId, context);
    this.contextSettings.set(context, { ...this.options, ...options });
    return context;
  }

  /** @internal */
  forgetContext(context: Context): void {
    if (context.id) this.contextMap.delete(context.id);
    this.contextSettings.delete(context);
  }

  /**
   * This browser's Page for any page object a caller may hold: one of ours, or a Playwright,
   * Puppeteer or Patchright page attached to the same browser (see third-party.ts).
   */
  pageOf(page: AnyPage): Promise<Page> {
    return resolvePage(this, page);
  }

  pageByTargetId(targetId: string): Page | undefined {
    return this.pagesByTarget.get(targetId);
  }

  /** Resolves once the tab with this target id is attached and set up. */
  async waitForPage(targetId: string, timeoutMs = 10_000): Promise<Page> {
    const ready = this.pagesByTarget.get(targetId);
    if (ready) return ready;
    const pending = this.attaching.get(targetId);
    if (pending) {
      const page = await pending;
      if (page) return page;
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new ServiceTimeoutError(`waiting for the new tab ${targetId}`, timeoutMs));
      }, timeoutMs);
      const list = this.pageWaiters.get(targetId) ?? [];
      list.push((page) => {
        clearTimeout(timer);
        resolve(page);
      });
      this.pageWaiters.set(targetId, list);
    });
  }

  private contextFor(browserContextId: string | undefined): Context {
    if (!browserContextId || browserContextId === this.defaultContextId) return this.defaultCtx;
    let context = this.contextMap.get(browserContextId);
    if (!context) {
      // A context someone else made on this browser (e.g. another automation library).
      context = new Context(this, browserContextId);
      this.contextMap.set(browserContextId, context);
      this.contextSettings.set(context, this.options);
    }
    return context;
  }

  private targetAttached(event: Protocol.Target.AttachedToTargetEvent): void {
    const { targetInfo, sessionId } = event;
    // The browser target is never auto-attached: this is a session someone opened on this
    // connection with Target.attachToBrowserTarget (a CDP proxy's channel), and it is theirs.
    if (targetInfo.type === "browser") return;
    const session = this.connection.adoptSession(sessionId, targetInfo.type);
    if (targetInfo.type !== "page") {
      this.releaseTarget(session, sessionId);
      return;
    }
    const attach = this.contextsKnown
      .then(() => {
        const context = this.contextFor(targetInfo.browserContextId);
        const page = new Page(
          context,
          targetInfo.targetId,
          session,
          targetInfo.openerId,
          this.contextSettings.get(context) ?? this.options,
        );
        page.mainFrame().url = targetInfo.url;
        const setup = page.attachSession(session);
        const added = () => {
          if (session.detached) return undefined;
          this.pagesByTarget.set(targetInfo.targetId, page);
          // A tab that opens comes to the front; of the tabs found at start, the last one is in front.
          this.frontTargetId = targetInfo.targetId;
          context.addPage(page);
          for (const waiter of this.pageWaiters.get(targetInfo.targetId) ?? []) waiter(page);
          this.pageWaiters.delete(targetInfo.targetId);
          return page;
        };
        // A tab that was already running (the first tab of a browser just started) is usable at
        // once: its set-up commands go first on its session, and the browser answers a session's
        // commands in order, so every later call waits behind them. Waiting for the set-up here
        // would wait for the tab's renderer to start. A new tab attaches paused, and is handed
        // out once it is set up and let run.
        if (!event.waitingForDebugger) {
          setup.catch(() => page.markClosed());
          return added();
        }
        return setup.then(added);
      })
      .catch(() => undefined)
      .finally(() => this.attaching.delete(targetInfo.targetId));
    this.attaching.set(targetInfo.targetId, attach);
  }

  private releaseTarget(session: CdpSession, sessionId: string): void {
    session
      .send("Runtime.runIfWaitingForDebugger")
      .catch(() => undefined)
      .finally(() =>
        this.connection.root.send("Target.detachFromTarget", { sessionId }).catch(() => undefined),
      );
  }

  private targetDetached(event: Protocol.Target.DetachedFromTargetEvent): void {
    const targetId =
      event.targetId ??
      [...this.pagesByTarget.values()].find((p) => p.session.id === event.sessionId)?.targetId;
    if (!targetId) return;
    const page = this.pagesByTarget.get(targetId);
    if (!page) return;
    this.pagesByTarget.delete(targetId);
    page.markClosed();
  }

  /**
   * Closes the browser if Deckhand launched it, or just disconnects from one it attached to. A
   * browser on a temporary profile is killed at once (nothing in it is worth a clean shutdown) and
   * its profile removed; one on the caller's own profile is asked to close, so that it writes what
   * the profile keeps (cookies), and killed only if it does not exit within `timeoutMs`. Either way
   * no process of it is left when this resolves.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    const launched = this.launched;
    if (!launched) {
      this.disconnect();
      return;
    }
    if (!launched.temporaryProfile && !launched.hasExited()) {
      await this.connection.root.send("Browser.close").catch(() => undefined);
      await launched.browserExited(options.timeoutMs ?? 5_000);
    }
    this.disconnect();
    await launched.kill();
  }

  /** Kills a launched browser at once (no graceful shutdown). */
  async kill(): Promise<void> {
    this.disconnect();
    await this.launched?.kill();
  }

  /** Drops the connection; the browser keeps running, unless it is driven over its pipe (its lifeline). */
  disconnect(): void {
    this.connection.close();
  }
}
