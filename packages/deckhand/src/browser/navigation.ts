// Navigating a page's main frame (goto, reload, history steps) and waiting for the load state the
// caller asked for, under one deadline: the operation's, or one from `timeout` and the caller's
// `signal`. A navigation whose caller gave up stops the page loading; one whose page closed says
// so. Also: waiting for the navigation Deckhand's own input started to commit, and bringing the
// main frame up to date after someone else navigated it.

import type { Protocol } from "devtools-protocol";
import { Deadline } from "../deadline.ts";
import {
  ServiceCancelledError,
  type ServiceError,
  ServiceInvalidArgumentError,
  ServiceNavigationError,
  ServiceTimeoutError,
} from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import type { Frame } from "./frame.ts";
import { checkWaitUntil, type LifecycleWatcher, type WaitUntil } from "./lifecycle.ts";

export interface GotoOptions {
  waitUntil?: WaitUntil;
  /** Milliseconds; default 30000. */
  timeout?: number;
  /** Alias of `timeout`, as the reference library names it. */
  timeoutMs?: number;
  referer?: string;
  /**
   * Stops waiting when it aborts: the page stops loading (what has committed stays) and the call
   * rejects with ServiceCancelledError (or the abort reason, when that is a Deckhand error).
   */
  signal?: AbortSignal;
  /**
   * @internal The operation's deadline: the navigation runs under it and writes to its call log;
   * `timeout`, `timeoutMs` and `signal` are then not read.
   */
  deadline?: Deadline;
}

/** What a navigation needs of its page. */
export interface NavigationTarget {
  /** The main frame's session. */
  readonly session: CdpSession;
  mainFrame(): Frame;
  readonly lifecycle: LifecycleWatcher;
  /** Why the page is closed, if it is. */
  closedError(): ServiceError | undefined;
  /** Takes the page's answer to Page.getFrameTree as the main frame's newest commit. */
  adoptMainCommit(frameTree: Protocol.Page.FrameTree): void;
  /** Settles once the page's new-document scripts are registered (PageSessions.scriptsRegistered). */
  scriptsRegistered(): Promise<unknown>;
  /** After every navigation made through the page's API (for history). */
  navigated(parameters: Record<string, unknown>, result: { status: number | null }): void;
}

/**
 * A navigation's deadline: the one the caller passed, or (the public API, a caller that gave none)
 * one started from `timeout` (default 30 s) and the caller's `signal`. `owned`: started here, and
 * disposed of when the navigation ends.
 */
function navigationDeadline(
  operation: string,
  options: { timeout?: number; timeoutMs?: number; signal?: AbortSignal; deadline?: Deadline },
): { deadline: Deadline; owned: boolean } {
  if (options.deadline) return { deadline: options.deadline, owned: false };
  if (
    options.timeout !== undefined &&
    options.timeoutMs !== undefined &&
    options.timeout !== options.timeoutMs
  ) {
    throw new ServiceInvalidArgumentError(
      `${operation}: timeout (${options.timeout}) and timeoutMs (${options.timeoutMs}) differ; give one of the two ` +
        "(timeoutMs is the reference library's name for timeout).",
    );
  }
  const deadline = Deadline.start(operation, {
    timeout: options.timeout ?? options.timeoutMs ?? 30_000,
    signal: options.signal,
    hint: "Raise `timeout`, or wait for an earlier state (waitUntil).",
  });
  return { deadline, owned: true };
}

export class Navigator {
  private readonly target: NavigationTarget;

  constructor(target: NavigationTarget) {
    this.target = target;
  }

  private assertOpen(): void {
    const closed = this.target.closedError();
    if (closed) throw closed;
  }

