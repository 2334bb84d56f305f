// The reference's page and context calls in REMOTE mode, where the page is driven through the
// service's CDP proxy (an allow-list): each must get through, and stay within the session.

import type { IncomingMessage } from "node:http";
import type { ConsoleMessage, Deckhand } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RemoteFixture, remoteFixture } from "./helpers.ts";

let fx: RemoteFixture;
let dh: Deckhand;

beforeAll(async () => {
  fx = await remoteFixture();
  fx.site.route("/headers.html", (req: IncomingMessage, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>h</title><pre id="headers">${JSON.stringify(req.headers)}</pre>`);
  });
  dh = await fx.started({ env: "BROWSERBASE" });
});

afterAll(async () => {
  await fx?.close();
});

describe('env "BROWSERBASE" (REMOTE) page and context calls', () => {
  it("is a REMOTE session of the service", () => {
    expect(dh.options.env).toBe("REMOTE");
    expect(dh.sessionId).toEqual(expect.any(String));
    expect(fx.service.service.sessions.get(dh.sessionId!)).toBeDefined();
  });

  it("starts pages at the default 1288x711 viewport, and setViewportSize changes it", async () => {
    const page = dh.page;
    await page.goto(fx.site.url("index.html"));
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([1288, 711]);
    await page.setViewportSize(900, 500);
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([900, 500]);
  });

  it("addInitScript, setExtraHTTPHeaders and console events work through the proxy", async () => {
    const page = dh.page;
    await page.addInitScript(() => {
      (window as unknown as { early: boolean }).early = true;
    });
    await page.setExtraHTTPHeaders({ "x-remote-header": "yes" });
    const messages: string[] = [];
    page.on("console", (message: ConsoleMessage) => messages.push(message.text()));
    await page.goto(fx.site.url("headers.html"));
    expect(await page.evaluate("window.early")).toBe(true);
    expect(JSON.parse((await page.locator("#headers").textContent()) ?? "{}")).toMatchObject({
      "x-remote-header": "yes",
    });
    await page.evaluate(() => console.log("through the proxy"));
    await expect.poll(() => messages).toContain("through the proxy");
  });

  it("context cookies are the session's own", async () => {
    const url = fx.site.url("index.html");
    await dh.context.addCookies([{ name: "remote", value: "1", url }]);
    expect((await dh.context.cookies(url)).map((c) => c.name)).toContain("remote");
    await dh.page.goto(url);
    expect(await dh.page.evaluate(() => document.cookie)).toContain("remote=1");
    // Another session of the same service does not see it.
    const other = await fx.started();
    expect((await other.context.cookies()).map((c) => c.name)).not.toContain("remote");
    await dh.context.clearCookies();
    expect(await dh.context.cookies()).toEqual([]);
  });
});
