import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureServer, listProduct, startFixtureServer } from "../src/index.ts";
import { request } from "./support/http.ts";

let server: FixtureServer;

beforeAll(async () => {
  server = await startFixtureServer();
});

afterAll(async () => {
  await server?.close();
});

describe("sites", () => {
  it("listens on three loopback hosts, each a different site", () => {
    expect(new URL(server.origin).hostname).toBe("127.0.0.1");
    expect(new URL(server.crossOrigin).hostname).toBe("127.0.0.2");
    expect(new URL(server.thirdOrigin).hostname).toBe("127.0.0.3");
  });

  it("serves the same pages on all three hosts", async () => {
    for (const url of [
      server.url("index.html"),
      server.crossUrl("/index.html"),
      server.thirdUrl("index.html"),
    ]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("<title>Deckhand fixture</title>");
    }
  });

  it("serves index.html for a directory", async () => {
    expect(await (await fetch(server.url("/"))).text()).toContain("<title>Deckhand fixture</title>");
  });

  it("fills the origin placeholders in HTML with the real origins", async () => {
    const top = await (await fetch(server.url("frames/nested-cross.html"))).text();
    expect(top).toContain(`src="${server.crossOrigin}/frames/cross-middle.html"`);
    const middle = await (await fetch(server.crossUrl("frames/cross-middle.html"))).text();
    expect(middle).toContain(`src="${server.thirdOrigin}/frames/child.html"`);
    const inShadow = await (await fetch(server.url("shadow/oopif-in-shadow.html"))).text();
    expect(inShadow).toContain(`${server.crossOrigin}/frames/child.html`);
    for (const page of [top, middle, inShadow]) expect(page).not.toContain("{{");
  });

  it.each([
    ["index.html", "text/html"],
    ["assets/app.js", "text/javascript"],
    ["assets/style.css", "text/css"],
    ["assets/pixel.png", "image/png"],
    ["assets/icon.svg", "image/svg+xml"],
    ["assets/data.json", "application/json"],
  ])("serves %s as %s", async (path, type) => {
    const response = await fetch(server.url(path));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain(type);
  });

  it("answers 404 for a missing file and for a path that climbs out of the pages folder", async () => {
    expect((await fetch(server.url("no-such-page.html"))).status).toBe(404);
    // fetch() would resolve "..", so this goes out raw.
    const escaped = await request(server.url("/..%2F..%2Fpackage.json"));
    expect(escaped.status).toBe(404);
    expect(escaped.body).not.toContain("@deckhand/testkit");
  });
});

describe("helper paths", () => {
  it("/status/<code> answers with that status and a small page", async () => {
    const response = await fetch(server.url("/status/503"));
    expect(response.status).toBe(503);
    expect(await response.text()).toContain("Status 503");
    expect((await fetch(server.url("/status/204"))).status).toBe(204);
  });

  it("/slow waits the given time, then sends the given body", async () => {
    const started = Date.now();
    const response = await fetch(server.url("/slow?ms=300&body=finally"));
    expect(await response.text()).toContain('<p id="body">finally</p>');
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("/redirect answers 302 to the given URL", async () => {
    const target = server.crossUrl("/form.html");
    const response = await fetch(server.url(`/redirect?to=${encodeURIComponent(target)}`), {
      redirect: "manual",
    });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(target);
    const followed = await fetch(server.url(`/redirect?to=${encodeURIComponent(target)}`));
    expect(followed.url).toBe(target);
  });

  it("/set-cookie sets a persistent cookie and shows it", async () => {
    const response = await fetch(server.url("/set-cookie?name=flavor&value=oatmeal"));
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^flavor=oatmeal; Path=\/; Max-Age=\d+; Expires=/);
    const expires = new Date(/Expires=([^;]+)/.exec(cookie)![1]!);
    expect(expires.getTime()).toBeGreaterThan(Date.now() + 365 * 24 * 3600 * 1000);
    expect(await response.text()).toContain('<p id="cookie">flavor=oatmeal</p>');
  });

  it("/echo-cookies lists the cookies it received in #cookies", async () => {
    const response = await fetch(server.url("/echo-cookies"), {
      headers: { cookie: "a=1; flavor=oat%20meal" },
    });
    const html = await response.text();
    expect(html).toContain('<ul id="cookies"><li>a=1</li><li>flavor=oat meal</li></ul>');
    expect(html).toContain('<p id="cookie-count">2</p>');
  });

  it("serves generated pages and the product pages they link to", async () => {
    const large = await (await fetch(server.url("/generated/large?elements=800"))).text();
    expect(large.match(/id="target"/g)).toHaveLength(1);
    const list = await (await fetch(server.url("/generated/list?rows=7"))).text();
    expect(list.match(/href="\/products\/\d+"/g)).toHaveLength(7);
    const product = await (await fetch(server.url("/products/3"))).text();
    expect(product).toContain(`<h1 id="name">${listProduct(3).name}</h1>`);
    expect(product).toContain(`<span id="price">${listProduct(3).price}</span>`);
  });
});

describe("routes", () => {
  it("serves a test's own handler on every host until it is unregistered", async () => {
    const unregister = server.route("/api/hello", (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ host: req.headers.host }));
    });
    for (const origin of [server.origin, server.crossOrigin, server.thirdOrigin]) {
      const response = await fetch(`${origin}/api/hello?x=1`);
      expect(await response.json()).toEqual({ host: new URL(origin).host });
    }
    unregister();
    expect((await fetch(server.url("/api/hello"))).status).toBe(404);
  });

  it("overrides a static page, and the page comes back when the route goes", async () => {
    const unregister = server.route("/index.html", (_req, res) => {
      res.end("overridden");
    });
    expect(await (await fetch(server.url("index.html"))).text()).toBe("overridden");
    unregister();
    expect(await (await fetch(server.url("index.html"))).text()).toContain("Deckhand fixture");
  });

  it("answers 500 when a handler throws", async () => {
    const unregister = server.route("/broken", () => {
      throw new Error("boom");
    });
    const response = await fetch(server.url("/broken"));
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("boom");
    unregister();
  });
});

describe("request log", () => {
  it("records host, method, path and headers of every request", async () => {
    await fetch(server.crossUrl("/list.html?from=test"), { method: "HEAD", headers: { "x-probe": "yes" } });
    const entry = server.requests.findLast((r) => r.path === "/list.html?from=test");
    expect(entry).toMatchObject({ host: new URL(server.crossOrigin).host, method: "HEAD" });
    expect(entry?.headers["x-probe"]).toBe("yes");
  });
});

describe("close", () => {
  it("closes promptly with a keep-alive connection idle and a slow response pending", async () => {
    const own = await startFixtureServer();
    const agent = new http.Agent({ keepAlive: true });
    await request(own.url("index.html"), { agent }); // leaves an idle keep-alive socket
    const pending = request(own.url("/slow?ms=60000"), { agent }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await own.close();
    // Not the minute the slow response would take, nor a keep-alive timeout: a stall alone reaches this.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await pending).toBeInstanceOf(Error);
    agent.destroy();
  });
});
