// What a locator's selector can be (CSS, XPath, text=), how nth/first/count pick among matches,
// and the errors a selector that finds nothing (or is not a selector) gives.

import type { Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, openFixture, openPage, textOf } from "./helpers.ts";

let fx: BrowserFixture;
let list: Page;

beforeAll(async () => {
  fx = await openFixture();
  list = await openPage(fx, "list.html");
});

afterAll(async () => {
  await closeFixture(fx);
});

/** A fresh index.html: its button increments #count, so a click is visible in the DOM. */
async function counterPage(): Promise<Page> {
  return openPage(fx, "index.html");
}

describe("selector kinds", () => {
  it("takes a CSS selector", async () => {
    const page = await counterPage();
    await page.locator("button#increment").click();
    expect(await textOf(page, "#count")).toBe("1");
    await page.close();
  });

  it('takes an explicit "css=" selector', async () => {
    expect(await list.locator("css=#steps li:nth-child(2)").textContent()).toBe(
      "Mix the flour and the butter",
    );
  });

  it('takes an XPath after "xpath="', async () => {
    const page = await counterPage();
    await page.locator("xpath=//button[@id='increment']").click();
    expect(await textOf(page, "#count")).toBe("1");
    await page.close();
  });

  it('takes an XPath that starts with "/"', async () => {
    expect(await list.locator("//ul[@id='fruits']/li[3]").textContent()).toBe("Cherry");
  });

  it("takes an absolute XPath with positions", async () => {
    expect(await list.locator("/html[1]/body[1]/ol[1]/li[1]").textContent()).toBe("Preheat the oven");
  });

  it('takes a parenthesised XPath, which starts with "("', async () => {
    expect(await list.locator("(//ul[@id='fruits']/li)[2]").textContent()).toBe("Banana");
  });

  it("takes an XPath that selects a text node, and gives its element", async () => {
    expect(await list.locator("//dt[text()='OOPIF']/text()").innerHTML()).toBe("OOPIF");
  });

  it('takes "text=", matching the innermost element that contains the text, ignoring case', async () => {
    expect(await list.locator("text=paring KNIFE").innerHTML()).toBe("Paring knife");
  });

  it('takes a quoted "text=" as an exact match of the whole text', async () => {
    expect(await list.locator('text="Hoses"').count()).toBe(1);
    expect(await list.locator('text="Hose"').count()).toBe(0);
    expect(await list.locator("text=Hose").count()).toBe(1);
  });

  it('clicks the element "text=" found', async () => {
    const page = await counterPage();
    await page.locator("text=Increment").click();
    expect(await textOf(page, "#count")).toBe("1");
    await page.close();
  });

  it("finds an element the page adds later, waiting for it", async () => {
    const page = await openPage(fx, "dynamic.html");
    await page.locator("#late-button").click();
    expect(await textOf(page, "#log")).toContain("late clicked");
    await page.close();
  });
});

describe("several matches", () => {
  it("count() counts every match", async () => {
    expect(await list.locator("#fruits li").count()).toBe(3);
    expect(await list.locator("//li").count()).toBe(14);
  });

  it("count() is 0 when nothing matches, without waiting", async () => {
    const started = Date.now();
    expect(await list.locator("#nothing-here").count()).toBe(0);
    // Waiting would last the default timeout (30 s).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("acts on the first match by default, the same as first()", async () => {
    expect(await list.locator("#fruits li").textContent()).toBe("Apple");
    expect(await list.locator("#fruits li").first().textContent()).toBe("Apple");
  });

  it("nth(i) picks the i-th match, counting from 0", async () => {
    expect(await list.locator("#fruits li").nth(1).textContent()).toBe("Banana");
  });

  it("nth(-1) picks the last match", async () => {
    expect(await list.locator("#fruits li").nth(-1).textContent()).toBe("Cherry");
  });

  it("nth() past the last match is an error naming the index", async () => {
    const error = await list
      .locator("#fruits li")
      .nth(5)
      .textContent({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceElementNotFoundError", selector: "#fruits li" });
    expect((error as Error).message).toContain("index 5");
  });

  it("clicks the n-th match, not the first", async () => {
    const page = await counterPage();
    await page.evaluate(() => {
      const second = document.createElement("button");
      second.id = "second";
      second.textContent = "Second";
      second.onclick = () => {
        document.getElementById("count")!.textContent = "second";
      };
      document.body.append(second);
    });
    await page.locator("button").nth(1).click();
    expect(await textOf(page, "#count")).toBe("second");
    await page.close();
  });
});

describe("selectors that find nothing", () => {
  it("a CSS selector gives ServiceElementNotFoundError naming the selector, after its timeout", async () => {
    const started = Date.now();
    const error = await list
      .locator("#missing")
      .click({ timeout: 400 })
      .catch((e: unknown) => e);
    const waited = Date.now() - started;
    expect(error).toMatchObject({ name: "ServiceElementNotFoundError", selector: "#missing" });
    expect((error as Error).message).toContain("400 ms");
    expect(waited).toBeGreaterThanOrEqual(380);
    // Its own 400 ms, not the default 30 s: a busy machine adds to the last try, only a stall this much.
    expect(waited).toBeLessThan(15_000);
  });

  it("an XPath gives XPathResolutionError naming the XPath", async () => {
    const error = await list
      .locator("//section[@id='missing']")
      .textContent({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "XPathResolutionError", xpath: "//section[@id='missing']" });
  });

  it("a text= selector gives ServiceElementNotFoundError naming it", async () => {
    const error = await list
      .locator("text=No such words here")
      .textContent({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceElementNotFoundError", selector: "text=No such words here" });
  });
});

describe("selectors that are not selectors", () => {
  it("an invalid CSS selector fails at once, saying so", async () => {
    const started = Date.now();
    const error = await list
      .locator("li[[")
      .textContent({ timeout: 60_000 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain("not a valid CSS selector");
    // Not the minute the timeout allows: only a stall takes this long.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("an invalid XPath fails at once with XPathResolutionError", async () => {
    const started = Date.now();
    const error = await list
      .locator("//li[")
      .textContent({ timeout: 60_000 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "XPathResolutionError", xpath: "//li[" });
    expect((error as Error).message).toContain("not a valid XPath");
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("count() of an invalid selector is an error, not 0", async () => {
    await expect(list.locator("li[[").count()).rejects.toMatchObject({ name: "ServiceInvalidArgumentError" });
  });

  it("an empty selector is refused when the locator is made", () => {
    expect(() => list.locator("  ")).toThrow(
      expect.objectContaining({ name: "ServiceInvalidArgumentError" }),
    );
  });
});
