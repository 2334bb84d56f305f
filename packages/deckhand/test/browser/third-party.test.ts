// Pages of Playwright, Puppeteer and Patchright, connected to Deckhand's browser through
// connectURL(), are accepted by context.setActivePage(): Deckhand finds its own page for the same
// tab and makes it active. The libraries only ever connect (nothing is downloaded) and disconnect
// without closing the browser.

import type { Page } from "deckhand";
import { chromium as patchright } from "patchright-core";
import { chromium as playwright } from "playwright-core";
import puppeteer from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type BrowserFixture,
  closeFixture,
  closeOtherPages,
  eventually,
  openFixture,
  textOf,
} from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;

beforeAll(async () => {
  fx = await openFixture();
  firstPage = fx.dh.context.pages()[0]!;
});

afterEach(async () => {
  await closeOtherPages(fx, firstPage);
  await fx.dh.context.setActivePage(firstPage);
});

afterAll(async () => {
  await closeFixture(fx);
});

/** What the tests need of a library: open a page on a URL, read a text, and let go of the browser. */
interface Library {
  newPage(url: string): Promise<{ page: object; text(selector: string): Promise<string | null> }>;
  /** The library's object for a tab Deckhand opened, found by URL. */
  existingPage(url: string): Promise<object>;
  disconnect(): Promise<void>;
}

async function connectPlaywrightLike(chromium: typeof playwright): Promise<Library> {
  const browser = await chromium.connectOverCDP(fx.dh.connectURL());
  const context = browser.contexts()[0]!;
  return {
    async newPage(url) {
      const page = await context.newPage();
      await page.goto(url);
      return { page, text: (selector) => page.textContent(selector) };
    },
    async existingPage(url) {
      // The library learns of the tab's navigation from its own events, a moment later.
      const page = await eventually(
        async () => context.pages().find((p) => p.url() === url),
        (p) => p !== undefined,
      );
      if (!page) throw new Error(`no page at ${url}: ${context.pages().map((p) => p.url())}`);
      return page;
    },
    async disconnect() {
      // Let the library finish setting up the tabs it attached to (one round trip each) before
      // letting go; see the note on Patchright in the root vitest.config.ts.
      await Promise.all(context.pages().map((p) => p.evaluate(() => 1).catch(() => 0)));
      // For a browser it connected to over CDP, close() only disconnects.
      await browser.close();
    },
  };
}

async function connectPuppeteer(): Promise<Library> {
  const browser = await puppeteer.connect({ browserWSEndpoint: fx.dh.connectURL(), defaultViewport: null });
  return {
    async newPage(url) {
      const page = await browser.newPage();
      await page.goto(url);
      return { page, text: (selector) => page.$eval(selector, (el) => el.textContent) };
    },
    async existingPage(url) {
      const page = await eventually(
        async () => (await browser.pages()).find((p) => p.url() === url),
        (p) => p !== undefined,
      );
      if (!page) throw new Error(`no page at ${url}`);
      return page;
    },
    disconnect: () => browser.disconnect(),
  };
}

const libraries: [string, () => Promise<Library>][] = [
  ["Playwright", () => connectPlaywrightLike(playwright)],
  ["Puppeteer", connectPuppeteer],
  ["Patchright", () => connectPlaywrightLike(patchright as unknown as typeof playwright)],
];

describe.each(libraries)("a %s page", (_name, connect) => {
  let library: Library;

  beforeAll(async () => {
    library = await connect();
  });

  afterAll(async () => {
    await library?.disconnect();
  });

  it("that the library opened is accepted by setActivePage, which returns Deckhand's page for the same tab", async () => {
    const url = fx.site.url("index.html");
    const { page } = await library.newPage(url);
    const ours = await fx.dh.context.setActivePage(page as never);
    expect(ours.url()).toBe(url);
    expect(fx.dh.context.pages()).toContain(ours);
    expect(fx.dh.context.activePage()).toBe(ours);
    expect(fx.dh.page).toBe(ours);
  });

  it("is the same tab: what Deckhand does there, the library sees", async () => {
    const { page, text } = await library.newPage(fx.site.url("index.html"));
    const ours = await fx.dh.context.setActivePage(page as never);
    await ours.locator("#increment").click();
    expect(await text("#count")).toBe("1");
    expect(await textOf(ours, "#count")).toBe("1");
  });

  it("of a tab Deckhand opened maps back to that very page", async () => {
    const url = fx.site.url("form.html");
    const deckhandPage = await fx.dh.context.newPage(url);
    await fx.dh.context.setActivePage(firstPage);
    const theirs = await library.existingPage(url);
    const ours = await fx.dh.context.setActivePage(theirs as never);
    expect(ours).toBe(deckhandPage);
    expect(ours.targetId).toBe(deckhandPage.targetId);
    expect(fx.dh.context.activePage()).toBe(deckhandPage);
  });
});

describe("after the libraries disconnect", () => {
  it("the browser and Deckhand's pages are still there and work", async () => {
    for (const [, connect] of libraries) await (await connect()).disconnect();
    expect(fx.dh.context.browser.isConnected()).toBe(true);
    const page = await fx.dh.context.newPage(fx.site.url("index.html"));
    await page.locator("#increment").click();
    expect(await textOf(page, "#count")).toBe("1");
    expect(await firstPage.evaluate(() => 1 + 1)).toBe(2);
  });
});
