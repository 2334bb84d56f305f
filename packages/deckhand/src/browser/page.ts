// A tab. The page owns its main session and the sessions of its out-of-process iframes, keeps one
// tree of frames across them, tracks navigation lifecycle and network activity, and offers the
// user-facing API: navigation, evaluation, screenshots, input and locators.

import { writeFile } from "node:fs/promises";
import type { Protocol } from "devtools-protocol";
import { Deadline } from "../deadline.ts";
import {
  ServiceCancelledError,
  type ServiceError,
  ServiceInvalidArgumentError,
  ServiceNavigationError,
  ServiceTargetClosedError,
  ServiceTimeoutError,
} from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import type { Context } from "./context.ts";
import { Frame } from "./frame.ts";
import { domRuntime } from "./in-page.ts";
import { installPageHooks } from "./injected/page-hooks.ts";
import type { ElementHandle } from "./injected-script.ts";
import { type ClickOptions, Keyboard, Mouse } from "./input.ts";
import { Locator } from "./locator.ts";

export type WaitUntil = "load" | "domcontentloaded" | "networkidle";

export interface GotoOptions {
  waitUntil?: WaitUntil;
  /** Milliseconds; default 30000. */
  timeout?: number;
  referer?: string;
  /**
   * Stops waiting when it aborts: the page stops loading (what has committed stays) and the call
   * rejects with ServiceCancelledError (or the abort reason, when that is a Deckhand error).
   */
  signal?: AbortSignal;
}

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

/** A request the page (or one of its frames) has sent and not finished. */
export interface InflightRequest {
  url: string;
  type: string;
  frameId: string | undefined;
  startedAt: number;
}

