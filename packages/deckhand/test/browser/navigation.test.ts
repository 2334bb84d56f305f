// Page navigation: goto and what it returns, load states, timeouts and failures, reload, history,
// url() and title().

import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { holdPage } from "@deckhand/testkit";
import { Deckhand, type Page } from "deckhand";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { testOptions } from "../support/browser.ts";
import { type BrowserFixture, closeFixture, closeOtherPages, eventually, openFixture } from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;
let page: Page;

beforeAll(async () => {
  fx = await openFixture();
  firstPage = fx.dh.context.pages()[0]!;
  // A page whose load event waits for a slow image, and one that fetches after it has loaded.
  fx.site.route("/slow-image.html", (req, res) => {
    const ms = new URL(req.url ?? "/", "http://x").searchParams.get("ms") ?? "1000";
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>Slow image</title><p id="text">text</p><img src="/slow?ms=${ms}">`);
  });
  fx.site.route("/late-fetch.html", (req, res) => {
    const ms = new URL(req.url ?? "/", "http://x").searchParams.get("ms") ?? "300";
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>Late fetch</title><p id="done">waiting</p>
      <script>
        addEventListener("load", () => setTimeout(async () => {
          await (await fetch("/slow?ms=${ms}")).text();
          document.getElementById("done").textContent = "fetched";
        }, 50));
      </script>`);
  });
});

