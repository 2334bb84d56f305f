// The pages of one browser context (the browser's default one, or an isolated one made for a
// service session), and which of them is active: the page AI operations use by default.

import { ServiceTargetClosedError } from "../errors.ts";
import type { Browser } from "./browser.ts";
import { type ClearCookiesOptions, ContextCookies, type Cookie, type CookieParam } from "./cookies.ts";
import type { Page } from "./page.ts";
import { checkHeaders, type InitScript, initScriptSource } from "./session-settings.ts";
import { type AnyPage, resolvePage } from "./third-party.ts";

export class Context {
  readonly browser: Browser;
  /** The protocol's browserContextId; undefined for the default context. */
  readonly id: string | undefined;
  private readonly pageList: Page[] = [];
  private active: Page | undefined;
  private readonly pageHandlers = new Set<(page: Page) => void>();
  private headers: Record<string, string> = {};
  private readonly scripts: string[] = [];
  private readonly cookieJar: ContextCookies;

  /** @internal Contexts are made by the browser. */
  constructor(browser: Browser, id: string | undefined) {
    this.browser = browser;
    this.id = id;
    this.cookieJar = new ContextCookies(browser.connection.root, id);
  }

  // ---------- cookies and headers ----------

  /** The context's cookies; with `urls`, only those a request to one of them would carry. */
  cookies(urls?: string | string[]): Promise<Cookie[]> {
    return this.cookieJar.list(urls);
  }

  /** Adds cookies; each needs a `url`, or a `domain` (and `path`, default "/"). */
  addCookies(cookies: CookieParam[]): Promise<void> {
    return this.cookieJar.add(cookies);
  }

  /** Removes every cookie, or those whose name, domain and path match what is given. */
  clearCookies(options?: ClearCookiesOptions): Promise<void> {
    return this.cookieJar.clear(options);
  }

  /** Headers sent with every request of every page of this context (a page's own win). */
  async setExtraHTTPHeaders(headers: Record<string, string>): Promise<void> {
    this.headers = checkHeaders(headers, "context.setExtraHTTPHeaders");
    await Promise.all(this.pages().map((page) => page.contextHeadersChanged()));
  }

  /** @internal */
  extraHTTPHeaders(): Record<string, string> {
    return this.headers;
  }

  /**
   * Runs `script` in every document of every page of this context from now on (pages opened later
   * too), before the document's own scripts. A function is called with `arg`.
   */
  async addInitScript<Arg>(script: InitScript<Arg>, arg?: Arg): Promise<void> {
    const source = await initScriptSource(script, arg);
    this.scripts.push(source);
    await Promise.all(this.pages().map((page) => page.contextScriptAdded(source)));
  }

  /** @internal */
  initScripts(): readonly string[] {
    return this.scripts;
  }

  /** Open pages, oldest first. */
  pages(): Page[] {
    return [...this.pageList];
  }

  /** The page operations act on by default: the newest tab opened, unless setActivePage chose another. */
  activePage(): Page | undefined {
    return this.active;
  }

  /** Makes a page (a Deckhand page, or a Playwright/Puppeteer/Patchright page of this browser) the active one. */
  async setActivePage(page: AnyPage): Promise<Page> {
    const resolved = await resolvePage(this.browser, page);
    if (resolved.isClosed()) throw new ServiceTargetClosedError("setActivePage: that page is closed.");
    this.active = resolved;
    await resolved.bringToFront().catch(() => undefined);
    return resolved;
  }

  /** Opens a new tab (optionally navigating it) and makes it the active page. */
  async newPage(url?: string): Promise<Page> {
    const { targetId } = await this.browser.connection.root.send("Target.createTarget", {
      url: "about:blank",
      ...(this.id ? { browserContextId: this.id } : {}),
    });
    const page = await this.browser.waitForPage(targetId);
    this.active = page;
    if (url && url !== "about:blank") await page.goto(url);
    return page;
  }

  /** Calls `handler` for every page that opens from now on (new tabs, popups). */
  onPage(handler: (page: Page) => void): () => void {
    this.pageHandlers.add(handler);
    return () => this.pageHandlers.delete(handler);
  }

  /** @internal */
  addPage(page: Page): void {
    this.pageList.push(page);
    // The first page, and any tab the site opens, become active (that is where the user's flow went).
    if (!this.active || page.openerId) this.active = page;
    page.onClose(() => this.removePage(page));
    for (const handler of [...this.pageHandlers]) handler(page);
  }

  private removePage(page: Page): void {
    const index = this.pageList.indexOf(page);
    if (index >= 0) this.pageList.splice(index, 1);
    if (this.active === page) {
      const opener = page.openerId ? this.pageList.find((p) => p.targetId === page.openerId) : undefined;
      this.active = opener ?? this.pageList[this.pageList.length - 1];
    }
  }

  /** Closes every page; an isolated context is disposed of entirely. */
  async close(): Promise<void> {
    if (this.id) {
      await this.browser.connection.root
        .send("Target.disposeBrowserContext", { browserContextId: this.id })
        .catch(() => undefined);
      this.browser.forgetContext(this);
      return;
    }
    await Promise.all(this.pages().map((p) => p.close()));
  }
}