  /** Navigates and waits for `waitUntil` (default load). Returns the main response's status, or null. */
  async goto(url: string, options: GotoOptions = {}): Promise<number | null> {
    this.assertOpen();
    if (typeof url !== "string" || !url)
      throw new ServiceInvalidArgumentError(`goto needs a URL string, got ${JSON.stringify(url)}.`);
    const waitUntil = checkWaitUntil(options.waitUntil);
    const { session, lifecycle } = this.target;
    const frame = this.target.mainFrame();
    const { signal, deadline: _given, ...recorded } = options;
    const navigation = navigationDeadline(`goto(${url})`, options);
    const { deadline } = navigation;
    return this.navigating(navigation, async () => {
      deadline.log(`navigating to "${url}", waiting until "${waitUntil}"`);
      // A same-document navigation (#hash) is answered without a loader, and the event that carries
      // its new URL comes after the answer: listen from the start so that url() is right on return.
      const sameDocument = session.waitFor(
        "Page.navigatedWithinDocument",
        (e) => e.frameId === frame.id,
        deadline.signal,
      );
      sameDocument.catch(() => undefined);
      await deadline.race(this.target.scriptsRegistered());
      const result = await session.send("Page.navigate", {
        url,
        frameId: frame.id,
        ...(options.referer ? { referrer: options.referer } : {}),
      });
      if (result.errorText) throw new ServiceNavigationError(url, result.errorText);
      let status: number | null = null;
      if (result.loaderId) {
        await lifecycle.wait(frame.id, result.loaderId, waitUntil, deadline);
        status = lifecycle.statusOf(result.loaderId);
        await this.confirmCommit(result.loaderId);
      } else if (!result.isDownload) {
        await sameDocument;
      }
      this.target.navigated({ url, ...recorded }, { status });
      return status;
    });
  }

  async reload(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("reload()", options, () =>
      this.target.session.send("Page.reload", {}).then(() => true),
    );
  }

  /** Goes back one history entry; null when there is none (or it stays in the same document). */
  async goBack(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("goBack()", options, () => this.stepHistory(-1));
  }

  async goForward(options: Omit<GotoOptions, "referer"> = {}): Promise<number | null> {
    return this.historyNavigation("goForward()", options, () => this.stepHistory(1));
  }

  /** Waits until the current document of the main frame has reached `state`. */
  async waitForLoadState(
    state: WaitUntil = "load",
    options: { timeout?: number; signal?: AbortSignal; deadline?: Deadline } = {},
  ): Promise<void> {
    const frame = this.target.mainFrame();
    const navigation = navigationDeadline(`waitForLoadState(${state})`, options);
    const { deadline } = navigation;
    // Whatever document is current when the event fires: a tab that is still on its initial empty
    // document (a popup right after it opened) gets there once its first navigation commits.
    await this.navigating(navigation, () =>
      this.target.lifecycle.wait(frame.id, () => frame.loaderId, checkWaitUntil(state), deadline),
    );
  }

  /**
   * A navigation of the main frame reached its load state, but the frame tree may not have seen
   * it commit: the browser's first tab is handed out before its renderer starts (see
   * Browser.targetAttached), and a first navigation that commits in a new renderer before the
   * page agent there is enabled sends no Page.frameNavigated (seen under load, about one run in
   * ten: url() still said about:blank after goto). Then the frame tree is asked for; answers come
   * in order with the events, so what it says is the newest word.
   */
  private async confirmCommit(loaderId: string): Promise<void> {
    if (this.target.mainFrame().loaderId === loaderId) return;
    const { frameTree } = await this.target.session.send("Page.getFrameTree");
    if (frameTree.frame.loaderId !== this.target.mainFrame().loaderId) this.target.adoptMainCommit(frameTree);
  }