/** A loopback port that nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterAll(async () => {
  await closeFixture(fx);
});

// Each test navigates a fresh tab: history and in-flight loads never leak between tests.
beforeEach(async () => {
  page = await fx.dh.context.newPage();
});

afterEach(async () => {
  await closeOtherPages(fx, firstPage);
});

describe("goto()", () => {
  it("returns the main response's status, 200 for a page that exists", async () => {
    expect(await page.goto(fx.site.url("index.html"))).toBe(200);
    expect(page.url()).toBe(fx.site.url("index.html"));
    expect(await page.locator("h1").textContent()).toBe("Deckhand fixture");
  });

  it("returns 404 for a missing page, without throwing", async () => {
    expect(await page.goto(fx.site.url("status/404"))).toBe(404);
    expect(await page.locator("#status").textContent()).toBe("Status 404");
  });

  it("returns a 500 status as it is", async () => {
    expect(await page.goto(fx.site.url("status/500"))).toBe(500);
  });

  it("follows a redirect and returns the final response's status", async () => {
    const status = await page.goto(fx.site.url(`redirect?to=${encodeURIComponent("/status/404")}`));
    expect(status).toBe(404);
    expect(page.url()).toBe(fx.site.url("status/404"));
  });

  it("returns 200 after a redirect to a page that exists", async () => {
    expect(await page.goto(fx.site.url("redirect?to=/form.html"))).toBe(200);
    expect(page.url()).toBe(fx.site.url("form.html"));
    expect(await page.title()).toBe("Sign in");
  });

  it("returns null for a same-document #hash navigation, and the URL gets the hash", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 7;
    });
    expect(await page.goto(fx.site.url("index.html#section"))).toBeNull();
    expect(page.url()).toBe(fx.site.url("index.html#section"));
    // Same document: the page's own state survived.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
  });

  it("returns null again for a #hash the page is already on", async () => {
    await page.goto(fx.site.url("index.html#same"));
    // A goto that waited for a load event that never comes would end in a ServiceTimeoutError.
    expect(await page.goto(fx.site.url("index.html#same"), { timeout: 10_000 })).toBeNull();
    expect(page.url()).toBe(fx.site.url("index.html#same"));
  });

  it("waits for the load event by default", async () => {
    await page.goto(fx.site.url("slow-image.html"));
    expect(await page.evaluate(() => document.readyState)).toBe("complete");
  });

  it('returns at DOMContentLoaded with waitUntil "domcontentloaded", before the slow image loaded', async () => {
    expect(await page.goto(fx.site.url("slow-image.html?ms=5000"), { waitUntil: "domcontentloaded" })).toBe(
      200,
    );
    expect(await page.evaluate(() => document.readyState)).toBe("interactive");
    expect(await page.locator("#text").textContent()).toBe("text");
  });

  it('waits for requests made after load with waitUntil "networkidle"', async () => {
    await page.goto(fx.site.url("late-fetch.html"), { waitUntil: "networkidle" });
    expect(await page.locator("#done").textContent()).toBe("fetched");
  });

  it("does not wait for requests made after load with the default waitUntil", async () => {
    await page.goto(fx.site.url("late-fetch.html?ms=5000"));
    expect(await page.locator("#done").textContent()).toBe("waiting");
  });

  it("throws ServiceTimeoutError naming the operation when the page is slower than timeout", async () => {
    // The page would answer after a minute: only the 300 ms timeout can end the wait before.
    const url = fx.site.url("slow?ms=60000");
    const started = Date.now();
    const error = await page.goto(url, { timeout: 300 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceTimeoutError", timeoutMs: 300 });
    expect((error as Error).message).toContain(url);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("stops when its signal aborts: ServiceCancelledError at once, the page stops loading and stays usable", async () => {
    const before = fx.site.url("index.html");
    await page.goto(before);
    // A page the server answers only when the test lets it: the abort alone can end the wait, and
    // the browser shows it let go by closing the request.
    const held = holdPage(fx.site, "/held.html");
    try {
      const controller = new AbortController();
      const pending = page
        .goto(fx.site.url("held.html"), { signal: controller.signal })
        .catch((e: unknown) => e);
      await held.requested;
      controller.abort();
      const error = await pending;
      expect(error).toMatchObject({ name: "ServiceCancelledError" });
      expect((error as Error).message).toContain("held.html");
      // The page stopped loading: the browser dropped the request. Answered now, it goes nowhere.
      await held.dropped;
      held.answer();
      expect(page.url()).toBe(before);
      expect(await page.locator("#increment").count()).toBe(1);
      expect(await page.goto(fx.site.url("form.html"))).toBe(200);
    } finally {
      held.release();
    }
  });

  it("with a signal that has already aborted does not navigate, and rejects with the abort reason", async () => {
    const before = fx.site.url("index.html");
    await page.goto(before);
    const reason = new (await import("deckhand")).ServiceTimeoutError("the caller's task", 10);
    const error = await page
      .goto(fx.site.url("form.html"), { signal: AbortSignal.abort(reason) })
      .catch((e: unknown) => e);
    expect(error).toBe(reason);
    expect(page.url()).toBe(before);
    const back = await page.goBack({ signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(back).toMatchObject({ name: "ServiceCancelledError" });
    expect(page.url()).toBe(before);
  });

  it("throws ServiceNavigationError for an unreachable URL", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/`;
    const error = await page.goto(url).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceNavigationError", url });
    expect((error as Error).message).toMatch(/ERR_CONNECTION_REFUSED/);
  });

  it("throws ServiceNavigationError for a host that does not resolve", async () => {
    const error = await page.goto("http://deckhand-test.invalid/").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceNavigationError" });
    expect((error as Error).message).toMatch(/ERR_NAME_NOT_RESOLVED/);
  });

  it("rejects an unknown waitUntil with ServiceInvalidArgumentError", async () => {
    await expect(page.goto(fx.site.url("index.html"), { waitUntil: "idle" as never })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });

  it("leaves the page usable after a timeout", async () => {
    await page.goto(fx.site.url("slow?ms=5000"), { timeout: 200 }).catch(() => undefined);
    expect(await page.goto(fx.site.url("form.html"))).toBe(200);
    expect(await page.title()).toBe("Sign in");
  });
});

describe("reload()", () => {
  it("loads a fresh copy of the document and returns its status", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.locator("#increment").click();
    expect(await page.locator("#count").textContent()).toBe("1");
    expect(await page.reload()).toBe(200);
    expect(await page.locator("#count").textContent()).toBe("0");
    expect(page.url()).toBe(fx.site.url("index.html"));
  });

  it("asks the server again", async () => {
    await page.goto(fx.site.url("form.html"));
    const before = fx.site.requests.filter((r) => r.path === "/form.html").length;
    await page.reload();
    expect(fx.site.requests.filter((r) => r.path === "/form.html").length).toBe(before + 1);
  });
});

describe("goBack() and goForward()", () => {
  it("go back to the previous document and forward again", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.goto(fx.site.url("form.html"));
    expect(await page.goBack()).toBe(200);
    expect(page.url()).toBe(fx.site.url("index.html"));
    expect(await page.title()).toBe("Deckhand fixture");
    expect(await page.goForward()).toBe(200);
    expect(page.url()).toBe(fx.site.url("form.html"));
    expect(await page.title()).toBe("Sign in");
  });

  it("return null and stay put when there is no entry to go to", async () => {
    await page.goto(fx.site.url("index.html"));
    expect(await page.goForward()).toBeNull();
    expect(page.url()).toBe(fx.site.url("index.html"));
  });

  it("return null for a step between #hash entries of one document", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.goto(fx.site.url("index.html#two"));
    expect(await page.goBack()).toBeNull();
    expect(page.url()).toBe(fx.site.url("index.html"));
  });
});

describe("url() and title()", () => {
  it("follow a navigation the page makes itself", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.locator("text=Go to the login form").click();
    expect(
      await eventually(
        async () => page.url(),
        (url) => url.endsWith("form.html"),
      ),
    ).toBe(fx.site.url("form.html"));
    await page.waitForLoadState("load");
    expect(await page.title()).toBe("Sign in");
  });

  it("follow history.pushState", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.evaluate(() => history.pushState({}, "", "/pushed/path?x=1"));
    expect(page.url()).toBe(fx.site.url("pushed/path?x=1"));
  });

  it("title() reads a title the page changed from script", async () => {
    await page.goto(fx.site.url("index.html"));
    await page.evaluate(() => {
      document.title = "Changed by script";
    });
    expect(await page.title()).toBe("Changed by script");
  });
});

/**
 * A DevTools relay in front of the file's browser that passes every message except the events
 * `drop` picks: the browser's own behaviour when a navigation commits in a renderer whose page
 * agent is not enabled yet (the first tab, handed out before its renderer started).
 */
