// What a locator reads: isVisible, isChecked, inputValue, textContent, innerHTML, boundingBox,
// and waitFor with each state.

import type { Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, closeOtherPages, openFixture, openPage } from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;
let hidden: Page;
let inputs: Page;

beforeAll(async () => {
  fx = await openFixture();
  firstPage = fx.dh.context.pages()[0]!;
  await firstPage.goto(fx.site.url("hidden.html"));
  hidden = firstPage;
  inputs = await openPage(fx, "inputs.html");
});

afterEach(async () => {
  await closeOtherPages(fx, hidden, inputs);
});

afterAll(async () => {
  await closeFixture(fx);
});

describe("isVisible()", () => {
  it("is true for an element a user can see", async () => {
    expect(await hidden.locator("#visible").isVisible()).toBe(true);
  });

  it("is true for an element only hidden from assistive technology", async () => {
    expect(await hidden.locator("#aria-hidden").isVisible()).toBe(true);
  });

  for (const id of [
    "display-none",
    "visibility-hidden",
    "hidden-attribute",
    "zero-size",
    "in-hidden-parent",
  ]) {
    it(`is false for #${id}`, async () => {
      expect(await hidden.locator(`#${id}`).isVisible()).toBe(false);
    });
  }

  it("is false, at once, for an element that does not exist", async () => {
    const started = Date.now();
    expect(await hidden.locator("#no-such-element").isVisible()).toBe(false);
    // Waiting would last the default timeout (30 s).
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("isChecked()", () => {
  it("reads a checkbox as the user left it", async () => {
    expect(await inputs.locator("#checkbox-input").isChecked()).toBe(false);
    await inputs.locator("#checkbox-input").click();
    expect(await inputs.locator("#checkbox-input").isChecked()).toBe(true);
    await inputs.locator("#checkbox-input").click();
  });

  it("reads a radio group's checked member", async () => {
    expect(await inputs.locator("#shipping-standard").isChecked()).toBe(true);
    expect(await inputs.locator("#shipping-overnight").isChecked()).toBe(false);
  });

  it("reads aria-checked on a custom control", async () => {
    await inputs.evaluate(() => {
      document.body.insertAdjacentHTML(
        "beforeend",
        '<div role="switch" id="switch" aria-checked="true">On</div>',
      );
    });
    expect(await inputs.locator("#switch").isChecked()).toBe(true);
  });

  it("refuses an element that cannot be checked", async () => {
    await expect(inputs.locator("#text-input").isChecked()).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});

describe("inputValue()", () => {
  it("reads what was filled into an input", async () => {
    await inputs.locator("#search-input").fill("deckhand");
    expect(await inputs.locator("#search-input").inputValue()).toBe("deckhand");
  });

  it("reads a select's value", async () => {
    expect(await inputs.locator("#select-input").inputValue()).toBe("m");
  });

  it("reads a textarea", async () => {
    await inputs.evaluate(() => {
      (document.getElementById("textarea-input") as HTMLTextAreaElement).value = "typed\nby script";
    });
    expect(await inputs.locator("#textarea-input").inputValue()).toBe("typed\nby script");
  });

  it("refuses an element that holds no value", async () => {
    const error = await inputs
      .locator("h1")
      .inputValue()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain("<h1>");
  });
});

describe("textContent() and innerHTML()", () => {
  it("textContent() is the element's text, hidden parts included", async () => {
    expect(await hidden.locator("#hidden-paragraph").textContent()).toBe(
      "This paragraph is hidden by display.",
    );
  });

  it("innerHTML() is the element's markup", async () => {
    const page = await openPage(fx, "list.html");
    const html = await page.locator("#glossary dt").nth(0).innerHTML();
    expect(html).toBe("CDP");
    expect(await page.locator("#steps").innerHTML()).toContain("<li>Bake for 20 minutes</li>");
  });
});

describe("boundingBox()", () => {
  it("is the element's box in the viewport", async () => {
    const expected = await hidden.evaluate(() => {
      const r = document.getElementById("visible")!.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
    expect(await hidden.locator("#visible").boundingBox()).toEqual(expected);
    expect(expected.width).toBeGreaterThan(0);
  });

  it("moves with the page's scroll position", async () => {
    const page = await openPage(fx, "scroll.html");
    const before = (await page.locator("#bottom-button").boundingBox())!;
    await page.evaluate(() => window.scrollBy(0, 1000));
    const after = (await page.locator("#bottom-button").boundingBox())!;
    expect(before.y - after.y).toBe(1000);
  });

  it("is null for an element that is not rendered", async () => {
    expect(await hidden.locator("#display-none").boundingBox()).toBeNull();
  });
});

describe("waitFor()", () => {
  it("waits until the element is visible (the default)", async () => {
    const page = await openPage(fx, "dynamic.html");
    // The page renders it 200 ms after loading (later on a busy machine): the timeout bounds a stall.
    await page.locator("#late-content").waitFor({ timeout: 30_000 });
    expect(await page.locator("#late-content").textContent()).toBe("Late content");
  });

  it('returns for "attached" as soon as the element exists, visible or not', async () => {
    await hidden.locator("#display-none").waitFor({ state: "attached", timeout: 300 });
  });

  it('does not return for "visible" while the element stays hidden, and says so', async () => {
    const started = Date.now();
    const error = await hidden
      .locator("#display-none")
      .waitFor({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceTimeoutError", timeoutMs: 300 });
    expect((error as Error).message).toContain('"#display-none"');
    expect((error as Error).message).toContain('"visible"');
    // The 300 ms given, not the default 30 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('waits for "hidden" until the element is hidden', async () => {
    const page = await openPage(fx, "select.html");
    await page.locator("#color-button").click();
    expect(await page.locator("#color-list").isVisible()).toBe(true);
    await page.evaluate(() => setTimeout(() => document.getElementById("color-red")!.click(), 100));
    await page.locator("#color-list").waitFor({ state: "hidden", timeout: 30_000 });
    expect(await page.locator("#color-list").isVisible()).toBe(false);
  });

  it('treats a missing element as "hidden"', async () => {
    await hidden.locator("#no-such-element").waitFor({ state: "hidden", timeout: 300 });
  });

  it('waits for "detached" until the element is removed', async () => {
    const page = await openPage(fx, "index.html");
    await page.evaluate(() => setTimeout(() => document.getElementById("increment")!.remove(), 100));
    await page.locator("#increment").waitFor({ state: "detached", timeout: 30_000 });
    expect(await page.locator("#increment").count()).toBe(0);
  });

  it("fails at once for an invalid selector", async () => {
    const started = Date.now();
    await expect(hidden.locator("button[[").waitFor({ timeout: 60_000 })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
    // Not the minute the timeout allows: only a stall takes this long.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
