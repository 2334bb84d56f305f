// Shadow DOM: locators reach into open and closed shadow roots (made by script or declared in
// HTML, nested, holding a cross-site iframe) with CSS, text= and XPath, without configuration.

import { Deckhand, type Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testOptions } from "../support/browser.ts";
import { type BrowserFixture, closeFixture, closeOtherPages, openFixture, visit } from "./helpers.ts";

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

const result = (page: Page) => page.evaluate(() => document.getElementById("result")?.textContent);

describe("open shadow roots", () => {
  it("are searched by CSS: fill and click reach the elements inside", async () => {
    const page = await show("shadow/open.html");
    await page.locator("#shadow-input").fill("hello");
    await page.locator("#shadow-button").click();
    expect(await result(page)).toBe("open shadow clicked:hello");
  });

  it("are searched by text=", async () => {
    const page = await show("shadow/open.html");
    await page.locator("text=Open shadow button").click();
    expect(await result(page)).toBe("open shadow clicked:");
  });

  it("are entered by a `//` after the host in an absolute XPath", async () => {
    const page = await show("shadow/open.html");
    await page.locator("/html[1]/body[1]/open-widget[1]//button[1]").click();
    expect(await result(page)).toBe("open shadow clicked:");
  });
});

describe("closed shadow roots", () => {
  it("are searched by CSS, though the page itself cannot see into them", async () => {
    const page = await show("shadow/closed.html");
    expect(await page.evaluate(() => document.getElementById("host")!.shadowRoot)).toBeNull();
    await page.locator("#shadow-input").fill("abc");
    await page.locator("#shadow-button").click();
    expect(await result(page)).toBe("closed shadow clicked:abc");
  });

  it("answer the locator's queries", async () => {
    const page = await show("shadow/closed.html");
    await page.locator("#shadow-input").fill("value");
    expect(await page.locator("#shadow-input").inputValue()).toBe("value");
    expect(await page.locator("#shadow-button").isVisible()).toBe(true);
    expect(await page.locator("#shadow-button").textContent()).toBe("Closed shadow button");
    expect(await page.locator("button").count()).toBe(1);
  });

  it("are searched by text=", async () => {
    const page = await show("shadow/closed.html");
    await page.locator("text=Closed shadow button").click();
    expect(await result(page)).toBe("closed shadow clicked:");
  });

  it("are entered by a `//` after the host in an absolute XPath", async () => {
    const page = await show("shadow/closed.html");
    await page.locator("/html[1]/body[1]/closed-widget[1]//p[1]/input[1]").fill("xp");
    await page.locator("/html[1]/body[1]/closed-widget[1]//button[1]").click();
    expect(await result(page)).toBe("closed shadow clicked:xp");
  });

  it("that existed before Deckhand attached are found through the protocol", async () => {
    const page = await show("shadow/closed.html");
    // A second client attaches to the running page: its page hook comes too late for this root.
    const late = new Deckhand(testOptions({ cdpUrl: fx.dh.connectURL() }));
    await late.init();
    try {
      const same = late.context.pages().find((p) => p.targetId === page.targetId)!;
      await same.locator("#shadow-input").fill("late");
      await same.locator("#shadow-button").click();
    } finally {
      await late.close();
    }
    expect(await result(page)).toBe("closed shadow clicked:late");
  });
});

describe("declarative shadow roots", () => {
  it("an open one is searched", async () => {
    const page = await show("shadow/declarative.html");
    await page.locator("#declarative-open-button").click();
    expect(await result(page)).toBe("declarative open clicked");
  });

  it("a closed one, which no script created, is searched", async () => {
    const page = await show("shadow/declarative.html");
    await page.locator("#declarative-closed-button").click();
    expect(await result(page)).toBe("declarative closed clicked");
  });

  it("a closed one is entered by an XPath `//` step", async () => {
    const page = await show("shadow/declarative.html");
    await page.locator("/html[1]/body[1]/div[2]//button[1]").click();
    expect(await result(page)).toBe("declarative closed clicked");
  });
});

describe("nested shadow roots", () => {
  it("open > closed > open: the innermost button is clicked", async () => {
    const page = await show("shadow/nested.html");
    await page.locator("#deep-button").click();
    expect(await result(page)).toBe("deep clicked");
  });

  it("are entered one `//` per root by an XPath", async () => {
    const page = await show("shadow/nested.html");
    await page.locator("/html[1]/body[1]/outer-host[1]//middle-host[1]//inner-host[1]//button[1]").click();
    expect(await result(page)).toBe("deep clicked");
  });

  it("are searched by text= through all three roots", async () => {
    const page = await show("shadow/nested.html");
    expect(await page.locator("text=Middle (closed) root").textContent()).toBe("Middle (closed) root");
  });
});

describe("slots", () => {
  it("a slotted light-DOM element and a shadow element are both clicked", async () => {
    const page = await show("shadow/slots.html");
    await page.locator("#slotted-button").click();
    expect(await result(page)).toBe("slotted clicked");
    await page.locator("#card-action").click();
    expect(await result(page)).toBe("card action clicked");
  });
});

describe("a cross-site iframe inside a closed shadow root", () => {
  it("is reached by deepLocator", async () => {
    const page = await show("shadow/oopif-in-shadow.html");
    await page.deepLocator("#shadow-frame >> #child-button").click();
    expect(await page.deepLocator("#shadow-frame >> #child-result").textContent()).toBe("child clicked");
    const frame = page.frames().find((f) => f.url === fx.site.crossUrl("frames/child.html"))!;
    expect(frame.isOutOfProcess).toBe(true);
  });

  it("is reached by an XPath through the root and the iframe", async () => {
    const page = await show("shadow/oopif-in-shadow.html");
    const where = page.deepLocator("/html[1]/body[1]/frame-box[1]//iframe[1]/html[1]/body[1]/p[3]/span[1]");
    expect(await where.textContent()).toBe(new URL(fx.site.crossOrigin).host);
  });
});

describe("failures", () => {
  it("an XPath `//` step after an element without a shadow root gives ServiceShadowRootMissingError", async () => {
    const page = await show("shadow/open.html");
    const selector = "/html[1]/body[1]/h1[1]//span[1]";
    const error = await page
      .locator(selector)
      .click({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceShadowRootMissingError", code: "SHADOW_ROOT_MISSING" });
    expect((error as Error).message).toContain(selector);
    expect((error as Error).message).toContain("<h1>");
  });

  it("an element that is in no root gives ServiceElementNotFoundError", async () => {
    const page = await show("shadow/nested.html");
    await expect(page.locator("#not-in-any-root").click({ timeout: 300 })).rejects.toMatchObject({
      name: "ServiceElementNotFoundError",
    });
  });
});
