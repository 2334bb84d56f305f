// The context: which pages are open and which one is active, including tabs the site opens.

import type { Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type BrowserFixture,
  closeFixture,
  closeOtherPages,
  eventually,
  openFixture,
  openPage,
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

/** Resolves with the next page the context reports. */
function nextPage(): Promise<Page> {
  return new Promise((resolve) => {
    const off = fx.dh.context.onPage((page) => {
      off();
      resolve(page);
    });
  });
}

describe("the first page", () => {
  it("exists after init() and is the active page", () => {
    const pages = fx.dh.context.pages();
    expect(pages).toHaveLength(1);
    expect(fx.dh.context.activePage()).toBe(pages[0]);
    expect(fx.dh.page).toBe(pages[0]);
  });

  it("is blank and usable", async () => {
    expect(firstPage.url()).toBe("about:blank");
    expect(await firstPage.evaluate(() => 6 * 7)).toBe(42);
  });
});

describe("newPage()", () => {
  it("opens a tab that joins pages() and becomes the active page", async () => {
    const page = await fx.dh.context.newPage();
    expect(fx.dh.context.pages()).toEqual([firstPage, page]);
    expect(fx.dh.context.activePage()).toBe(page);
    expect(page.url()).toBe("about:blank");
  });

  it("navigates the new tab when given a URL", async () => {
    const page = await fx.dh.context.newPage(fx.site.url("index.html"));
    expect(page.url()).toBe(fx.site.url("index.html"));
    expect(await page.title()).toBe("Deckhand fixture");
  });

  it("gives each tab its own document", async () => {
    const a = await openPage(fx, "index.html");
    const b = await openPage(fx, "form.html");
    expect(await a.title()).toBe("Deckhand fixture");
    expect(await b.title()).toBe("Sign in");
    expect(a.targetId).not.toBe(b.targetId);
  });
});

describe("setActivePage()", () => {
  it("makes an older tab the active page again and returns it", async () => {
    const newer = await fx.dh.context.newPage();
    expect(fx.dh.context.activePage()).toBe(newer);
    const returned = await fx.dh.context.setActivePage(firstPage);
    expect(returned).toBe(firstPage);
    expect(fx.dh.context.activePage()).toBe(firstPage);
    expect(fx.dh.page).toBe(firstPage);
  });

  it("brings the chosen tab to the front, so the page sees itself visible and focused", async () => {
    const other = await openPage(fx, "index.html");
    await fx.dh.context.newPage();
    const state = () =>
      other.evaluate(() => ({ visibility: document.visibilityState, focus: document.hasFocus() }));
    expect(await eventually(state, (s) => s.visibility === "hidden")).toEqual({
      visibility: "hidden",
      focus: false,
    });
    await fx.dh.context.setActivePage(other);
    expect(await eventually(state, (s) => s.visibility === "visible")).toEqual({
      visibility: "visible",
      focus: true,
    });
  });

  it("refuses a closed page", async () => {
    const page = await fx.dh.context.newPage();
    await page.close();
    await expect(fx.dh.context.setActivePage(page)).rejects.toThrow(/closed/);
  });

  it("refuses something that is not a page", async () => {
    await expect(fx.dh.context.setActivePage({} as never)).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});

describe("tabs the site opens", () => {
  it("adds a target=_blank tab to pages() and makes it the active page", async () => {
    const opener = await openPage(fx, "popup.html");
    const opened = nextPage();
    await opener.locator("#new-tab-link").click();
    const popup = await opened;
    expect(fx.dh.context.pages()).toContain(popup);
    expect(fx.dh.context.activePage()).toBe(popup);
    expect(popup.openerId).toBe(opener.targetId);
    await popup.waitForLoadState("load");
    expect(popup.url()).toBe(fx.site.url("index.html"));
    expect(await popup.title()).toBe("Deckhand fixture");
  });

  it("adds a window.open() window to pages() and makes it the active page", async () => {
    const opener = await openPage(fx, "popup.html");
    const opened = nextPage();
    await opener.locator("#open-window").click();
    const popup = await opened;
    expect(fx.dh.context.activePage()).toBe(popup);
    await popup.waitForLoadState("load");
    expect(await popup.title()).toBe("Sign in");
    expect(await opener.locator("#log").textContent()).toContain("window.open returned a window");
  });

  it("gives back the active role to the opener when the popup closes", async () => {
    const opener = await openPage(fx, "popup.html");
    const opened = nextPage();
    await opener.locator("#open-window").click();
    const popup = await opened;
    await popup.close();
    expect(fx.dh.context.pages()).not.toContain(popup);
    expect(fx.dh.context.activePage()).toBe(opener);
  });
});

describe("closing tabs", () => {
  it("removes a closed tab from pages()", async () => {
    const page = await fx.dh.context.newPage();
    expect(fx.dh.context.pages()).toContain(page);
    await page.close();
    expect(page.isClosed()).toBe(true);
    expect(fx.dh.context.pages()).toEqual([firstPage]);
  });

  it("removes a tab the page closes itself (window.close)", async () => {
    const opener = await openPage(fx, "popup.html");
    const opened = nextPage();
    await opener.locator("#open-window").click();
    const popup = await opened;
    await popup.evaluate(() => window.close());
    await eventually(
      async () => popup.isClosed(),
      (closed) => closed,
    );
    expect(popup.isClosed()).toBe(true);
    expect(fx.dh.context.pages()).not.toContain(popup);
    expect(fx.dh.context.activePage()).toBe(opener);
  });

  it("makes the newest remaining tab active when the active one closes", async () => {
    const a = await fx.dh.context.newPage();
    const b = await fx.dh.context.newPage();
    expect(fx.dh.context.activePage()).toBe(b);
    await b.close();
    expect(fx.dh.context.activePage()).toBe(a);
  });

  it("fails calls on a closed tab with ServiceTargetClosedError", async () => {
    const page = await openPage(fx, "index.html");
    await page.close();
    await expect(page.evaluate(() => 1)).rejects.toMatchObject({ name: "ServiceTargetClosedError" });
    await expect(page.goto(fx.site.url("form.html"))).rejects.toMatchObject({
      name: "ServiceTargetClosedError",
    });
  });
});
