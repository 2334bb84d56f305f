// The Chromium processes of this node. A session gets an isolated browser context (its own
// cookies, storage and pages) in a browser that only its tenant uses: with `isolation: "project"`
// (the default) the sessions of one project share browsers, and different projects never share
// one; with `isolation: "session"` every session has a browser of its own. So a tenant who crashes
// or exhausts its browser harms only itself.
//
// Browsers are launched without a DevTools port and driven over their pipe: nothing else on the
// machine, page JavaScript of any tenant included, can reach them. Another browser of a tenant is
// started only when that tenant's browsers are full; one that has had no session for `lingerMs` is
// closed, and a lingering browser of another tenant is closed at once when a new tenant needs its
// place under `maxBrowsers`.

import { accessSync, constants, statSync } from "node:fs";
import { Browser, buildChromeArgs, findChrome, launchChrome } from "deckhand";
import {
  DEFAULT_BROWSER_LINGER_MS,
  DEFAULT_ISOLATION,
  DEFAULT_MAX_BROWSERS,
  DEFAULT_SESSIONS_PER_BROWSER,
} from "../defaults.ts";
import { ApiError } from "../errors.ts";

/** How long after a failed browser start the pool reports itself unavailable (/readyz). */
const LAUNCH_FAILURE_MEMORY_MS = 30_000;

/** Who may share a browser process: sessions of one project, or no one. */
export type Isolation = "project" | "session";

export interface BrowserPoolOptions {
  /** Most Chromium processes at once. */
  maxBrowsers?: number;
  /** Sessions a browser takes before another is started for its tenant. */
  sessionsPerBrowser?: number;
  /** Milliseconds a browser without sessions stays up (so the tenant's next session starts fast). */
  lingerMs?: number;
  /** Default "project". */
  isolation?: Isolation;
  /** Chrome or Chromium to run; default: what the library finds (CHROME_PATH, the usual paths). */
  executablePath?: string;
  /** Arguments added after the library's defaults. */
  args?: string[];
  /** Default true. */
  headless?: boolean;
}

/** What every browser of the pool is started with (see BrowserPool.processSettings). */
export interface BrowserProcessSettings {
  executablePath: string | undefined;
  args: readonly string[];
  headless: boolean;
}

/** A place in one of the pool's browsers. */
export interface BrowserLease {
  readonly browser: Browser;
  /** Gives the place back. Safe to call more than once. */
  release(): void;
}

interface Slot {
  /** The tenant whose sessions this browser holds: a project id, or a session's own key. */
  owner: string;
  ready: Promise<Browser>;
  browser: Browser | undefined;
  sessions: number;
  linger: NodeJS.Timeout | undefined;
  /** Set once the pool closes it on purpose; a disconnect after that is no loss. */
  closing: Promise<void> | undefined;
}

export class BrowserPool {
  private readonly options: Required<Omit<BrowserPoolOptions, "executablePath">> & {
    executablePath: string | undefined;
  };
  private readonly slots = new Set<Slot>();
  private readonly closings = new Set<Promise<void>>();
  private readonly lostHandlers = new Set<(browser: Browser) => void>();
  private closed = false;
  private nextPrivateOwner = 0;
  /** When the latest browser start failed, unless one started since. */
  private launchFailedAt: number | undefined;

  constructor(options: BrowserPoolOptions = {}) {
    this.options = {
      maxBrowsers: options.maxBrowsers ?? DEFAULT_MAX_BROWSERS,
      sessionsPerBrowser: options.sessionsPerBrowser ?? DEFAULT_SESSIONS_PER_BROWSER,
      lingerMs: options.lingerMs ?? DEFAULT_BROWSER_LINGER_MS,
      isolation: options.isolation ?? DEFAULT_ISOLATION,
      executablePath: options.executablePath,
      args: options.args ?? [],
      headless: options.headless ?? true,
    };
  }

  get isolation(): Isolation {
    return this.options.isolation;
  }

  /**
   * What the pool's browser processes are: the executable (the operator's, else what the library
   * finds), every argument they get besides the per-process ones (profile, pipe, first URL), and
   * whether they are headless. A session's launch options may repeat these, not change them.
   */
  processSettings(): BrowserProcessSettings {
    const args = buildChromeArgs(
      { headless: this.options.headless, debuggingPort: false, args: this.options.args },
      "",
    ).filter(
      (arg) =>
        !arg.startsWith("--user-data-dir=") && arg !== "--remote-debugging-pipe" && arg.startsWith("-"),
    );
    return {
      executablePath: this.options.executablePath ?? findChrome(),
      args,
      headless: this.options.headless,
    };
  }

  /**
   * Why the pool cannot start a session now, or undefined when it can: it is closed, no Chromium
   * executable is there, or the latest browser start failed (for LAUNCH_FAILURE_MEMORY_MS after
   * it, so that a retry is let through again later).
   */
  unavailable(): string | undefined {
    if (this.closed) return "the browser pool is closed";
    const executable = this.options.executablePath ?? findChrome();
    if (!executable) return "no Chromium executable was found (CHROME_PATH)";
    try {
      accessSync(executable, constants.X_OK);
      if (!statSync(executable).isFile()) throw new Error("not a file");
    } catch {
      return "the Chromium executable cannot be run";
    }
    if (this.launchFailedAt !== undefined && Date.now() - this.launchFailedAt < LAUNCH_FAILURE_MEMORY_MS)
      return "the latest browser start failed";
    return undefined;
  }

