// A tab. The page owns its main session and the sessions of its out-of-process iframes and sets
// each up as it attaches; its collaborators keep the frame tree (frame-tree.ts), the lifecycle
// events (lifecycle.ts), the requests in flight (network.ts) and navigate (navigation.ts). It
// offers the user-facing API: navigation, evaluation, screenshots, input and locators.

import { writeFile } from "node:fs/promises";
import type { Protocol } from "devtools-protocol";
import type { Deadline } from "../deadline.ts";
import { type ServiceError, ServiceInvalidArgumentError, ServiceTargetClosedError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import type { Context } from "./context.ts";
import type { ElementTarget } from "./element-target.ts";
import type { Frame } from "./frame.ts";
import { FrameTree } from "./frame-tree.ts";
import { domRuntime } from "./in-page.ts";
import { installPageHooks } from "./injected/page-hooks.ts";
import type { ElementHandle } from "./injected-script.ts";
import { type ClickOptions, Keyboard, Mouse } from "./input.ts";
import { LifecycleWatcher, type WaitUntil } from "./lifecycle.ts";
import { Locator, type LocatorOptions } from "./locator.ts";
import { type GotoOptions, Navigator } from "./navigation.ts";
import { type InflightRequest, NetworkTracker } from "./network.ts";
import { type PageEventMap, type PageEventName, PageEvents } from "./page-events.ts";
import { checkHeaders, type InitScript, initScriptSource, SessionSettings } from "./session-settings.ts";

export type { WaitUntil } from "./lifecycle.ts";
export type { GotoOptions } from "./navigation.ts";
export type { InflightRequest } from "./network.ts";
export { ConsoleMessage, Dialog, type PageEventMap, type PageEventName } from "./page-events.ts";
export type { InitScript } from "./session-settings.ts";

export interface ScreenshotOptions {
  fullPage?: boolean;
  type?: "png" | "jpeg" | "webp";
  /** 0-100, jpeg and webp only. */
  quality?: number;
  clip?: { x: number; y: number; width: number; height: number };
  /** Also write the image to this file. */
  path?: string;
}

/** Settings every page of a browser gets when it attaches. */
export interface PageSettings {
  viewport?: { width: number; height: number };
  proxyCredentials?: { username: string; password: string };
}

const PAGE_HOOKS_SOURCE = `(${installPageHooks.toString()})();`;

export class Page {
  readonly targetId: string;
  readonly context: Context;
  /** The main frame's session. */
  readonly session: CdpSession;
  readonly keyboard: Keyboard;
  readonly mouse: Mouse;
  /** The tab that opened this one (window.open, target=_blank), if any. */
  readonly openerId: string | undefined;
  private readonly settings: PageSettings;
  private readonly sessions = new Set<CdpSession>();
  private readonly tree: FrameTree;
  private readonly lifecycle: LifecycleWatcher;
  private readonly network = new NetworkTracker();
  private readonly navigator: Navigator;
  private readonly closeHandlers = new Set<(page: Page) => void>();
  private readonly events = new PageEvents((event, error) =>
    process.emitWarning(`A page.on("${event}") listener threw: ${(error as Error)?.stack ?? String(error)}`),
  );
  private readonly sessionSettings: SessionSettings;
  /** The viewport setViewportSize chose, over the browser's setting. */
  private viewport: { width: number; height: number; deviceScaleFactor: number } | undefined;
  private closedError: ServiceError | undefined;
  /** @internal When Deckhand last sent an input event to this page (Date.now()); settle waits a little after it. */
  lastInputAt = 0;
  /** @internal Called after every navigation made through this page's API (for history). */
  onNavigate:
    | ((parameters: Record<string, unknown>, result: { url: string; status: number | null }) => void)
    | undefined;

  /** @internal Pages are made by the browser when their target attaches. */
  constructor(
    context: Context,
    targetId: string,
    session: CdpSession,
    openerId: string | undefined,
    settings: PageSettings,
  ) {
    this.context = context;
    this.targetId = targetId;
    this.session = session;
    this.openerId = openerId;
    this.settings = settings;
    this.keyboard = new Keyboard(session, () => {
      this.lastInputAt = Date.now();
      return this.ensureFront();
    });
    this.mouse = new Mouse(session, this.keyboard);
    this.lifecycle = new LifecycleWatcher(session);
    this.tree = new FrameTree(this, targetId, session, (frameId) => this.lifecycle.forget(frameId));
    this.navigator = new Navigator({
      session,
      lifecycle: this.lifecycle,
      mainFrame: () => this.mainFrame(),
      closedError: () => this.closedError,
      confirmCommit: (loaderId) => this.confirmCommit(loaderId),
      navigated: (parameters, result) => this.onNavigate?.(parameters, { url: this.url(), ...result }),
    });
    this.sessionSettings = new SessionSettings(() => this.sessions, {
      initScripts: () => this.context.initScripts(),
      headers: () => this.context.extraHTTPHeaders(),
    });
    this.onClose(() => this.events.emit("close", undefined));
  }

  // ---------- attaching sessions ----------

  /** @internal Wires a target session (the page's own or an OOPIF's) and lets it run. */
  async attachSession(session: CdpSession, oopifFrameId?: string): Promise<void> {
    this.sessions.add(session);
    if (oopifFrameId) this.tree.oopifAttached(oopifFrameId, session);
    this.listen(session);
    const setup: Promise<unknown>[] = [
      session.send("Page.enable"),
      session.send("Page.setLifecycleEventsEnabled", { enabled: true }),
      session.send("Runtime.enable"),
      session.send("Network.enable", {}),
      session.send("Inspector.enable").catch(() => undefined),
      session.send("Page.addScriptToEvaluateOnNewDocument", {
        source: PAGE_HOOKS_SOURCE,
        runImmediately: true,
      }),
      session.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
      ...this.sessionSettings.setup(session),
    ];
    if (this.settings.viewport && !oopifFrameId) {
      setup.push(
        session.send("Emulation.setDeviceMetricsOverride", {
          width: this.settings.viewport.width,
          height: this.settings.viewport.height,
          deviceScaleFactor: 0,
          mobile: false,
        }),
      );
    }
    if (this.settings.proxyCredentials) {
      setup.push(session.send("Fetch.enable", { handleAuthRequests: true, patterns: [{ urlPattern: "*" }] }));
    }
    const treeAsOf = this.tree.now();
    const tree = session.send("Page.getFrameTree");
    // Resume without waiting for the answers above: a session handles its commands in order, so
    // the hooks are in place before the first script runs anyway, and some targets (a tab opened
    // with noopener, e.g. a target=_blank link) do not answer Page.enable until they run.
    const resumed = session.send("Runtime.runIfWaitingForDebugger");
    try {
      const [{ frameTree }] = await Promise.all([tree, resumed, ...setup]);
      const parentId = oopifFrameId ? this.tree.parentIdOf(oopifFrameId) : undefined;
      this.tree.addTree(frameTree, session, parentId, treeAsOf);
    } catch (error) {
      // A frame or tab that went away while it was being set up is no error of ours.
      if (!session.detached) throw error;
    }
  }

  private listen(session: CdpSession): void {
    this.events.tap(session);
    this.tree.listen(session);
    this.lifecycle.listen(session);
    this.network.listen(session);
    session.on("Target.attachedToTarget", (e) => this.childAttached(session, e));
    session.on("Target.detachedFromTarget", (e) => this.childDetached(e.sessionId));
    session.on("Inspector.targetCrashed", () => this.crashed(session));
    if (this.settings.proxyCredentials) {
      const credentials = this.settings.proxyCredentials;
      session.on("Fetch.requestPaused", (e) => {
        session.send("Fetch.continueRequest", { requestId: e.requestId }).catch(() => undefined);
      });
      session.on("Fetch.authRequired", (e) => {
        const response =
          e.authChallenge.source === "Proxy"
            ? { response: "ProvideCredentials" as const, ...credentials }
            : { response: "Default" as const };
        session
          .send("Fetch.continueWithAuth", { requestId: e.requestId, authChallengeResponse: response })
          .catch(() => undefined);
      });
    }
  }

  private childAttached(parent: CdpSession, event: Protocol.Target.AttachedToTargetEvent): void {
    const session = this.context.browser.connection.adoptSession(event.sessionId, event.targetInfo.type);
    if (event.targetInfo.type === "iframe") {
      this.attachSession(session, event.targetInfo.targetId).catch(() => undefined);
      return;
    }
    // Workers and the like: let them run, then leave them alone.
    session
      .send("Runtime.runIfWaitingForDebugger")
      .catch(() => undefined)
      .finally(() =>
        parent.send("Target.detachFromTarget", { sessionId: event.sessionId }).catch(() => undefined),
      );
  }

  private childDetached(sessionId: string): void {
    const session = [...this.sessions].find((s) => s.id === sessionId);
    if (!session) return;
    this.sessions.delete(session);
    this.tree.sessionDetached(session, this.sessions);
  }

  private crashed(session: CdpSession): void {
    if (session !== this.session) return;
    this.closedError = new ServiceTargetClosedError(
      `The page ${this.url()} crashed (its renderer process died). Open a new page with context.newPage().`,
    );
    this.context.browser.connection.failSession(this.session, this.closedError);
  }

  /** @internal The browser detached this page's target. */
  markClosed(): void {
    this.closedError ??= new ServiceTargetClosedError(`The page ${this.url()} was closed.`);
    this.tree.detachAll();
    for (const handler of [...this.closeHandlers]) handler(this);
    this.closeHandlers.clear();
  }

  onClose(handler: (page: Page) => void): () => void {
    this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
  }

  isClosed(): boolean {
    return this.closedError !== undefined;
  }

  private assertOpen(): void {
    if (this.closedError) throw this.closedError;
  }

  // ---------- frames ----------

  mainFrame(): Frame {
    return this.tree.main();
  }

  /** Every frame of the page: in-process, out-of-process, srcdoc and nested. */
  frames(): Frame[] {
    return this.tree.all();
  }

  frameById(id: string): Frame | undefined {
    return this.tree.get(id);
  }

  /**
   * The frame an <iframe> element (a handle in `parent`) displays, after waiting up to `waitMs`
   * for it to have a document (check `hasDocument`: it may still have none).
   */
  async contentFrame(parent: Frame, iframe: ElementHandle, waitMs = 5_000): Promise<Frame | undefined> {
    const { node } = await parent.session.send("DOM.describeNode", { objectId: iframe.objectId });
    if (!node.frameId) return undefined;
    const frame = this.tree.get(node.frameId);
    if (!frame) return undefined;
    if (waitMs > 0) await frame.executionContext(waitMs).catch(() => undefined);
    return frame;
  }

  /**
   * Converts a point in `frame`'s viewport to the top frame's viewport by adding the offset of each
   * iframe on the way up. With `checkCovered`, also checks that each iframe is not covered there;
   * with `reveal`, first scrolls each parent document until the point is in its view.
   */
  async toViewportPoint(
    frame: Frame,
    point: { x: number; y: number },
    checkCovered: boolean,
    reveal = false,
  ): Promise<{ ok: true; x: number; y: number } | { ok: false; reason: "covered"; detail: string }> {
    let { x, y } = point;
    let scrolled = false;
    for (let f = frame; f.parent; f = f.parent) {
      const parent = f.parent;
      const owner = await f.ownerElement();
      try {
        const offset = reveal
          ? await parent.invoke(domRuntime, "revealFramePoint", owner, x, y)
          : { ...(await parent.invoke(domRuntime, "frameContentOffset", owner)), scrolled: false };
        scrolled ||= offset.scrolled;
        x += offset.x;
        y += offset.y;
        if (checkCovered) {
          const blocker = await parent.invoke(domRuntime, "hits", owner, x, y);
          if (blocker) return { ok: false, reason: "covered", detail: `${blocker} (over the iframe)` };
        }
      } finally {
        void parent.release(owner);
      }
    }
    // The browser routes input to an out-of-process frame by where it was last drawn: after a
    // scroll, a click sent at once can still go by the old position and miss.
    if (scrolled) await this.mainFrame().invoke(domRuntime, "nextFrames");
    return { ok: true, x, y };
  }

  // ---------- navigation ----------

  /**
   * A navigation of the main frame reached its load state, but the frame tree may not have seen
   * it commit: the browser's first tab is handed out before its renderer starts (see
   * Browser.targetAttached), and a first navigation that commits in a new renderer before the
   * page agent there is enabled sends no Page.frameNavigated (seen under load, about one run in
   * ten: url() still said about:blank after goto). Then the frame tree is asked for; answers come
   * in order with the events, so what it says is the newest word.
   */
  private async confirmCommit(loaderId: string): Promise<void> {
    if (this.mainFrame().loaderId === loaderId) return;
    const { frameTree } = await this.session.send("Page.getFrameTree");
    if (frameTree.frame.loaderId !== this.mainFrame().loaderId)
      this.tree.adoptMainCommit(frameTree, this.session);
  }

  /**
   * @internal After Deckhand's input that began at `since` (Date.now()): when it made the main
   * frame ask for a navigation (a link, a form, a script setting location), waits until that
   * navigation commits, so that url() is the new document's, or ends without committing; for at
   * most `maxWaitMs` within `deadline`. The input's events come before the answer to one round trip
   * to the page (the renderer sends both, in order). Says how it went and where it was going.
   */
  async awaitInputNavigation(
    since: number,
    deadline: Deadline,
    maxWaitMs: number,
  ): Promise<{ url: string; state: "pending" | "committed" | "not committed" } | undefined> {
    if (this.closedError) return undefined;
    const main = () => this.mainFrame().id;
    try {
      await deadline.race(this.session.send("Page.getFrameTree"));
    } catch {
      if (deadline.aborted || this.closedError) return undefined;
    }
    let navigation = this.lifecycle.navigationSince(main(), since);
    if (navigation?.state === "pending") {
      deadline.log(`waiting for navigation to "${navigation.url}" to commit`);
      const wait = deadline.child("waiting for the navigation the action started", deadline.cap(maxWaitMs));
      try {
        while (navigation?.state === "pending" && !wait.aborted && !this.closedError) {
          const ended = this.lifecycle.navigationEnded(main(), wait.signal);
          navigation = this.lifecycle.navigationSince(main(), since);
          if (navigation?.state !== "pending") break;
          await ended;
          navigation = this.lifecycle.navigationSince(main(), since);
        }
      } finally {
        wait.dispose();
      }
    }
    return navigation;
  }

  /**
   * @internal Brings the main frame up to date with the page after someone else navigated it (the
   * service, for a REMOTE act): the frame tree the page answers with is the newest word, whether or
   * not this connection has had the commit's event yet.
   */
  async syncMainFrame(): Promise<void> {
    if (this.closedError) return;
    const { frameTree } = await this.session.send("Page.getFrameTree");
    if (frameTree.frame.loaderId !== this.mainFrame().loaderId)
      this.tree.adoptMainCommit(frameTree, this.session);
  }

  url(): string {
    return this.mainFrame().url;
  }

  async title(): Promise<string> {
    this.assertOpen();
    return this.mainFrame().evaluate<string>("document.title");
  }

  /** Navigates and waits for `waitUntil` (default load). Returns the main response's status, or null. */
  goto(url: string, options: GotoOptions = {}): Promise<number | null> {
    return this.navigator.goto(url, options);
  }

  reload(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.navigator.reload(options);
  }

  /** Goes back one history entry; null when there is none (or it stays in the same document). */
  goBack(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.navigator.goBack(options);
  }

  goForward(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.navigator.goForward(options);
  }

  /**
   * Waits until the current document of the main frame has reached `state`. The second argument
   * may be the timeout in milliseconds, as the reference library takes it.
   */
  waitForLoadState(
    state: WaitUntil = "load",
    options: number | Pick<GotoOptions, "timeout" | "signal" | "deadline"> = {},
  ): Promise<void> {
    return this.navigator.waitForLoadState(
      state,
      typeof options === "number" ? { timeout: options } : options,
    );
  }

  /**
   * Waits until an element matching `selector` (CSS, XPath or text=; `>>` crosses into frames;
   * shadow roots are reached) is in `state` (default "visible"); resolves true, or rejects with
   * ServiceTimeoutError after `timeout` ms (default 30000).
   */
  async waitForSelector(
    selector: string,
    options: {
      state?: "attached" | "detached" | "visible" | "hidden";
      timeout?: number;
      signal?: AbortSignal;
    } = {},
  ): Promise<boolean> {
    this.assertOpen();
    await this.deepLocator(selector).waitFor({ timeout: 30_000, ...options });
    return true;
  }

  /** Waits `ms` milliseconds. Prefer waiting for what you need (waitForSelector, waitForLoadState). */
  async waitForTimeout(ms: number): Promise<void> {
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
      throw new ServiceInvalidArgumentError(
        `waitForTimeout needs a number of milliseconds >= 0, got ${String(ms)}.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Requests in flight in this page and its frames (EventSource and WebSocket excluded). */
  inflightRequests(): InflightRequest[] {
    return this.network.requests();
  }

  /** @internal Navigations of this page's frames asked for within `maxAgeMs` and not committed yet. */
  pendingNavigations(maxAgeMs: number): number {
    return this.lifecycle.pendingNavigations(maxAgeMs);
  }

  // ---------- evaluation, screenshots ----------

  async evaluate<R = unknown, A = unknown>(
    fnOrExpression: string | ((arg: A) => R | Promise<R>),
    arg?: A,
  ): Promise<R> {
    this.assertOpen();
    return this.mainFrame().evaluate(fnOrExpression, arg);
  }

  async screenshot(options: ScreenshotOptions = {}): Promise<Buffer> {
    this.assertOpen();
    const type = options.type ?? typeFromPath(options.path) ?? "png";
    if (!["png", "jpeg", "webp"].includes(type)) {
      throw new ServiceInvalidArgumentError(
        `screenshot type must be png, jpeg or webp, not ${JSON.stringify(type)}.`,
      );
    }
    if (options.quality !== undefined) {
      if (type === "png")
        throw new ServiceInvalidArgumentError("screenshot quality applies to jpeg and webp only, not png.");
      if (!(options.quality >= 0 && options.quality <= 100)) {
        throw new ServiceInvalidArgumentError(`screenshot quality must be 0-100, got ${options.quality}.`);
      }
    }
    let clip: Protocol.Page.Viewport | undefined;
    if (options.fullPage) {
      if (options.clip) throw new ServiceInvalidArgumentError("screenshot takes fullPage or clip, not both.");
      const metrics = await this.session.send("Page.getLayoutMetrics");
      clip = {
        x: 0,
        y: 0,
        width: Math.ceil(metrics.cssContentSize.width),
        height: Math.ceil(metrics.cssContentSize.height),
        scale: 1,
      };
    } else if (options.clip) {
      const { x, y, width, height } = options.clip;
      if (!(width > 0 && height > 0))
        throw new ServiceInvalidArgumentError("screenshot clip needs a positive width and height.");
      clip = { x, y, width, height, scale: 1 };
    }
    const { data } = await this.session.send("Page.captureScreenshot", {
      format: type,
      ...(options.quality !== undefined ? { quality: options.quality } : {}),
      ...(clip ? { clip } : {}),
      // A clip is in page coordinates and may lie outside the visible part of the page, which the
      // browser only paints when asked to capture beyond the viewport.
      captureBeyondViewport: clip !== undefined,
      fromSurface: true,
    });
    const buffer = Buffer.from(data, "base64");
    if (options.path) await writeFile(options.path, buffer);
    return buffer;
  }

  // ---------- settings ----------

  /**
   * Sets the viewport (CSS pixels; `deviceScaleFactor` default 1): what the page lays out to and
   * what a screenshot covers.
   */
  async setViewportSize(
    width: number,
    height: number,
    options: { deviceScaleFactor?: number } = {},
  ): Promise<void> {
    this.assertOpen();
    const side = (value: unknown, name: string) => {
      if (typeof value !== "number" || !Number.isInteger(value) || value <= 0 || value > 16_384) {
        throw new ServiceInvalidArgumentError(
          `setViewportSize: ${name} must be a whole number of CSS pixels from 1 to 16384, got ${String(value)}.`,
        );
      }
    };
    side(width, "width");
    side(height, "height");
    const deviceScaleFactor = options.deviceScaleFactor ?? 1;
    if (!(typeof deviceScaleFactor === "number" && deviceScaleFactor > 0 && deviceScaleFactor <= 10)) {
      throw new ServiceInvalidArgumentError(
        `setViewportSize: deviceScaleFactor must be a number above 0 and at most 10, got ${String(deviceScaleFactor)}.`,
      );
    }
    await this.session.send("Emulation.setDeviceMetricsOverride", {
      width,
      height,
      deviceScaleFactor,
      mobile: false,
    });
    this.viewport = { width, height, deviceScaleFactor };
  }

  /** The viewport setViewportSize (or the launch options) set, if any. */
  viewportSize(): { width: number; height: number } | undefined {
    const size = this.viewport ?? this.settings.viewport;
    return size ? { width: size.width, height: size.height } : undefined;
  }

  /**
   * Runs `script` in every document this page loads from now on (and in its frames), before the
   * document's own scripts. A function is called with `arg`.
   */
  async addInitScript<Arg>(script: InitScript<Arg>, arg?: Arg): Promise<void> {
    this.assertOpen();
    await this.sessionSettings.addInitScript(await initScriptSource(script, arg));
  }

  /** Headers sent with every request of this page from now on (over the context's of the same name). */
  async setExtraHTTPHeaders(headers: Record<string, string>): Promise<void> {
    this.assertOpen();
    await this.sessionSettings.setPageHeaders(checkHeaders(headers, "setExtraHTTPHeaders"));
  }

  /** @internal The context added an init script for all its pages. */
  async contextScriptAdded(source: string): Promise<void> {
    if (!this.closedError) await this.sessionSettings.installScript(source);
  }

  /** @internal The context's extra headers changed. */
  async contextHeadersChanged(): Promise<void> {
    if (!this.closedError) await this.sessionSettings.applyHeaders();
  }

  // ---------- events ----------

  /**
   * Calls `listener` for each `console` message (ConsoleMessage), `dialog` (Dialog: the page waits
   * until the listener accepts or dismisses it), or once on `close`.
   */
  on<E extends PageEventName>(event: E, listener: (value: PageEventMap[E]) => void): this {
    PageEvents.check(event);
    this.events.add(event, listener);
    return this;
  }

  /** Like on, for the next event only. */
  once<E extends PageEventName>(event: E, listener: (value: PageEventMap[E]) => void): this {
    PageEvents.check(event);
    this.events.addOnce(event, listener);
    return this;
  }

  off<E extends PageEventName>(event: E, listener: (value: PageEventMap[E]) => void): this {
    PageEvents.check(event);
    this.events.remove(event, listener);
    return this;
  }

  // ---------- input ----------

  /** A real mouse click at viewport coordinates (CSS pixels). */
  async click(x: number, y: number, options: ClickOptions = {}): Promise<void> {
    this.assertOpen();
    await this.mouse.click(x, y, options);
  }

  /** Types into whatever has focus. */
  async type(text: string, options: { delay?: number } = {}): Promise<void> {
    this.assertOpen();
    await this.keyboard.type(text, options);
  }

  /** Presses a key or a combination: "Enter", "Control+A", "Shift+Tab". */
  async keyPress(key: string, options: { delay?: number } = {}): Promise<void> {
    this.assertOpen();
    await this.keyboard.press(key, options);
  }

  /** Scrolls the page by about a screen (`"down"` or `"up"`); resolves to whether it moved. */
  async scrollByPage(direction: "down" | "up" = "down"): Promise<boolean> {
    this.assertOpen();
    return this.mainFrame().invoke(domRuntime, "scrollByPage", null, direction === "up" ? -1 : 1);
  }

  /**
   * Drags with the mouse from one viewport point to another, in small steps: `(from, to, options)`
   * with `{ x, y }` points, or `(fromX, fromY, toX, toY, options)` as the reference library takes it.
   */
  async dragAndDrop(
    from: { x: number; y: number },
    to: { x: number; y: number },
    options?: { steps?: number },
  ): Promise<void>;
  async dragAndDrop(
    fromX: number,
    fromY: number,
    toX: number,
    toY: number,
    options?: { steps?: number },
  ): Promise<void>;
  async dragAndDrop(...args: unknown[]): Promise<void> {
    this.assertOpen();
    const numeric = typeof args[0] === "number";
    const from = (numeric ? { x: args[0], y: args[1] } : args[0]) as { x: number; y: number };
    const to = (numeric ? { x: args[2], y: args[3] } : args[1]) as { x: number; y: number };
    const options = ((numeric ? args[4] : args[2]) ?? {}) as { steps?: number };
    for (const point of [from, to]) {
      if (!point || !Number.isFinite(point.x) || !Number.isFinite(point.y)) {
        throw new ServiceInvalidArgumentError(
          "dragAndDrop takes two { x, y } points, or fromX, fromY, toX, toY, in viewport CSS pixels.",
        );
      }
    }
    await this.mouse.move(from.x, from.y);
    await this.mouse.down();
    await this.mouse.move(to.x, to.y, { steps: options.steps ?? 10 });
    await this.mouse.up();
  }

  /** Moves the mouse to a viewport point (CSS pixels) without clicking. */
  async hover(x: number, y: number): Promise<void> {
    this.assertOpen();
    await this.mouse.move(x, y);
  }

  /** Turns the mouse wheel by (deltaX, deltaY) CSS pixels with the pointer at (x, y). */
  async scroll(x: number, y: number, deltaX: number, deltaY: number): Promise<void> {
    this.assertOpen();
    await this.mouse.move(x, y);
    await this.mouse.wheel(deltaX, deltaY);
  }

  /** Sends a DevTools Protocol command on the page's own session (the reference library's sendCDP). */
  sendCDP<T = unknown>(method: string, params?: object): Promise<T> {
    this.assertOpen();
    return (this.session.send as (m: string, p?: object) => Promise<unknown>)(method, params) as Promise<T>;
  }

  /**
   * An element in the main frame (CSS, XPath or text=), reaching into shadow roots. When the
   * selector matches several elements, actions use the first in document order; `strict: true`
   * makes them fail instead.
   */
  locator(selector: string, options: LocatorOptions = {}): Locator {
    return new Locator(this, this.mainFrame(), selector, false, 0, options);
  }

  /** Like locator, but crosses into a frame at each `>>` and at each iframe step of an XPath. */
  deepLocator(selector: string, options: LocatorOptions = {}): Locator {
    return new Locator(this, this.mainFrame(), selector, true, 0, options);
  }

  /**
   * @internal A locator for an element already found (an element target): it acts on that node
   * with no lookup, and finds `selector` (a deep selector, usually the element's absolute XPath)
   * again only if the node leaves the page meanwhile. `selector` also names it in errors.
   */
  locatorFor(target: ElementTarget, selector: string): Locator {
    return new Locator(this, this.mainFrame(), selector, true, 0, {}, target);
  }

  /** @internal */
  locatorIn(frame: Frame, selector: string, deep: boolean): Locator {
    return new Locator(this, frame, selector, deep);
  }

  async bringToFront(): Promise<void> {
    this.assertOpen();
    await this.session.send("Page.bringToFront");
    this.context.browser.frontTargetId = this.targetId;
  }

  /** Input goes to the tab in front: events sent to a background tab wait (seconds) or get lost. */
  private async ensureFront(): Promise<void> {
    if (this.context.browser.frontTargetId === this.targetId) return;
    await this.bringToFront();
  }

  /** Closes the tab. */
  async close(): Promise<void> {
    if (this.closedError) return;
    const gone = new Promise<void>((resolve) => this.onClose(() => resolve()));
    await this.context.browser.connection.root
      .send("Target.closeTarget", { targetId: this.targetId })
      .catch(() => undefined);
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
  }
}

function typeFromPath(path: string | undefined): ScreenshotOptions["type"] | undefined {
  if (!path) return undefined;
  const ext = path.split(".").pop()?.toLowerCase();
  if (ext === "jpg" || ext === "jpeg") return "jpeg";
  if (ext === "webp") return "webp";
  if (ext === "png") return "png";
  return undefined;
}
