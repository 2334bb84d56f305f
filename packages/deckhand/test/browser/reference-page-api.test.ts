// The page, context and locator calls programs written for the reference library's v3 API make,
// with its names and options, on real Chromium and real pages.

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type ConsoleMessage,
  type Dialog,
  type Page,
  ServiceInvalidArgumentError,
  ServiceTimeoutError,
} from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, openFixture, openPage } from "./helpers.ts";
import { pngSize } from "./png.ts";

let fx: BrowserFixture;

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(`<!doctype html><html lang="en"><head><title>t</title></head><body>${body}</body></html>`);
}

beforeAll(async () => {
  fx = await openFixture();
  // Shows the request headers the page was loaded with.
  fx.site.route("/headers.html", (req: IncomingMessage, res) =>
    html(res, `<pre id="headers">${JSON.stringify(req.headers)}</pre>`),
  );
  fx.site.route("/two-buttons.html", (_req, res) =>
    html(
      res,
      `<button id="a" onclick="document.title='a'">One</button>` +
        `<button id="b" onclick="document.title='b'">Two</button>` +
        `<p id="text">Shown<span style="display:none"> hidden</span></p>`,
    ),
  );
});

afterAll(() => closeFixture(fx));

async function pageOn(path: string): Promise<Page> {
  return openPage(fx, path);
}

describe("viewport", () => {
  it("is 1288x711 by default, as the reference's, in the page and in screenshots", async () => {
    const page = fx.dh.context.pages()[0]!;
    await page.goto(fx.site.url("index.html"));
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([1288, 711]);
    expect(pngSize(await page.screenshot())).toEqual({ width: 1288, height: 711 });
  });

  it("setViewportSize(width, height) resizes the page and what a screenshot covers", async () => {
    const page = await pageOn("index.html");
    await page.setViewportSize(1000, 600);
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([1000, 600]);
    expect(pngSize(await page.screenshot())).toEqual({ width: 1000, height: 600 });
    await page.setViewportSize(400, 300, { deviceScaleFactor: 2 });
    expect(await page.evaluate(() => window.devicePixelRatio)).toBe(2);
    expect(pngSize(await page.screenshot())).toEqual({ width: 800, height: 600 });
    await expect(page.setViewportSize(0, 300)).rejects.toThrow(ServiceInvalidArgumentError);
    await page.close();
  });
});

describe("addInitScript", () => {
  it("runs a function with its argument in each new document, before the page's scripts, frames included", async () => {
    const page = await pageOn("index.html");
    await page.addInitScript(
      (arg: { greeting: string }) => {
        (window as unknown as { seen: string }).seen = `${arg.greeting} ${document.readyState}`;
      },
      { greeting: "hello" },
    );
    await page.goto(fx.site.url("frames/cross-site.html"));
    expect(await page.evaluate("window.seen")).toBe("hello loading");
    // The out-of-process iframe got it too.
    const child = page.frames().find((frame) => frame.url.includes("child.html"))!;
    expect(child).toBeDefined();
    expect(await child.evaluate("window.seen")).toBe("hello loading");
    await page.close();
  });

  it("takes JavaScript source as a string, and refuses an argument to it", async () => {
    const page = await pageOn("index.html");
    await page.addInitScript("window.fromString = 7;");
    await page.reload();
    expect(await page.evaluate("window.fromString")).toBe(7);
    await expect(page.addInitScript("1", 2)).rejects.toThrow(ServiceInvalidArgumentError);
    await page.close();
  });
});

describe("waiting", () => {
  it("waitForSelector resolves true once the element appears, and times out naming it", async () => {
    const page = await pageOn("index.html");
    await page.evaluate(() =>
      setTimeout(() => document.body.insertAdjacentHTML("beforeend", '<p id="late">late</p>'), 300),
    );
    expect(await page.waitForSelector("#late")).toBe(true);
    expect(await page.waitForSelector("#late", { state: "attached", timeout: 100 })).toBe(true);
    const missing = page.waitForSelector("#never", { timeout: 200 });
    await expect(missing).rejects.toThrow(ServiceTimeoutError);
    await expect(missing).rejects.toThrow("#never");
    await page.close();
  });

  it("waitForLoadState takes the timeout as a number, and waitForTimeout waits", async () => {
    const page = await pageOn("index.html");
    await page.waitForLoadState("domcontentloaded", 5000);
    await page.waitForLoadState("load");
    const started = Date.now();
    await page.waitForTimeout(120);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    await expect(page.waitForTimeout(-1)).rejects.toThrow(ServiceInvalidArgumentError);
    await page.close();
  });

  it("goto honours timeoutMs (the reference's name for timeout)", async () => {
    const held: ServerResponse[] = [];
    const unroute = fx.site.route("/never-loads.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<!doctype html><title>slow</title><p>loading");
      held.push(res);
    });
    const page = await pageOn("index.html");
    try {
      const started = Date.now();
      await expect(page.goto(fx.site.url("never-loads.html"), { timeoutMs: 400 })).rejects.toThrow(
        ServiceTimeoutError,
      );
      // The page never finishes loading: only the 400 ms timeout ends the wait, and only a stall takes this long.
      expect(Date.now() - started).toBeLessThan(30_000);
      await expect(page.goto(fx.site.url("index.html"), { timeout: 1, timeoutMs: 2 })).rejects.toThrow(
        ServiceInvalidArgumentError,
      );
    } finally {
      for (const res of held) res.end();
      unroute();
      await page.close();
    }
  });
});

