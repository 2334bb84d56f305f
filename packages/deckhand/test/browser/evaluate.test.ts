// page.evaluate(): functions and expressions run in the page, results come back by value, and
// the page's own errors come back as ServiceEvalError with the page's message.

import type { Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, openFixture, textOf } from "./helpers.ts";

let fx: BrowserFixture;
let page: Page;

beforeAll(async () => {
  fx = await openFixture();
  page = fx.dh.context.pages()[0]!;
  await page.goto(fx.site.url("index.html"));
});

afterAll(async () => {
  await closeFixture(fx);
});

describe("results", () => {
  it("runs a function in the page with an argument and returns its result", async () => {
    const result = await page.evaluate((n: number) => ({ doubled: n * 2, title: document.title }), 21);
    expect(result).toEqual({ doubled: 42, title: "Deckhand fixture" });
  });

  it("evaluates an expression string", async () => {
    expect(await page.evaluate("document.querySelectorAll('button').length + 1")).toBe(2);
  });

  it("awaits a promise the function returns", async () => {
    const value = await page.evaluate(
      () => new Promise<string>((resolve) => setTimeout(() => resolve("later"), 30)),
    );
    expect(value).toBe("later");
  });

  it("awaits a promise an expression yields", async () => {
    expect(await page.evaluate("fetch('/assets/data.json').then((r) => r.ok)")).toBe(true);
  });

  it("passes structured arguments through", async () => {
    const arg = { list: [1, "two", null], nested: { ok: true } };
    expect(await page.evaluate((a: typeof arg) => a, arg)).toEqual(arg);
  });

  it("changes the real page: what it writes is in the DOM afterwards", async () => {
    await page.evaluate(() => {
      document.getElementById("count")!.textContent = "99";
    });
    expect(await page.locator("#count").textContent()).toBe("99");
    await page.reload();
  });

  it("returns undefined for a function without a return value, and null for null", async () => {
    expect(await page.evaluate(() => undefined)).toBeUndefined();
    expect(await page.evaluate(() => null)).toBeNull();
  });

  it("sees a user gesture, so the page may do what only a click allows", async () => {
    expect(await page.evaluate(() => navigator.userActivation.isActive)).toBe(true);
  });
});

describe("page errors", () => {
  it("turn a thrown Error into ServiceEvalError with the page's message", async () => {
    const error = await page
      .evaluate(() => {
        throw new Error("boom from the page");
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceEvalError", code: "EVAL" });
    expect((error as Error).message).toContain("boom from the page");
  });

  it("name the kind of error the page raised", async () => {
    const error = await page
      .evaluate(() => (undefined as unknown as { x: number }).x)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceEvalError" });
    expect((error as Error).message).toMatch(
      /TypeError: Cannot read properties of undefined \(reading 'x'\)/,
    );
  });

  it("carry the reason of a rejected promise", async () => {
    const error = await page
      .evaluate(() => Promise.reject(new Error("rejected in page")))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceEvalError" });
    expect((error as Error).message).toContain("rejected in page");
  });

  it("carry a thrown value that is not an Error", async () => {
    const error = await page.evaluate("(() => { throw 'plain string'; })()").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceEvalError" });
    expect((error as Error).message).toContain("plain string");
  });

  it("report a syntax error in an expression", async () => {
    const error = await page.evaluate("this is not javascript").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceEvalError" });
    expect((error as Error).message).toMatch(/SyntaxError/);
  });

  it("leave the page usable", async () => {
    await page.evaluate(() => Promise.reject(new Error("x"))).catch(() => undefined);
    expect(await page.evaluate(() => 1 + 1)).toBe(2);
  });
});

describe("across navigations", () => {
  it("runs in the new document right after goto()", async () => {
    const other = await fx.dh.context.newPage();
    await other.goto(fx.site.url("form.html"));
    expect(await other.evaluate(() => document.querySelector("h1")?.textContent)).toBe("Sign in");
    await other.goto(fx.site.url("index.html"));
    expect(await textOf(other, "h1")).toBe("Deckhand fixture");
    await other.close();
  });

  it("keeps working while the page navigates by itself, and then runs in the new document", async () => {
    const other = await fx.dh.context.newPage();
    await other.goto(fx.site.url("index.html"));
    await other.evaluate(() => {
      location.href = "/form.html";
    });
    // A call made while the old document goes away runs in the new one.
    const deadline = Date.now() + 3_000;
    let title = "";
    while (Date.now() < deadline && title !== "Sign in") title = await other.evaluate(() => document.title);
    expect(title).toBe("Sign in");
    await other.close();
  });
});
