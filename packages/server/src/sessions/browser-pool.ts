// A few Chromium processes shared by every session of this node. A session gets an isolated browser
// context in one of them (its own cookies, storage and pages), never a browser of its own: a
// context costs megabytes, a browser process a hundred. Another browser is started only when the
// running ones are full, and one that has had no session for `lingerMs` is closed.

import { Browser, launchChrome } from "deckhand";
import {
  DEFAULT_BROWSER_LINGER_MS,
  DEFAULT_MAX_BROWSERS,
  DEFAULT_SESSIONS_PER_BROWSER,
} from "../defaults.ts";

export interface BrowserPoolOptions {
  /** Most Chromium processes at once. */
  maxBrowsers?: number;
  /** Sessions a browser takes before another is started (while fewer than maxBrowsers run). */
  sessionsPerBrowser?: number;
  /** Milliseconds a browser without sessions stays up (so the next session starts fast). */
  lingerMs?: number;
  /** Chrome or Chromium to run; default: what the library finds (CHROME_PATH, the usual paths). */
  executablePath?: string;
  /** Arguments added after the library's defaults. */
  args?: string[];
  /** Default true. */
  headless?: boolean;
}

/** A place in one of the pool's browsers. */
export interface BrowserLease {
  readonly browser: Browser;
  /** Gives the place back. Safe to call more than once. */
  release(): void;
}

interface Slot {
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

  constructor(options: BrowserPoolOptions = {}) {
    this.options = {
      maxBrowsers: options.maxBrowsers ?? DEFAULT_MAX_BROWSERS,
      sessionsPerBrowser: options.sessionsPerBrowser ?? DEFAULT_SESSIONS_PER_BROWSER,
      lingerMs: options.lingerMs ?? DEFAULT_BROWSER_LINGER_MS,
      executablePath: options.executablePath,
      args: options.args ?? [],
      headless: options.headless ?? true,
    };
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

  /** The DevTools ports the running browsers listen on (loopback), which sessions must not attach to. */
  debuggingPorts(): number[] {
    return [...this.slots].flatMap((slot) =>
      slot.browser?.wsEndpoint ? [Number(new URL(slot.browser.wsEndpoint).port)] : [],
    );
  }

  /** Called when a browser goes away on its own (crashed, killed): its sessions are lost. */
  onBrowserLost(handler: (browser: Browser) => void): () => void {
    this.lostHandlers.add(handler);
    return () => this.lostHandlers.delete(handler);
  }

  /** A place in the least busy browser with room, in a new browser when all are full. */
  async acquire(): Promise<BrowserLease> {
    if (this.closed) throw new Error("The browser pool is closed.");
    const slot = this.choose();
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
        if (slot.sessions === 0 && this.slots.has(slot)) this.scheduleLinger(slot);
      },
    };
  }

  private choose(): Slot {
    const open = [...this.slots].filter((slot) => !slot.closing);
    const leastBusy = (slots: Slot[]) =>
      slots.reduce((best, slot) => (slot.sessions < best.sessions ? slot : best));
    const withRoom = open.filter((slot) => slot.sessions < this.options.sessionsPerBrowser);
    if (withRoom.length > 0) return leastBusy(withRoom);
    if (open.length < this.options.maxBrowsers) return this.launch();
    // Every browser is full and no more may start: share the least busy one.
    return leastBusy(open);
  }

  private launch(): Slot {
    const slot: Slot = {
      ready: undefined!,
      browser: undefined,
      sessions: 0,
      linger: undefined,
      closing: undefined,
    };
    slot.ready = (async () => {
      const launched = await launchChrome({
        headless: this.options.headless,
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
        slot.browser = browser;
        browser.onDisconnected(() => this.disconnected(slot, browser));
        // The pool closed while this browser was starting.
        if (this.closed) this.closeSlot(slot);
      },
      () => this.slots.delete(slot),
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
