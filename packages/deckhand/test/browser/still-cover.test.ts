// A click on a covered element retries, since covers often go away by themselves; but a cover that
// stays put on a page where nothing happens (a cookie banner) is reported after about a second
// instead of the whole timeout, naming the cover, and nothing is clicked. A cover that moves (an
// animated loading overlay) is still waited for.

import { ServiceClickError } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoverWatch, STILL_COVER_MS } from "../../src/browser/still-cover.ts";
import { type BrowserFixture, closeFixture, openFixture, textOf, visit } from "./helpers.ts";

describe("CoverWatch", () => {
  const still = { scene: "0,0,800,120 #0", busy: false };
  const banner = '<div id="cookie-banner">';

  it("reports a cover once it has stayed the same, with nothing under way, for STILL_COVER_MS", () => {
    const watch = new CoverWatch({});
    expect(watch.still(banner, still, 0)).toBe(false);
    expect(watch.still(banner, still, STILL_COVER_MS - 1)).toBe(false);
    expect(watch.still(banner, still, STILL_COVER_MS)).toBe(true);
  });

  it("starts over when the cover moves, the page changes, or something is under way", () => {
    const watch = new CoverWatch({});
    watch.still(banner, still, 0);
    expect(watch.still(banner, { ...still, scene: "0,10,800,120 #0" }, STILL_COVER_MS)).toBe(false);
    expect(watch.still(banner, { ...still, scene: "0,10,800,120 #1" }, 2 * STILL_COVER_MS)).toBe(false);
    expect(watch.still(banner, { ...still, scene: "0,10,800,120 #1", busy: true }, 3 * STILL_COVER_MS)).toBe(
      false,
    );
    expect(watch.still(banner, { ...still, scene: "0,10,800,120 #1" }, 4 * STILL_COVER_MS)).toBe(false);
    expect(watch.still(banner, { ...still, scene: "0,10,800,120 #1" }, 5 * STILL_COVER_MS)).toBe(true);
  });

  it("tells a later click in the same frame at once about a cover already reported, while the page is unchanged", () => {
    const frame = {};
    const first = new CoverWatch(frame);
    first.still(banner, still, 0);
    expect(first.still(banner, still, STILL_COVER_MS)).toBe(true);
    expect(new CoverWatch(frame).still(banner, still, 10 * STILL_COVER_MS)).toBe(true);
    // The page changed since (or another frame): waited for again.
    expect(new CoverWatch(frame).still(banner, { ...still, scene: "0,0,800,120 #3" }, 0)).toBe(false);
    expect(new CoverWatch({}).still(banner, still, 0)).toBe(false);
  });
});

describe("clicking a covered element", () => {
  let fx: BrowserFixture;
  beforeAll(async () => {
    fx = await openFixture();
  });
  afterAll(async () => {
    await closeFixture(fx);
  });

  // A minute's timeout, and a test that gives up after 30 s: only the early report passes.
  it("reports a still cookie banner well before the click's timeout, naming it, and clicks nothing", async () => {
    const page = await visit(fx, fx.dh.context.pages()[0]!, "overlay.html");
    const error = await page
      .locator("#behind-banner")
      .click({ timeout: 60_000 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServiceClickError);
    expect((error as ServiceClickError).reason).toBe("covered");
    expect((error as Error).message).toMatch(/covered by another element: <div id="cookie-banner"/);
    // Asked again on the unchanged page, it says the same.
    await expect(page.locator("#behind-banner").click({ timeout: 60_000 })).rejects.toThrow(/cookie-banner/);
    expect(await textOf(page, "#log")).toBe("");
  }, 30_000);

  it("waits for a cover that moves (a spinning loading overlay) and clicks once it is gone", async () => {
    const page = await visit(fx, fx.dh.context.pages()[0]!, "spinner-overlay.html");
    const clicked = page.locator("#under-spinner").click({ timeout: 60_000 });
    // The overlay goes away later than a still cover would be reported.
    await new Promise((resolve) => setTimeout(resolve, 2 * STILL_COVER_MS));
    await page.evaluate(() => document.getElementById("spinner-overlay")!.remove());
    await clicked;
    expect(await textOf(page, "#log")).toBe("under-spinner clicked\n");
  }, 30_000);
});