const LIFECYCLE_EVENT: Record<WaitUntil, string> = {
  load: "load",
  domcontentloaded: "DOMContentLoaded",
  networkidle: "networkIdle",
};

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
  private readonly frameMap = new Map<string, Frame>();
  private readonly sessions = new Set<CdpSession>();
  /** Execution contexts reported before their frame was known (events can race the frame tree). */
  private readonly orphanContexts = new Map<string, { session: CdpSession; id: number }>();
  /**
   * When each frame last navigated or went away, counted in frame events. A target is resumed
   * before its frame tree is answered (see attachSession), so the tree can be older than events
   * already handled; this tells which parts of it are.
   */
  private readonly frameEventAt = new Map<string, number>();
  private frameEvents = 0;
  /** Lifecycle events seen per frame and loader, newest loaders last. */
  private readonly lifecycle = new Map<string, Map<string, Set<string>>>();
  private readonly documentStatus = new Map<string, number>();
  private readonly inflight = new Map<string, InflightRequest>();
  private readonly closeHandlers = new Set<(page: Page) => void>();
  private closedError: ServiceError | undefined;
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
    this.keyboard = new Keyboard(session, () => this.ensureFront());
    this.mouse = new Mouse(session, this.keyboard);
    this.frameMap.set(targetId, new Frame(this, targetId, session, undefined));
  }

  // ---------- attaching sessions ----------

  /** @internal Wires a target session (the page's own or an OOPIF's) and lets it run. */
  async attachSession(session: CdpSession, oopifFrameId?: string): Promise<void> {
    this.sessions.add(session);
    if (oopifFrameId) {
      const frame = this.frameMap.get(oopifFrameId);
      if (frame) {
        frame.session = session;
        frame.setExecutionContext(undefined);
      }
    }
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
    const treeAsOf = this.frameEvents;
    const tree = session.send("Page.getFrameTree");
    // Resume without waiting for the answers above: a session handles its commands in order, so
    // the hooks are in place before the first script runs anyway, and some targets (a tab opened
    // with noopener, e.g. a target=_blank link) do not answer Page.enable until they run.
    const resumed = session.send("Runtime.runIfWaitingForDebugger");
    try {
      const [{ frameTree }] = await Promise.all([tree, resumed, ...setup]);
      const parentId = oopifFrameId ? this.frameMap.get(oopifFrameId)?.parentId : undefined;
      this.addFrameTree(frameTree, session, parentId, treeAsOf);
    } catch (error) {
      // A frame or tab that went away while it was being set up is no error of ours.
      if (!session.detached) throw error;
    }
  }

  private listen(session: CdpSession): void {
    session.on("Page.frameAttached", (e) => this.frameAttached(e.frameId, e.parentFrameId, session));
    session.on("Page.frameNavigated", (e) => this.frameNavigated(e.frame, session));
    session.on("Page.navigatedWithinDocument", (e) => {
      const frame = this.frameMap.get(e.frameId);
      if (frame) frame.url = e.url;
      this.frameEventAt.set(e.frameId, ++this.frameEvents);
    });
    session.on("Page.frameDetached", (e) => {
      if (e.reason === "swap") return; // moving to another process; its new session takes over
      this.removeFrame(e.frameId);
    });
    session.on("Page.lifecycleEvent", (e) => this.recordLifecycle(e.frameId, e.loaderId, e.name));
    session.on("Runtime.executionContextCreated", (e) => this.contextCreated(e.context, session));
    session.on("Runtime.executionContextDestroyed", (e) => {
      for (const frame of this.frameMap.values()) {
        if (frame.session === session && frame.hasExecutionContext(e.executionContextId))
          frame.setExecutionContext(undefined);
      }
    });
    session.on("Runtime.executionContextsCleared", () => {
      for (const frame of this.frameMap.values())
        if (frame.session === session) frame.setExecutionContext(undefined);
    });
    // Request ids are unique across the browser; a frame's document request can start in its
    // parent's session and finish in the frame's own (out-of-process) session.
    const key = (id: string) => id;
    session.on("Network.requestWillBeSent", (e) => {
      if (e.type === "EventSource" || e.type === "WebSocket") return; // long-lived by design
      this.inflight.set(key(e.requestId), {
        url: e.request.url,
        type: e.type ?? "Other",
        frameId: e.frameId,
        startedAt: Date.now(),
      });
    });
    session.on("Network.responseReceived", (e) => {
      if (e.type === "Document") this.documentStatus.set(e.loaderId, e.response.status);
    });
    session.on("Network.loadingFinished", (e) => this.inflight.delete(key(e.requestId)));
    session.on("Network.loadingFailed", (e) => this.inflight.delete(key(e.requestId)));
    session.on("Network.requestServedFromCache", (e) => this.inflight.delete(key(e.requestId)));
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
      const frameId = event.targetInfo.targetId;
      if (!this.frameMap.has(frameId))
        this.frameMap.set(frameId, new Frame(this, frameId, session, undefined));
      this.attachSession(session, frameId).catch(() => undefined);
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
    for (const frame of [...this.frameMap.values()]) {
      if (frame.session !== session) continue;
      const parent = frame.parent;
      if (parent && parent.session !== session && this.sessions.has(parent.session)) {
        // The OOPIF's own frame stays in its parent (it may come back in-process); its inner frames went with it.
        frame.session = parent.session;
        frame.setExecutionContext(undefined);
      } else {
        this.removeFrame(frame.id);
      }
    }
  }

  /** Adds what a frame tree taken at `asOf` (a frameEvents count) says, where no later event has. */
  private addFrameTree(
    tree: Protocol.Page.FrameTree,
    session: CdpSession,
    parentId: string | undefined,
    asOf: number,
  ): void {
    const info = tree.frame;
    let frame = this.frameMap.get(info.id);
    // Navigated or removed since the tree was taken: the events know better, for its subtree too.
    const outdated = (this.frameEventAt.get(info.id) ?? -1) > asOf;
    if (outdated && !frame) return;
    if (!frame) {
      frame = new Frame(this, info.id, session, info.parentId ?? parentId);
      this.frameMap.set(info.id, frame);
    } else {
      frame.session = session;
      if (!frame.parentId && (info.parentId ?? parentId) && info.id !== this.targetId)
        frame.parentId = info.parentId ?? parentId;
    }
    this.adoptOrphanContext(frame);
    if (outdated) return;
    frame.url = info.url + (info.urlFragment ?? "");
    frame.name = info.name ?? "";
    frame.loaderId = info.loaderId;
    for (const child of tree.childFrames ?? []) this.addFrameTree(child, session, info.id, asOf);
  }

  private frameAttached(frameId: string, parentId: string, session: CdpSession): void {
    if (this.frameMap.has(frameId)) return;
    const frame = new Frame(this, frameId, session, parentId);
    this.frameMap.set(frameId, frame);
    this.adoptOrphanContext(frame);
  }

  private frameNavigated(info: Protocol.Page.Frame, session: CdpSession): void {
    let frame = this.frameMap.get(info.id);
    if (!frame) {
      frame = new Frame(this, info.id, session, info.parentId);
      this.frameMap.set(info.id, frame);
    }
    frame.url = info.url + (info.urlFragment ?? "");
    frame.name = info.name ?? "";
    frame.loaderId = info.loaderId;
    this.frameEventAt.set(info.id, ++this.frameEvents);
    // A new document: the frames of the old one are gone.
    for (const child of frame.children()) if (child.session === session) this.removeFrame(child.id);
    this.adoptOrphanContext(frame);
  }

  private removeFrame(frameId: string): void {
    const frame = this.frameMap.get(frameId);
    if (!frame || frameId === this.targetId) return;
    for (const child of frame.children()) this.removeFrame(child.id);
    this.frameMap.delete(frameId);
    this.frameEventAt.set(frameId, ++this.frameEvents);
    this.lifecycle.delete(frameId);
    frame.markDetached();
  }

  private contextCreated(context: Protocol.Runtime.ExecutionContextDescription, session: CdpSession): void {
    const aux = context.auxData as { frameId?: string; isDefault?: boolean } | undefined;
    if (!aux?.frameId || !aux.isDefault) return;
    const frame = this.frameMap.get(aux.frameId);
    if (frame && frame.session === session) frame.setExecutionContext(context.id);
    else this.orphanContexts.set(aux.frameId, { session, id: context.id });
  }

  private adoptOrphanContext(frame: Frame): void {
    const orphan = this.orphanContexts.get(frame.id);
    if (orphan && orphan.session === frame.session) {
      this.orphanContexts.delete(frame.id);
      frame.setExecutionContext(orphan.id);
    }
  }

  private recordLifecycle(frameId: string, loaderId: string, name: string): void {
    let loaders = this.lifecycle.get(frameId);
    if (!loaders) {
      loaders = new Map();
      this.lifecycle.set(frameId, loaders);
    }
    let events = loaders.get(loaderId);
    if (!events) {
      events = new Set();
      loaders.set(loaderId, events);
      if (loaders.size > 8) loaders.delete(loaders.keys().next().value!);
    }
    events.add(name);
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
    for (const frame of this.frameMap.values()) frame.markDetached();
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
    return this.frameMap.get(this.targetId)!;
  }

  /** Every frame of the page: in-process, out-of-process, srcdoc and nested. */
  frames(): Frame[] {
    return [...this.frameMap.values()];
  }

  frameById(id: string): Frame | undefined {
    return this.frameMap.get(id);
  }

  /**
   * The frame an <iframe> element (a handle in `parent`) displays, after waiting up to `waitMs`
   * for it to have a document (check `hasDocument`: it may still have none).
   */
  async contentFrame(parent: Frame, iframe: ElementHandle, waitMs = 5_000): Promise<Frame | undefined> {
    const { node } = await parent.session.send("DOM.describeNode", { objectId: iframe.objectId });
    if (!node.frameId) return undefined;
    const frame = this.frameMap.get(node.frameId);
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

  url(): string {
    return this.mainFrame().url;
  }

  async title(): Promise<string> {
    this.assertOpen();
    return this.mainFrame().evaluate<string>("document.title");
  }

  /** Navigates and waits for `waitUntil` (default load). Returns the main response's status, or null. */
  async goto(url: string, options: GotoOptions = {}): Promise<number | null> {
    this.assertOpen();
    if (typeof url !== "string" || !url)
      throw new ServiceInvalidArgumentError(`goto needs a URL string, got ${JSON.stringify(url)}.`);
    const waitUntil = checkWaitUntil(options.waitUntil);
    const frame = this.mainFrame();
    const { signal, ...recorded } = options;
    const deadline = navigationDeadline(`goto(${url})`, options);
    return this.navigating(deadline, async () => {
      // A same-document navigation (#hash) is answered without a loader, and the event that carries
      // its new URL comes after the answer: listen from the start so that url() is right on return.
      const sameDocument = this.session.waitFor(
        "Page.navigatedWithinDocument",
        (e) => e.frameId === frame.id,
        deadline.signal,
      );
      sameDocument.catch(() => undefined);
      const result = await this.session.send("Page.navigate", {
        url,
        frameId: frame.id,
        ...(options.referer ? { referrer: options.referer } : {}),
      });
      if (result.errorText) throw new ServiceNavigationError(url, result.errorText);
      let status: number | null = null;
      if (result.loaderId) {
        await this.waitForLifecycle(frame.id, result.loaderId, waitUntil, deadline);
        status = this.documentStatus.get(result.loaderId) ?? null;
      } else if (!result.isDownload) {
        await sameDocument;
      }
      this.onNavigate?.({ url, ...recorded }, { url: this.url(), status });
      return status;
    });
  }

  /**
   * Runs a navigation under its deadline: a closed page reports that it closed (not a timeout
   * that followed from it), and a navigation its caller cancelled stops the page loading.
   */
  private async navigating<T>(deadline: Deadline, run: () => Promise<T>): Promise<T> {
    try {
      return await deadline.run(run);
    } catch (error) {
      if (this.closedError && !(error instanceof ServiceTimeoutError)) throw this.closedError;
      if (error instanceof ServiceCancelledError || (deadline.aborted && !deadline.expired))
        this.stopLoading();
      throw error;
    }
  }

  async reload(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("reload()", options, () =>
      this.session.send("Page.reload", {}).then(() => true),
    );
  }

  /** Goes back one history entry; null when there is none (or it stays in the same document). */
  async goBack(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("goBack()", options, () => this.stepHistory(-1));
  }

  async goForward(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("goForward()", options, () => this.stepHistory(1));
  }

  private async stepHistory(delta: number): Promise<boolean> {
    const { currentIndex, entries } = await this.session.send("Page.getNavigationHistory");
    const entry = entries[currentIndex + delta];
    if (!entry) return false;
    await this.session.send("Page.navigateToHistoryEntry", { entryId: entry.id });
    return true;
  }

  private async historyNavigation(
    operation: string,
    options: Omit<GotoOptions, "referer">,
    start: () => Promise<boolean>,
  ): Promise<number | null> {
    this.assertOpen();
    const waitUntil = checkWaitUntil(options.waitUntil);
    const frameId = this.targetId;
    const { signal, ...recorded } = options;
    const deadline = navigationDeadline(operation, options);
    return this.navigating(deadline, async () => {
      // Either a new document commits (a new loader) or the history step stays in this document.
      const committed = Promise.race([
        this.session
          .waitFor("Page.frameNavigated", (e) => e.frame.id === frameId, deadline.signal)
          .then((e) => e.frame.loaderId as string | undefined),
        this.session
          .waitFor("Page.navigatedWithinDocument", (e) => e.frameId === frameId, deadline.signal)
          .then(() => undefined),
      ]);
      committed.catch(() => undefined);
      if (!(await start())) return null;
      const loaderId = await committed;
      let status: number | null = null;
      if (loaderId) {
        await this.waitForLifecycle(frameId, loaderId, waitUntil, deadline);
        status = this.documentStatus.get(loaderId) ?? null;
      }
      this.onNavigate?.({ action: operation.replace("()", ""), ...recorded }, { url: this.url(), status });
      return status;
    });
  }

  /** Waits until the current document of the main frame has reached `state`. */
  async waitForLoadState(
    state: WaitUntil = "load",
    options: { timeout?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const frame = this.mainFrame();
    const deadline = navigationDeadline(`waitForLoadState(${state})`, options);
    // Whatever document is current when the event fires: a tab that is still on its initial empty
    // document (a popup right after it opened) gets there once its first navigation commits.
    await this.navigating(deadline, () =>
      this.waitForLifecycle(frame.id, () => frame.loaderId, checkWaitUntil(state), deadline),
    );
  }

  private async waitForLifecycle(
    frameId: string,
    loader: string | (() => string),
    waitUntil: WaitUntil,
    deadline: Deadline,
  ): Promise<void> {
    const name = LIFECYCLE_EVENT[waitUntil];
    const loaderId = typeof loader === "string" ? () => loader : loader;
    if (this.lifecycle.get(frameId)?.get(loaderId())?.has(name)) return;
    const step = deadline.child(`waiting for ${name}`);
    const reached = this.session.waitFor(
      "Page.lifecycleEvent",
      (e) => e.frameId === frameId && e.loaderId === loaderId() && e.name === name,
      step.signal,
    );
    try {
      // The event may have arrived between the check above and subscribing.
      if (this.lifecycle.get(frameId)?.get(loaderId())?.has(name)) return;
      await reached;
    } finally {
      step.dispose();
      reached.catch(() => undefined);
    }
  }

  /** A navigation whose caller gave up: the page stops loading (best effort, nothing to wait for). */
  private stopLoading(): void {
    if (this.closedError) return;
    this.session.send("Page.stopLoading").catch(() => undefined);
  }

  /** Requests in flight in this page and its frames (EventSource and WebSocket excluded). */
  inflightRequests(): InflightRequest[] {
    return [...this.inflight.values()];
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

  /** Drags with the mouse from one viewport point to another, in small steps. */
  async dragAndDrop(
    from: { x: number; y: number },
    to: { x: number; y: number },
    options: { steps?: number } = {},
  ): Promise<void> {
    this.assertOpen();
    await this.mouse.move(from.x, from.y);
    await this.mouse.down();
    await this.mouse.move(to.x, to.y, { steps: options.steps ?? 10 });
    await this.mouse.up();
  }

  /** An element in the main frame (CSS, XPath or text=), reaching into shadow roots. */
  locator(selector: string): Locator {
    return new Locator(this, this.mainFrame(), selector, false);
  }

  /** Like locator, but crosses into a frame at each `>>` and at each iframe step of an XPath. */
  deepLocator(selector: string): Locator {
    return new Locator(this, this.mainFrame(), selector, true);
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

function checkWaitUntil(value: string | undefined): WaitUntil {
  const waitUntil = (value ?? "load") as WaitUntil;
  if (!(waitUntil in LIFECYCLE_EVENT)) {
    throw new ServiceInvalidArgumentError(
      `waitUntil must be "load", "domcontentloaded" or "networkidle", not ${JSON.stringify(value)}.`,
    );
  }
  return waitUntil;
}

function typeFromPath(path: string | undefined): ScreenshotOptions["type"] | undefined {
  if (!path) return undefined;
  const ext = path.split(".").pop()?.toLowerCase();
  if (ext === "jpg" || ext === "jpeg") return "jpeg";
  if (ext === "webp") return "webp";
  if (ext === "png") return "png";
  return undefined;
}

/** A navigation's deadline: `timeout` (default 30 s) and the caller's `signal`. */
function navigationDeadline(
  operation: string,
  options: { timeout?: number; signal?: AbortSignal },
): Deadline {
  return Deadline.start(operation, {
    timeout: options.timeout ?? 30_000,
    signal: options.signal,
    hint: "Raise `timeout`, or wait for an earlier state (waitUntil).",
  });
}
