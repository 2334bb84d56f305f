// Clicks that cannot reach their element fail with ServiceClickError saying why (covered, by
// what; hidden; disabled; detached), without clicking whatever is in the way.

import type { Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, closeOtherPages, openFixture, textOf, visit } from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;

beforeAll(async () => {
  fx = await openFixture();
  firstPage = fx.dh.context.pages()[0]!;
});

afterEach(async () => {
  await closeOtherPages(fx, firstPage);
});

/** The file's one tab, on a fresh document of `path`. */
const show = (path: string) => visit(fx, firstPage, path);

afterAll(async () => {
  await closeFixture(fx);
});

const logLines = async (page: Page) => ((await textOf(page, "#log")) ?? "").split("\n").filter(Boolean);

async function clickError(page: Page, selector: string, timeout = 500): Promise<Error> {
  const error = await page
    .locator(selector)
    .click({ timeout })
    .then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  if (!error) throw new Error(`clicking ${selector} did not fail`);
  return error;
}

describe("covered elements", () => {
  it("fail with ServiceClickError naming the selector and the element on top", async () => {
    const page = await show("overlay.html");
    const error = await clickError(page, "#covered");
    expect(error).toMatchObject({ name: "ServiceClickError", code: "CLICK", selector: "#covered" });
    expect(error.message).toContain("covered by");
    expect(error.message).toContain('<div id="overlay">');
  });

  it("are not clicked, and neither is what covers them", async () => {
    const page = await show("overlay.html");
    await clickError(page, "#covered");
    expect(await logLines(page)).toEqual([]);
  });

  it("name a cookie banner by its id and text", async () => {
    const page = await show("overlay.html");
    const error = await clickError(page, "#behind-banner");
    expect(error.message).toContain('id="cookie-banner"');
    expect(error.message).toContain("We use cookies");
  });

  it("can be clicked once the banner is gone", async () => {
    const page = await show("overlay.html");
    await page.locator("#accept-cookies").click();
    await page.locator("#behind-banner").click();
    expect(await logLines(page)).toEqual(["cookies accepted", "behind-banner clicked"]);
  });

  it("are clicked when the cover goes away before the timeout", async () => {
    const page = await show("overlay.html");
    // The banner goes once the click has measured the button (and so met the banner) the first
    // time: tied to the click's own steps, not to a page timer, which a busy machine can delay past
    // the second after which a still banner is reported. The timeout bounds a stall only.
    await page.evaluate(() => {
      const el = document.getElementById("behind-banner")!;
      const measure = el.getClientRects;
      el.getClientRects = function (this: Element) {
        el.getClientRects = measure;
        setTimeout(() => document.getElementById("cookie-banner")!.remove(), 0);
        return measure.call(this);
      };
    });
    await page.locator("#behind-banner").click({ timeout: 30_000 });
    expect(await logLines(page)).toEqual(["behind-banner clicked"]);
  });

  it("do not keep an element above the overlay from being clicked", async () => {
    const page = await show("overlay.html");
    await page.locator("#free").click();
    expect(await logLines(page)).toEqual(["free clicked"]);
  });

  it("get the click with force: true, which skips the checks and clicks the element's centre", async () => {
    const page = await show("overlay.html");
    await page.locator("#covered").click({ force: true, timeout: 500 });
    expect(await logLines(page)).toEqual(["overlay clicked"]);
  });
});

describe("hidden elements", () => {
  for (const id of [
    "display-none",
    "visibility-hidden",
    "hidden-attribute",
    "zero-size",
    "in-hidden-parent",
  ]) {
    it(`fail with ServiceClickError saying #${id} is not visible`, async () => {
      const page = await show("hidden.html");
      const error = await clickError(page, `#${id}`, 300);
      expect(error).toMatchObject({ name: "ServiceClickError", selector: `#${id}` });
      expect(error.message).toContain("not visible");
      expect(await logLines(page)).toEqual([]);
    });
  }

  it("are clicked once they become visible", async () => {
    const page = await show("hidden.html");
    await page.evaluate(() =>
      setTimeout(() => {
        document.getElementById("display-none")!.style.display = "inline-block";
      }, 150),
    );
    // Only a stall reaches the timeout (a busy machine can run the page's timer late).
    await page.locator("#display-none").click({ timeout: 30_000 });
    expect(await logLines(page)).toEqual(["display-none clicked"]);
  });
});

describe("disabled elements", () => {
  it("fail with ServiceClickError saying the element is disabled", async () => {
    const page = await show("index.html");
    await page.evaluate(() => {
      (document.getElementById("increment") as HTMLButtonElement).disabled = true;
    });
    const error = await clickError(page, "#increment", 300);
    expect(error).toMatchObject({ name: "ServiceClickError" });
    expect(error.message).toContain("disabled");
  });
});

describe("detached elements", () => {
  it("fail with ServiceClickError saying the element was detached", async () => {
    // Found, but covered; then removed from the document while the click still waits. The page
    // removes it right after the click first measured it, so that the order is certain.
    const page = await show("overlay.html");
    await page.evaluate(() => {
      const el = document.getElementById("covered")!;
      const measure = el.getClientRects;
      el.getClientRects = function (this: Element) {
        setTimeout(() => el.remove(), 0);
        return measure.call(this);
      };
    });
    // A locator looks its element up afresh, so the click waits out its timeout for the element to
    // come back before it says it went: the timeout is that wait. It only has to be long enough for
    // the first measurement (which removes the element) to come before it, on a loaded machine too.
    const error = await clickError(page, "#covered", 3_000);
    expect(error).toMatchObject({ name: "ServiceClickError", selector: "#covered" });
    expect(error.message).toContain("detached");
    expect(error.message).toContain('covered by another element: <div id="overlay">');
    expect(await page.locator("#covered").count()).toBe(0);
    expect(await logLines(page)).toEqual([]);
  });
});
