// A pointer action never lands on something else when the page moves between the hit test and
// the press: the press that would reach another element is kept from the page, the call log says
// what was hit instead, and the action starts again from a new hit test; a target that never
// stays put fails with ServiceClickError naming what kept being hit.

import { type Page, ServiceClickError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Deadline } from "../../src/deadline.ts";
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

afterAll(async () => {
  await closeFixture(fx);
});

const logLines = async (page: Page) => ((await textOf(page, "#log")) ?? "").split("\n").filter(Boolean);

/** moving.html with its moves armed: the pointer is parked in the corner by visit() first. */
async function moving(moves: "once" | "always" | "press" | "cover"): Promise<Page> {
  const page = await visit(fx, firstPage, `moving.html?moves=${moves}`);
  await page.evaluate(() => (window as unknown as { armMoves(on: boolean): void }).armMoves(true));
  return page;
}

/** The line a retry after a miss writes to the call log. */
const MISSED = /^<div id="banner">Special offer<\/div> was hit instead after the page moved - retrying/;

/** Clicks #target and returns the call's log (a call that succeeds has no error to carry it). */
async function clickTarget(page: Page): Promise<string[]> {
  const deadline = Deadline.start("click", { timeout: 10_000, retriesOnly: true });
  try {
    await page.locator("#target").click({ deadline });
    return deadline.callLog.lines();
  } finally {
    deadline.dispose();
  }
}

describe("a page that moves the target as the pointer arrives", () => {
  it("keeps the press from the banner that took its place and clicks the target after all", async () => {
    const page = await moving("once");
    const log = await clickTarget(page);
    // Nothing on the banner heard the press; the target got one whole click.
    expect(await logLines(page)).toEqual(["target pointerdown", "target mousedown", "target click"]);
    expect(log).toContainEqual(expect.stringMatching(MISSED));
  });

  it("double-clicks the target, not the banner", async () => {
    const page = await moving("once");
    await page.evaluate(() =>
      document.getElementById("target")!.addEventListener("dblclick", () => {
        document.getElementById("log")!.textContent += "target dblclick\n";
      }),
    );
    await page.locator("#target").dblclick();
    const lines = await logLines(page);
    expect(lines.filter((line) => line.startsWith("banner"))).toEqual([]);
    expect(lines.filter((line) => line === "target click")).toHaveLength(2);
    expect(lines.at(-1)).toBe("target dblclick");
  });

  it("keeps the release from the banner when the page moves the target on the press", async () => {
    const page = await moving("press");
    const log = await clickTarget(page);
    // The first press reached the target; its release would have landed on the banner and sent
    // the click to the page around both. It was kept back, and the click made again.
    expect(await logLines(page)).toEqual([
      "target pointerdown",
      "target mousedown",
      "target pointerdown",
      "target mousedown",
      "target click",
    ]);
    expect(log).toContainEqual(expect.stringMatching(MISSED));
  });

  it("lets a release through onto a menu the press opened over the button, which stayed put", async () => {
    const page = await moving("cover");
    const log = await clickTarget(page);
    // A drop-down: the press opens a menu over its own button. The release is the page's to
    // route (here to the menu, so no click reaches the button); nothing is pressed twice.
    expect(await logLines(page)).toEqual(["target pointerdown", "target mousedown"]);
    expect(log).not.toContainEqual(expect.stringMatching(/was hit instead/));
  });

  it("fails with ServiceClickError naming the banner when the target never stays put", async () => {
    const page = await moving("always");
    const error = await page
      .locator("#target")
      .click({ timeout: 1_000 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServiceClickError);
    const message = (error as ServiceClickError).message;
    expect(message).toMatch(
      /^Could not click "#target": <div id="banner">Special offer<\/div> was hit instead: the page kept moving it/,
    );
    expect((error as ServiceClickError).callLog).toContainEqual(expect.stringMatching(MISSED));
    // Neither the banner nor the target was ever pressed.
    expect(await logLines(page)).toEqual([]);
    // The failed call left nothing armed: a press of the page's own on the banner reaches it.
    await page.evaluate(() => (window as unknown as { armMoves(on: boolean): void }).armMoves(false));
    const banner = await page.locator("#banner").boundingBox();
    await page.mouse.click(banner!.x + 10, banner!.y + 10);
    expect(await logLines(page)).toEqual(["banner pointerdown", "banner mousedown", "banner click"]);
  });

  it("clicks where the pointer was sent with force: true, banner and all", async () => {
    const page = await moving("once");
    await page.locator("#target").click({ force: true });
    expect(await logLines(page)).toEqual(["banner pointerdown", "banner mousedown", "banner click"]);
  });
});
