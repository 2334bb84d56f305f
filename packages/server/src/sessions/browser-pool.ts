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
//
// Warm browsers (`warmBrowsers`, --warm-browsers): a few browsers launched ahead of need, owned by
// no one, so that a tenant's first session does not wait for Chromium to start. A warm browser has
// had no context and no page of anyone's; the first tenant that needs a browser takes it, and from
// then on it is that tenant's slot like any other (closed when it lingers, never returned to the
// warm set, never given to another tenant). Another is launched in the background to replace it.
// Warm browsers count under `maxBrowsers`: they fill only places no tenant uses, and are taken
// before a tenant's browser is started, so they never keep a tenant out.

import { accessSync, constants, statSync } from "node:fs";
import { Browser, buildChromeArgs, findChrome, launchChrome } from "deckhand";
import {
  DEFAULT_BROWSER_LINGER_MS,
  DEFAULT_ISOLATION,
  DEFAULT_MAX_BROWSERS,
  DEFAULT_SESSIONS_PER_BROWSER,
  DEFAULT_WARM_BROWSERS,
} from "../defaults.ts";
import { ApiError } from "../errors.ts";
import type { NodeReadiness } from "../store/store.ts";

/** How long after a failed browser start the pool reports itself unavailable (/readyz). */
const LAUNCH_FAILURE_MEMORY_MS = 30_000;
/**
 * Waits before launching a warm browser again after warm browsers failed to start or died waiting,
 * doubling from the first to the last with each failure in a row: a Chromium that cannot start is
 * not relaunched in a loop, and one that came back is warmed again within a minute.
 */
const WARM_RETRY_FIRST_MS = 1_000;
const WARM_RETRY_MAX_MS = 60_000;

/**
 * How far over `sessionsPerBrowser` (a fraction of it) a running browser of a tenant is filled
 * while another of the tenant's browsers is launching (see choose): 8 sessions a browser take 4
 * more in a burst; 1 takes none.
 */
const BURST_HEADROOM = 0.5;

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
  /**
   * Browsers kept launched and unused, each for the next tenant that needs a browser (default
   * DEFAULT_WARM_BROWSERS; 0: none, every browser is launched when a tenant needs it). At most
   * `maxBrowsers`, and only in places no tenant's browser takes. They start with warmUp().
   */
  warmBrowsers?: number;
}

/** The pool's browsers and where its tenants' browsers came from (for metrics and placement). */
export interface BrowserPoolStats {
  /** Warm browsers launched and waiting for a tenant. */
  warm: number;
  /** Warm browsers still starting. */
  warming: number;
  /** Browsers of tenants (running or starting, lingering ones included): the pool's `size`. */
  assigned: number;
  /** Tenants' browsers that were warm ones, since the pool was made. */
  warmTaken: number;
  /** Tenants' browsers launched on demand (no warm one was there), since the pool was made. */
  coldLaunches: number;
  /** Warm browsers that died or failed to start before any tenant took them. */
  warmLost: number;
}

/** How many more sessions the pool can place now (see BrowserPool.freeCapacity). */
export interface PoolCapacity {
  /** Sessions that can still be placed (a browser launched for them when needed). */
  sessions: number;
  /** Of those, sessions that start without waiting for a browser launch: room in the tenant's own browsers and warm ones. */
  withoutLaunch: number;
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
  /** The tenant whose sessions this browser holds: a project id, or a session's own key; undefined while warm. */
  owner: string | undefined;
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
  private readonly warmHandlers = new Set<(browser: Browser) => void>();
  private readonly readinessHandlers = new Set<() => void>();
  private closed = false;
  private nextPrivateOwner = 0;
  /** When the latest browser start failed, unless one started since. */
  private launchFailedAt: number | undefined;
  /** Browsers launched for no one yet (see the top of this file); never in `slots`. */
  private readonly warm = new Set<Slot>();
  private warming = false;
  /** Warm browsers that failed to start or died waiting, in a row (see WARM_RETRY_FIRST_MS). */
  private warmFailures = 0;
  private warmRetry: NodeJS.Timeout | undefined;
  private readonly warmWaiters = new Set<() => void>();
  /** Sessions being set up that asked warm launches to wait for them (see holdWarm). */
  private warmHolds = 0;
  private readonly counts = { warmTaken: 0, coldLaunches: 0, warmLost: 0 };