async function droppingRelay(
  target: string,
  drop: (message: { method?: string; params?: unknown }) => boolean,
) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  const relay = { url: "", dropped: 0, close: () => new Promise((resolve) => server.close(resolve)) };
  relay.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${new URL(target).pathname}`;
  server.on("connection", (client) => {
    const upstream = new WebSocket(target, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    const early: string[] = [];
    upstream.on("open", () => {
      for (const message of early.splice(0)) upstream.send(message);
    });
    client.on("message", (data) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(String(data));
      else early.push(String(data));
    });
    upstream.on("message", (data) => {
      if (drop(JSON.parse(String(data)))) relay.dropped++;
      else client.send(String(data));
    });
    client.on("close", () => upstream.close());
    upstream.on("close", () => client.close());
    upstream.on("error", () => client.close());
  });
  return relay;
}

describe("a commit the browser does not report", () => {
  it("goto() still leaves url() at the new page, and the next goto() too", async () => {
    const relay = await droppingRelay(
      fx.dh.connectURL(),
      (m) =>
        m.method === "Page.frameNavigated" &&
        (m.params as { frame: { parentId?: string; url: string } }).frame.parentId === undefined,
    );
    const other = new Deckhand(testOptions({ cdpUrl: relay.url }));
    try {
      await other.init();
      const tab = await other.context.newPage();
      expect(await tab.goto(fx.site.url("index.html"))).toBe(200);
      expect(relay.dropped).toBeGreaterThan(0);
      expect(tab.url()).toBe(fx.site.url("index.html"));
      // An older frame tree on its way does not undo it, nor does a second navigation go unseen.
      await tab.goto(fx.site.url("index.html#part"));
      expect(tab.url()).toBe(fx.site.url("index.html#part"));
      await tab.goto("data:text/html,<title>second</title>");
      expect(tab.url()).toBe("data:text/html,<title>second</title>");
      expect(await tab.title()).toBe("second");
      await tab.close();
    } finally {
      await other.close();
      await relay.close();
    }
  });
});