describe("page.on", () => {
  it('delivers console messages to "console" listeners until off', async () => {
    const page = await pageOn("index.html");
    const messages: ConsoleMessage[] = [];
    const listener = (message: ConsoleMessage) => messages.push(message);
    page.on("console", listener);
    await page.evaluate(() => console.warn("hello", 42, { a: 1 }));
    await expect.poll(() => messages.length).toBe(1);
    expect(messages[0]!.type()).toBe("warning");
    expect(messages[0]!.text()).toBe("hello 42 Object");
    expect(messages[0]!.args().slice(0, 2)).toEqual(["hello", 42]);
    page.off("console", listener);
    await page.evaluate(() => console.log("after off"));
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    expect(messages).toHaveLength(1);
    expect(() => page.on("bogus" as "console", listener)).toThrow(ServiceInvalidArgumentError);
    await page.close();
  });

  it('hands "dialog" listeners the page\'s prompt, which waits for their answer', async () => {
    const page = await pageOn("index.html");
    const seen: string[] = [];
    page.once("dialog", (dialog: Dialog) => {
      seen.push(`${dialog.type()}:${dialog.message()}:${dialog.defaultValue()}`);
      void dialog.accept("Ada");
    });
    const answer = await page.evaluate(() => prompt("Your name?", "nobody"));
    expect(answer).toBe("Ada");
    expect(seen).toEqual(["prompt:Your name?:nobody"]);
    page.once("dialog", (dialog: Dialog) => void dialog.dismiss());
    expect(await page.evaluate(() => confirm("Sure?"))).toBe(false);
    // A once listener removed before it ran never runs.
    let ran = false;
    const never = () => {
      ran = true;
    };
    page.once("console", never);
    page.off("console", never);
    await page.evaluate(() => console.log("nobody listens"));
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    expect(ran).toBe(false);
    await page.close();
  });

  it('calls "close" listeners when the page closes', async () => {
    const page = await pageOn("index.html");
    let closed = 0;
    page.on("close", () => closed++);
    await page.close();
    expect(closed).toBe(1);
  });
});

describe("extra HTTP headers", () => {
  it("sends the page's and the context's headers with each request, the page's winning", async () => {
    const page = await pageOn("index.html");
    await fx.dh.context.setExtraHTTPHeaders({ "x-from-context": "ctx", "x-both": "context" });
    await page.setExtraHTTPHeaders({ "x-from-page": "pg", "x-both": "page" });
    await page.goto(fx.site.url("headers.html"));
    const headers = JSON.parse((await page.locator("#headers").textContent()) ?? "{}");
    expect(headers).toMatchObject({ "x-from-context": "ctx", "x-from-page": "pg", "x-both": "page" });

    // Another page of the context gets the context's only.
    const other = await pageOn("headers.html");
    const otherHeaders = JSON.parse((await other.locator("#headers").textContent()) ?? "{}");
    expect(otherHeaders).toMatchObject({ "x-from-context": "ctx", "x-both": "context" });
    expect(otherHeaders).not.toHaveProperty("x-from-page");

    await fx.dh.context.setExtraHTTPHeaders({});
    await page.setExtraHTTPHeaders({});
    await page.reload();
    const cleared = JSON.parse((await page.locator("#headers").textContent()) ?? "{}");
    expect(cleared).not.toHaveProperty("x-from-context");
    await expect(page.setExtraHTTPHeaders({ "x-n": 1 as unknown as string })).rejects.toThrow(
      ServiceInvalidArgumentError,
    );
    await Promise.all([page.close(), other.close()]);
  });
});

describe("context cookies", () => {
  it("adds cookies the page then sees, lists them by URL, and clears by name or all", async () => {
    const { context } = fx.dh;
    const url = fx.site.url("index.html");
    await context.clearCookies();
    await context.addCookies([
      { name: "session", value: "abc", url },
      { name: "theme", value: "dark", url },
    ]);
    const page = await pageOn("index.html");
    expect((await page.evaluate(() => document.cookie)).split("; ").sort()).toEqual([
      "session=abc",
      "theme=dark",
    ]);
    expect((await context.cookies(url)).map((c) => c.name).sort()).toEqual(["session", "theme"]);
    expect(await context.cookies("http://elsewhere.invalid/")).toEqual([]);

    await context.clearCookies({ name: "session" });
    expect((await context.cookies()).map((c) => c.name)).toEqual(["theme"]);
    await context.clearCookies();
    expect(await context.cookies()).toEqual([]);
    await expect(context.addCookies([{ name: "x", value: "y" }])).rejects.toThrow("needs a url");
    await page.close();
  });
});