  constructor(options: BrowserPoolOptions = {}) {
    this.options = {
      maxBrowsers: options.maxBrowsers ?? DEFAULT_MAX_BROWSERS,
      sessionsPerBrowser: options.sessionsPerBrowser ?? DEFAULT_SESSIONS_PER_BROWSER,
      lingerMs: options.lingerMs ?? DEFAULT_BROWSER_LINGER_MS,
      isolation: options.isolation ?? DEFAULT_ISOLATION,
      executablePath: options.executablePath,
      args: options.args ?? [],
      headless: options.headless ?? true,
      warmBrowsers: Math.min(
        options.warmBrowsers ?? DEFAULT_WARM_BROWSERS,
        options.maxBrowsers ?? DEFAULT_MAX_BROWSERS,
      ),
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

  /** Tenants' browsers running or starting (warm ones, owned by no one, are not counted: see stats()). */
  get size(): number {
    return this.slots.size;
  }

  /** The warm browsers wanted (`warmBrowsers`, at most `maxBrowsers`). */
  get warmTarget(): number {
    return this.options.warmBrowsers;
  }

  stats(): BrowserPoolStats {
    let warm = 0;
    for (const slot of this.warm) if (slot.browser) warm++;
    return {
      warm,
      warming: this.warm.size - warm,
      assigned: this.slots.size,
      ...this.counts,
    };
  }

  /**
   * How many more sessions of `projectId` (or of a project with no browser here, when undefined)
   * this pool can place now, and how many of them start without a browser launch: room in the
   * project's own browsers (isolation "project") plus the places of browsers not taken by busy
   * tenants (never started yet, warm, or lingering without a session), each worth
   * `sessionsPerBrowser` sessions (one under isolation "session"). The service's session limits
   * (--max-sessions, per project) are not the pool's: the caller applies them on top.
   */
  freeCapacity(projectId?: string): PoolCapacity {
    if (this.closed) return { sessions: 0, withoutLaunch: 0 };
    const perBrowser = this.options.isolation === "session" ? 1 : this.options.sessionsPerBrowser;
    let ownRoom = 0;
    let ownReadyRoom = 0;
    // Browsers whose place is not free: the project's own, and other tenants' with sessions (a
    // lingering one without sessions gives its place up when needed).
    let taken = 0;
    for (const slot of this.slots) {
      if (slot.closing) continue;
      const own = this.options.isolation === "project" && slot.owner === projectId;
      if (own) {
        const room = Math.max(0, perBrowser - slot.sessions);
        ownRoom += room;
        // A browser of the project's still launching: a session there would wait for it.
        if (slot.browser) ownReadyRoom += room;
        taken++;
      } else if (slot.sessions > 0) taken++;
    }
    const places = Math.max(0, this.options.maxBrowsers - taken);
    const warm = Math.min(places, this.stats().warm);
    return { sessions: ownRoom + places * perBrowser, withoutLaunch: ownReadyRoom + warm * perBrowser };
  }

  /**
   * What the pool can start now without a browser launch, for every tenant at once (what a
   * cluster node publishes for placement): `anyProject`, the places of warm browsers, for a project
   * with no browser here; `projects`, the room in each project's own launched browsers (isolation
   * "project" only: under "session" no browser takes a second session).
   */
  readiness(): NodeReadiness {
    const anyProject = this.freeCapacity(undefined).withoutLaunch;
    const projects: Record<string, number> = {};
    if (this.options.isolation === "project" && !this.closed) {
      for (const slot of this.slots) {
        if (slot.closing || !slot.browser || slot.owner === undefined) continue;
        const room = this.options.sessionsPerBrowser - slot.sessions;
        if (room > 0) projects[slot.owner] = (projects[slot.owner] ?? 0) + room;
      }
    }
    return { anyProject, projects };
  }

  /**
   * Called (synchronously, so coalesce) whenever what the pool can start without a launch may
   * have changed: a browser ready, taken, lost or closed, a session placed or released.
   */
  onReadinessChange(handler: () => void): () => void {
    this.readinessHandlers.add(handler);
    return () => this.readinessHandlers.delete(handler);
  }

  private readinessChanged(): void {
    for (const handler of [...this.readinessHandlers]) handler();
  }

  /**
   * Starts keeping `warmBrowsers` warm browsers (in the background: this does not wait for them).
   * The service calls it once it is up; a pool nobody warms launches browsers only on demand.
   */
  warmUp(): void {
    if (this.closed || this.options.warmBrowsers === 0) return;
    this.warming = true;
    this.refill();
  }

  /**
   * Resolves once the pool holds as many warm browsers ready as it may (`warmBrowsers`, less the
   * places tenants' browsers take), or once it has closed: the signal that the pool refilled.
   */
  whenWarm(): Promise<void> {
    if (this.warmSettled()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!this.warmSettled()) return;
        this.warmWaiters.delete(check);
        resolve();
      };
      this.warmWaiters.add(check);
    });
  }

  private warmSettled(): boolean {
    return this.closed || !this.warming || this.stats().warm >= this.warmWanted();
  }

  /** Warm browsers wanted now: the target, in the places tenants' open browsers leave free. */
  private warmWanted(): number {
    let open = 0;
    for (const slot of this.slots) if (!slot.closing) open++;
    return Math.max(0, Math.min(this.options.warmBrowsers, this.options.maxBrowsers - open));
  }

  private warmChanged(): void {
    for (const check of [...this.warmWaiters]) check();
    this.readinessChanged();
  }

  /**
   * Launches warm browsers up to what is wanted, unless a retry after failures is pending, a
   * tenant's browser is starting, or a session is being set up (holdWarm): a launch is the
   * costliest thing the pool does, and a warm one is for a later start, so it does not compete with
   * one a session waits for (a burst of starts that fills a project's browsers would otherwise
   * launch its replacement warm browser at the same time). It is launched once they are done.
   */
  private refill(): void {
    if (this.closed || !this.warming || this.warmRetry || this.warmHolds > 0) return;
    for (const slot of this.slots) if (!slot.browser && !slot.closing) return;
    // Lingering browsers of other tenants are kept: a tenant that comes back finds its browser.
    // A warm browser only takes a place no browser holds.
    while (this.warm.size < this.warmWanted()) this.launch(undefined);
    this.warmChanged();
  }

  /**
   * Holds warm launches back until the returned function is called (once; more calls do nothing):
   * the service holds them while a session's context and first page are being made. A browser
   * launch takes as much CPU as several of those, and the warm browser is for a later start: in a
   * burst of starts, launched beside them, it slowed every one of them.
   */
  holdWarm(): () => void {
    this.warmHolds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.warmHolds--;
      if (this.warmHolds === 0) this.refillSoon();
    };
  }

  /**
   * refill() once the current step is done: a place freed in the middle of choose() (an idle
   * browser closed for a new tenant's) is the new tenant's, not a warm browser's.
   */
  private refillSoon(): void {
    if (this.closed || !this.warming) return;
    queueMicrotask(() => this.refill());
  }

  /** A warm browser failed to start or died before anyone took it: try again later, backing off. */
  private warmFailed(): void {
    this.counts.warmLost++;
    this.warmFailures++;
    this.warmChanged();
    if (this.closed || !this.warming || this.warmRetry) return;
    const delay = Math.min(WARM_RETRY_MAX_MS, WARM_RETRY_FIRST_MS * 2 ** (this.warmFailures - 1));
    this.warmRetry = setTimeout(() => {
      this.warmRetry = undefined;
      this.refill();
    }, delay);
    this.warmRetry.unref();
  }

  /**
   * A warm browser for `owner`, or undefined when there is none: one that is running (never one
   * whose process has exited, even if its disconnection is not yet handled), else the one that has
   * been starting longest. It becomes `owner`'s slot, and another is launched in its place.
   */
  private takeWarm(owner: string): Slot | undefined {
    let chosen: Slot | undefined;
    for (const slot of this.warm) {
      if (slot.browser) {
        if (slot.browser.isConnected() && !slot.browser.launched?.hasExited()) {
          chosen = slot;
          break;
        }
      } else chosen ??= slot;
    }
    if (!chosen) return undefined;
    this.warm.delete(chosen);
    chosen.owner = owner;
    this.slots.add(chosen);
    this.counts.warmTaken++;
    this.refillSoon();
    return chosen;
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

  /** Process ids of the warm browsers that are running (launched, not yet anyone's). */
  warmPids(): number[] {
    return [...this.warm].flatMap((slot) => (slot.browser?.launched ? [slot.browser.launched.pid] : []));
  }

  /** Called when a warm browser has started (it is no one's yet). */
  onWarmReady(handler: (browser: Browser) => void): () => void {
    this.warmHandlers.add(handler);
    return () => this.warmHandlers.delete(handler);
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
    this.readinessChanged();
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
        this.readinessChanged();
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
    // A burst: the tenant's browsers are full and another of its browsers is launching already.
    // Launching yet another beside it would make both, and every session waiting in them, take
    // longer on a busy CPU; a running browser of the tenant takes up to half as many again
    // (BURST_HEADROOM) instead, and the next start after the burst launches as usual.
    if (own.some((slot) => !slot.browser)) {
      const ceiling =
        this.options.sessionsPerBrowser + Math.floor(this.options.sessionsPerBrowser * BURST_HEADROOM);
      const running = own.filter((slot) => slot.browser && slot.sessions < ceiling);
      if (running.length > 0) return leastBusy(running);
    }
    // A warm browser takes a place of its own under maxBrowsers already.
    const warm = this.takeWarm(owner);
    if (warm) return warm;
    if (open.length < this.options.maxBrowsers) return this.coldLaunch(owner);
    // A lingering browser of someone else gives its place up.
    const idle = open.find((slot) => slot.sessions === 0 && slot.owner !== owner);
    if (idle) {
      void this.closeSlot(idle);
      return this.coldLaunch(owner);
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

  private coldLaunch(owner: string): Slot {
    this.counts.coldLaunches++;
    return this.launch(owner);
  }

  /** Launches a browser: `owner`'s slot, or a warm one (owner undefined). */
  private launch(owner: string | undefined): Slot {
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
    if (owner === undefined) this.warm.add(slot);
    else this.slots.add(slot);
    slot.ready.then(
      (browser) => {
        this.launchFailedAt = undefined;
        slot.browser = browser;
        browser.onDisconnected(() => this.disconnected(slot, browser));
        // A browser killed by someone else can leave its pipe open (on Debian the launched
        // process is the launcher script, which holds the pipe too): the launched process's exit
        // is the sure sign that it is gone.
        void browser.launched?.exited.then(() => this.disconnected(slot, browser));
        // The pool closed while this browser was starting.
        if (this.closed) this.closeSlot(slot);
        else if (this.warm.has(slot)) {
          this.warmFailures = 0;
          for (const handler of [...this.warmHandlers]) handler(browser);
          this.warmChanged();
        } else {
          this.readinessChanged();
          // A warm browser deferred while this one started (see refill).
          this.refillSoon();
        }
      },
      () => {
        this.launchFailedAt = Date.now();
        if (this.slots.delete(slot)) this.refillSoon();
        if (this.warm.delete(slot)) this.warmFailed();
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
    this.warm.delete(slot);
    const closing = slot.ready
      .then((browser) => browser.close())
      .catch(() => undefined)
      .finally(() => this.closings.delete(closing));
    slot.closing = closing;
    this.closings.add(closing);
    this.readinessChanged();
    // Its place is free: a warm browser may take it.
    if (slot.owner !== undefined) this.refillSoon();
    return closing;
  }

  private disconnected(slot: Slot, browser: Browser): void {
    if (slot.closing) return;
    // Crashed or killed: make sure nothing of it stays, and tell the sessions that lived there.
    clearTimeout(slot.linger);
    slot.closing = browser.kill().catch(() => undefined);
    this.closings.add(slot.closing);
    const closing = slot.closing;
    void closing.finally(() => this.closings.delete(closing));
    if (this.warm.delete(slot)) {
      // Nobody had it: nothing to tell, only to replace.
      this.warmFailed();
      return;
    }
    this.slots.delete(slot);
    for (const handler of [...this.lostHandlers]) handler(browser);
    this.readinessChanged();
    this.refillSoon();
  }

  /** Closes every browser, warm ones included (waiting for their processes to exit). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.warmRetry);
    this.warmRetry = undefined;
    await Promise.all([...this.slots, ...this.warm].map((slot) => this.closeSlot(slot)));
    await Promise.all([...this.closings]);
    this.warmChanged();
  }
}