  /** Browsers running or starting. */
  get size(): number {
    return this.slots.size;
  }

  /** Sessions placed in the pool's browsers. */
  get sessions(): number {
    let total = 0;
    for (const slot of this.slots) total += slot.sessions;
    return total;
  }

  /** Process ids of the running browsers (for memory figures). */
  browserPids(): number[] {
    return [...this.slots].flatMap((slot) => (slot.browser?.launched ? [slot.browser.launched.pid] : []));
  }

  /** Called when a browser goes away on its own (crashed, killed): its sessions are lost. */
  onBrowserLost(handler: (browser: Browser) => void): () => void {
    this.lostHandlers.add(handler);
    return () => this.lostHandlers.delete(handler);
  }

  /**
   * A place for a session of `projectId`: in the least busy browser of that project with room
   * (isolation "project"), else in a new browser. 429 when the pool is at `maxBrowsers` and none
   * of them may take it.
   */
  async acquire(projectId: string): Promise<BrowserLease> {
    if (this.closed) throw new ApiError(503, "SHUTTING_DOWN", "The service is shutting down.");
    const owner = this.options.isolation === "project" ? projectId : `session:${++this.nextPrivateOwner}`;
    const slot = this.choose(owner);
    slot.sessions++;
    clearTimeout(slot.linger);
    slot.linger = undefined;
    let browser: Browser;
    try {
      browser = await slot.ready;
    } catch (error) {
      slot.sessions--;
      throw error;
    }
    let released = false;
    return {
      browser,
      release: () => {
        if (released) return;
        released = true;
        slot.sessions--;
        if (slot.sessions === 0 && this.slots.has(slot)) {
          // A session's own browser has no one to wait for.
          if (this.options.isolation === "session") void this.closeSlot(slot);
          else this.scheduleLinger(slot);
        }
      },
    };
  }

  private choose(owner: string): Slot {
    const open = [...this.slots].filter((slot) => !slot.closing);
    const own = open.filter((slot) => slot.owner === owner);
    const leastBusy = (slots: Slot[]) =>
      slots.reduce((best, slot) => (slot.sessions < best.sessions ? slot : best));
    const withRoom = own.filter((slot) => slot.sessions < this.options.sessionsPerBrowser);
    if (withRoom.length > 0) return leastBusy(withRoom);
    if (open.length < this.options.maxBrowsers) return this.launch(owner);
    // A lingering browser of someone else gives its place up.
    const idle = open.find((slot) => slot.sessions === 0 && slot.owner !== owner);
    if (idle) {
      void this.closeSlot(idle);
      return this.launch(owner);
    }
    // The tenant's own browsers are full and no more may start: share the least busy of them.
    if (own.length > 0) return leastBusy(own);
    throw new ApiError(
      429,
      "AT_CAPACITY",
      `Every browser of this service (--max-browsers ${this.options.maxBrowsers}) is in use by other ` +
        `${this.options.isolation === "project" ? "projects" : "sessions"}, and sessions of different ` +
        `${this.options.isolation === "project" ? "projects" : "sessions"} never share one. Retry later.`,
    );
  }

  private launch(owner: string): Slot {
    const slot: Slot = {
      owner,
      ready: undefined!,
      browser: undefined,
      sessions: 0,
      linger: undefined,
      closing: undefined,
    };
    slot.ready = (async () => {
      // No DevTools port: the pipe to this process is the only way in.
      const launched = await launchChrome({
        headless: this.options.headless,
        debuggingPort: false,
        args: this.options.args,
        ...(this.options.executablePath ? { executablePath: this.options.executablePath } : {}),
      });
      try {
        return await Browser.connect(launched, {});
      } catch (error) {
        await launched.kill();
        throw error;
      }
    })();
    this.slots.add(slot);
    slot.ready.then(
      (browser) => {
        this.launchFailedAt = undefined;
        slot.browser = browser;
        browser.onDisconnected(() => this.disconnected(slot, browser));
        // The pool closed while this browser was starting.
        if (this.closed) this.closeSlot(slot);
      },
      () => {
        this.launchFailedAt = Date.now();
        this.slots.delete(slot);
      },
    );
    return slot;
  }

  private scheduleLinger(slot: Slot): void {
    clearTimeout(slot.linger);
    slot.linger = setTimeout(() => {
      slot.linger = undefined;
      if (slot.sessions === 0) this.closeSlot(slot);
    }, this.options.lingerMs);
    slot.linger.unref();
  }

  private closeSlot(slot: Slot): Promise<void> {
    if (slot.closing) return slot.closing;
    clearTimeout(slot.linger);
    this.slots.delete(slot);
    const closing = slot.ready
      .then((browser) => browser.close())
      .catch(() => undefined)
      .finally(() => this.closings.delete(closing));
    slot.closing = closing;
    this.closings.add(closing);
    return closing;
  }

  private disconnected(slot: Slot, browser: Browser): void {
    if (slot.closing) return;
    // Crashed or killed: make sure nothing of it stays, and tell the sessions that lived there.
    this.slots.delete(slot);
    clearTimeout(slot.linger);
    slot.closing = browser.kill().catch(() => undefined);
    for (const handler of [...this.lostHandlers]) handler(browser);
  }

  /** Closes every browser (waiting for their processes to exit). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots].map((slot) => this.closeSlot(slot)));
    await Promise.all([...this.closings]);
  }
}
