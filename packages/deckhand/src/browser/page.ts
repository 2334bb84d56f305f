// A tab: its state (open, closed, crashed), its frames, and the user-facing API: navigation,
// evaluation, screenshots and viewport, settings, events, input and locator factories. The work is
// done by its collaborators: page-sessions.ts attaches its DevTools sessions (its own and its
// out-of-process iframes') and wires them to the frame tree (frame-tree.ts), the lifecycle events
// (lifecycle.ts), the requests in flight (network.ts) and the events (page-events.ts);
// navigation.ts navigates; page-screenshot.ts captures and checks viewport sizes; input.ts sends
// the input events; locator.ts finds and acts on elements.

import type { Deadline } from "../deadline.ts";
import { type ServiceError, ServiceInvalidArgumentError, ServiceTargetClosedError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import type { Context } from "./context.ts";
import type { ElementTarget } from "./element-target.ts";
import type { Frame } from "./frame.ts";
import { FrameTree } from "./frame-tree.ts";
import { domRuntime } from "./in-page.ts";
import type { ElementHandle } from "./injected-script.ts";
import { type ClickOptions, Keyboard, Mouse } from "./input.ts";
import { LifecycleWatcher, type WaitUntil } from "./lifecycle.ts";
import { Locator, type LocatorOptions } from "./locator.ts";
import { type GotoOptions, Navigator } from "./navigation.ts";
import { type InflightRequest, NetworkTracker } from "./network.ts";
import { type PageEventMap, type PageEventName, PageEvents } from "./page-events.ts";
import { captureScreenshot, checkViewportSize, type ScreenshotOptions } from "./page-screenshot.ts";
import { PageSessions, type PageSettings } from "./page-sessions.ts";
import { checkHeaders, type InitScript, initScriptSource, SessionSettings } from "./session-settings.ts";

export type { WaitUntil } from "./lifecycle.ts";
export type { GotoOptions } from "./navigation.ts";
export type { InflightRequest } from "./network.ts";
export { ConsoleMessage, Dialog, type PageEventMap, type PageEventName } from "./page-events.ts";
export type { ScreenshotOptions } from "./page-screenshot.ts";
export type { PageSettings } from "./page-sessions.ts";
export type { InitScript } from "./session-settings.ts";

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
  private readonly attached: PageSessions;
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
      adoptMainCommit: (frameTree) => this.tree.adoptMainCommit(frameTree, this.session),
      scriptsRegistered: () => this.attached.scriptsRegistered(),
      navigated: (parameters, result) => this.onNavigate?.(parameters, { url: this.url(), ...result }),
    });
    this.sessionSettings = new SessionSettings(() => this.attached.all, {
      initScripts: () => this.context.initScripts(),
      headers: () => this.context.extraHTTPHeaders(),
    });
    this.attached = new PageSessions(session, {
      connection: context.browser.connection,
      settings,
      tree: this.tree,
      lifecycle: this.lifecycle,
      network: this.network,
      events: this.events,
      sessionSettings: this.sessionSettings,
      crashed: () => this.crashed(),
    });
    this.onClose(() => this.events.emit("close", undefined));
  }

  // ---------- sessions (page-sessions.ts) ----------

  /** @internal Wires a target session (the page's own or an OOPIF's) and lets it run. */
  attachSession(session: CdpSession, oopifFrameId?: string): Promise<void> {
    return this.attached.attach(session, oopifFrameId);
  }

  /** Its own renderer crashed: the page is closed, and every call on its session fails so. */
  private crashed(): void {
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
   * @internal After Deckhand's input that began at `since` (Date.now()): waits (at most
   * `maxWaitMs`, within `deadline`) for a navigation that input started to commit; see
   * Navigator.awaitInputNavigation.
   */
  awaitInputNavigation(
    since: number,
    deadline: Deadline,
    maxWaitMs: number,
  ): Promise<{ url: string; state: "pending" | "committed" | "not committed" } | undefined> {
    return this.navigator.awaitInputNavigation(since, deadline, maxWaitMs);
  }

  /** @internal Brings the main frame up to date after someone else navigated it (see Navigator). */
  syncMainFrame(): Promise<void> {
    return this.navigator.syncMainFrame();
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
    return captureScreenshot(this.session, options);
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
    const deviceScaleFactor = checkViewportSize(width, height, options);
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

  /** Types into whatever has focus (no further key once `signal` aborts). */
  async type(text: string, options: { delay?: number; signal?: AbortSignal } = {}): Promise<void> {
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