  /**
   * After Deckhand's input that began at `since` (Date.now()): when it made the main
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
    if (this.target.closedError()) return undefined;
    const main = () => this.target.mainFrame().id;
    try {
      await deadline.race(this.target.session.send("Page.getFrameTree"));
    } catch {
      if (deadline.aborted || this.target.closedError()) return undefined;
    }
    let navigation = this.target.lifecycle.navigationSince(main(), since);
    if (navigation?.state === "pending") {
      deadline.log(`waiting for navigation to "${navigation.url}" to commit`);
      const wait = deadline.child("waiting for the navigation the action started", deadline.cap(maxWaitMs));
      try {
        while (navigation?.state === "pending" && !wait.aborted && !this.target.closedError()) {
          const ended = this.target.lifecycle.navigationEnded(main(), wait.signal);
          navigation = this.target.lifecycle.navigationSince(main(), since);
          if (navigation?.state !== "pending") break;
          await ended;
          navigation = this.target.lifecycle.navigationSince(main(), since);
        }
      } finally {
        wait.dispose();
      }
    }
    return navigation;
  }

  /**
   * Brings the main frame up to date with the page after someone else navigated it (the
   * service, for a REMOTE act): the frame tree the page answers with is the newest word, whether or
   * not this connection has had the commit's event yet.
   */
  async syncMainFrame(): Promise<void> {
    if (this.target.closedError()) return;
    const { frameTree } = await this.target.session.send("Page.getFrameTree");
    if (frameTree.frame.loaderId !== this.target.mainFrame().loaderId) this.target.adoptMainCommit(frameTree);
  }

  private async stepHistory(delta: number): Promise<boolean> {
    const { session } = this.target;
    const { currentIndex, entries } = await session.send("Page.getNavigationHistory");
    const entry = entries[currentIndex + delta];
    if (!entry) return false;
    await session.send("Page.navigateToHistoryEntry", { entryId: entry.id });
    return true;
  }

  private async historyNavigation(
    operation: string,
    options: Omit<GotoOptions, "referer">,
    start: () => Promise<boolean>,
  ): Promise<number | null> {
    this.assertOpen();
    const waitUntil = checkWaitUntil(options.waitUntil);
    const { session, lifecycle } = this.target;
    const frameId = this.target.mainFrame().id;
    const { signal, deadline: _given, ...recorded } = options;
    const navigation = navigationDeadline(operation, options);
    const { deadline } = navigation;
    return this.navigating(navigation, async () => {
      deadline.log(`${operation}: waiting for the history navigation, until "${waitUntil}"`);
      // Either a new document commits (a new loader) or the history step stays in this document.
      const committed = Promise.race([
        session
          .waitFor("Page.frameNavigated", (e) => e.frame.id === frameId, deadline.signal)
          .then((e) => e.frame.loaderId as string | undefined),
        session
          .waitFor("Page.navigatedWithinDocument", (e) => e.frameId === frameId, deadline.signal)
          .then(() => undefined),
      ]);
      committed.catch(() => undefined);
      if (!(await start())) return null;
      const loaderId = await committed;
      let status: number | null = null;
      if (loaderId) {
        await lifecycle.wait(frameId, loaderId, waitUntil, deadline);
        status = lifecycle.statusOf(loaderId);
        await this.confirmCommit(loaderId);
      }
      this.target.navigated({ action: operation.replace("()", ""), ...recorded }, { status });
      return status;
    });
  }

  /**
   * Runs a navigation under its deadline: a closed page reports that it closed (not a timeout
   * that followed from it), and a navigation its caller cancelled stops the page loading.
   */
  private async navigating<T>(
    { deadline, owned }: { deadline: Deadline; owned: boolean },
    run: () => Promise<T>,
  ): Promise<T> {
    try {
      if (owned) return await deadline.run(run);
      deadline.check();
      return await deadline.race(run());
    } catch (error) {
      const closed = this.target.closedError();
      if (closed && !(error instanceof ServiceTimeoutError)) throw closed;
      if (error instanceof ServiceCancelledError || (deadline.aborted && !deadline.expired))
        this.stopLoading();
      throw error;
    }
  }

  /** A navigation whose caller gave up: the page stops loading (best effort, nothing to wait for). */
  private stopLoading(): void {
    if (this.target.closedError()) return;
    this.target.session.send("Page.stopLoading").catch(() => undefined);
  }
}