describe("locator", () => {
  it("innerText is the rendered text, where textContent includes hidden parts", async () => {
    const page = await pageOn("two-buttons.html");
    expect(await page.locator("#text").innerText()).toBe("Shown");
    expect(await page.locator("#text").textContent()).toBe("Shown hidden");
    await page.close();
  });

  it("highlight draws a box over the element for durationMs, then removes it", async () => {
    const page = await pageOn("two-buttons.html");
    await page.locator("#b").highlight({ durationMs: 300 });
    const boxes = await page.evaluate(() => {
      const el = document.querySelector("[data-deckhand-highlight]");
      const target = document.getElementById("b")!.getBoundingClientRect();
      const drawn = el?.getBoundingClientRect();
      return drawn ? [drawn.left, drawn.width, target.left, target.width] : null;
    });
    expect(boxes).not.toBeNull();
    const [left, width, targetLeft, targetWidth] = boxes!;
    expect(left).toBeCloseTo(targetLeft!, 1);
    expect(width).toBeCloseTo(targetWidth!, 1);
    await expect
      .poll(() => page.evaluate(() => document.querySelector("[data-deckhand-highlight]") === null))
      .toBe(true);
    await page.close();
  });

  it("uses the first of several matches, or refuses with strict: true unless one is chosen", async () => {
    const page = await pageOn("two-buttons.html");
    await page.locator("button").click();
    expect(await page.title()).toBe("a");
    const strict = page.locator("button", { strict: true });
    const error = await strict.click({ timeout: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceInvalidArgumentError);
    expect((error as ServiceInvalidArgumentError).reason).toBe("strict-mode-violation");
    expect((error as Error).message).toContain("matches 2 elements");
    await strict.nth(1).click();
    expect(await page.title()).toBe("b");
    await page.locator("#a", { strict: true }).click();
    expect(await page.title()).toBe("a");
    await page.close();
  });
});

describe("more of the reference's page and locator calls", () => {
  it("context.addInitScript runs in every page of the context, open and opened later", async () => {
    const open = await pageOn("index.html");
    await fx.dh.context.addInitScript((n: number) => {
      (window as unknown as { contextScript: number }).contextScript = n;
    }, 5);
    await open.reload();
    expect(await open.evaluate("window.contextScript")).toBe(5);
    const later = await pageOn("index.html");
    expect(await later.evaluate("window.contextScript")).toBe(5);
    await Promise.all([open.close(), later.close()]);
  });

  it("dragAndDrop(fromX, fromY, toX, toY), hover(x, y), scroll(x, y, dx, dy) and sendCDP", async () => {
    const page = await pageOn("dnd.html");
    const handle = await page.locator("#handle").centroid();
    const track = (await page.locator("#track").boundingBox())!;
    await page.dragAndDrop(handle.x, handle.y, track.x + track.width / 2, handle.y);
    expect(Number(await page.locator("#slider-value").textContent())).toBeGreaterThan(40);

    await page.goto(fx.site.url("hover.html"));
    const products = await page.locator("#products-menu span").centroid();
    await page.hover(products.x, products.y);
    expect(await page.locator("#laptops-link").isVisible()).toBe(true);

    await page.goto(fx.site.url("scroll.html"));
    // Away from the scrollable box at the top left, so that the page itself scrolls.
    await page.scroll(700, 600, 0, 600);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);

    const { result } = await page.sendCDP<{ result: { value: number } }>("Runtime.evaluate", {
      expression: "6 * 7",
      returnByValue: true,
    });
    expect(result.value).toBe(42);
    await page.close();
  });

  it("locator.innerHtml and centroid, and highlight with { r, g, b, a } colors", async () => {
    const page = await pageOn("two-buttons.html");
    expect(await page.locator("#text").innerHtml()).toBe('Shown<span style="display:none"> hidden</span>');
    const centre = await page.locator("#b").centroid();
    const box = (await page.locator("#b").boundingBox())!;
    expect(centre).toEqual({ x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) });
    await page.locator("#b").highlight({ durationMs: 200, borderColor: { r: 0, g: 0, b: 255 } });
    expect(
      await page.evaluate(
        () => (document.querySelector("[data-deckhand-highlight]") as HTMLElement | null)?.style.borderColor,
      ),
    ).toBe("rgb(0, 0, 255)");
    await page.close();
  });
});
