// Where a key holder can make the service connect: a session's browser.cdpUrl and a call's model
// baseURL. The operator's allow-lists are held on resolved addresses (no spelling gets around
// them), the service never calls itself, the connection goes to the address that was checked (not
// to one an answer names), and whatever answers out there, the caller learns only that it could
// not be used: no banner, status line or body.

import { once } from "node:events";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { launchChrome } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { NOWHERE, PUBLIC_ONLY, parseEgressPolicy } from "../../src/policy/egress.ts";
import {
  type Fixtures,
  type LiveService,
  ok,
  QUIET_ARGS,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";

let fx: Fixtures;
let svc: LiveService;
const servers: (Server | TcpServer)[] = [];

async function listen<T extends Server | TcpServer>(server: T, host = "127.0.0.1"): Promise<number> {
  servers.push(server);
  server.listen(0, host);
  await once(server, "listening");
  return (server.address() as { port: number }).port;
}

/** A port that refuses connections: listened on, then closed. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

const SECRET = "SECRET-BANNER-7f3a";

beforeAll(async () => {
  fx = await startFixtures();
  svc = await startLiveService();
});
afterAll(async () => {
  for (const server of servers) server.close();
  await svc?.close();
  await fx?.close();
});

async function start(service: LiveService, cdpUrl: string) {
  const response = await service.call("/v1/sessions/start", { json: { browser: { type: "local", cdpUrl } } });
  return { status: response.status, body: (await response.json()) as { code?: string; error?: string } };
}

/**
 * A start whose browser.cdpUrl leads to no browser is accepted, and the browser is attached when
 * the session is first used (as the reference does): that first use is where it fails, a 502
 * CDP_URL_UNREACHABLE. Starts the session, uses it once, ends it, and returns that first use.
 */
async function startAndUse(service: LiveService, cdpUrl: string) {
  const started = await service.call("/v1/sessions/start", {
    json: { browser: { type: "local", cdpUrl } },
  });
  const startBody = (await started.json()) as { data?: { sessionId?: string }; code?: string };
  expect(started.status, JSON.stringify(startBody)).toBe(200);
  const id = startBody.data!.sessionId!;
  const used = await service.op(id, "navigate", { url: "about:blank" });
  const body = (await used.json()) as { code?: string; error?: string };
  await service.op(id, "end");
  return { status: used.status, body };
}

/** Things that answer on loopback without being a browser or a model: each with a secret to keep. */
async function strangers(): Promise<Record<string, string>> {
  const banner = createHttpServer((_req, res) => {
    res.writeHead(404, { server: `Apache/2.4.57 ${SECRET}`, "content-type": "text/html" });
    res.end(`<h1>Not Found</h1><address>${SECRET} at internal-host</address>`);
  });
  const json = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ internal: SECRET, webSocketDebuggerUrl: 42 }));
  });
  const ssh = createTcpServer((socket) => socket.end(`SSH-2.0-OpenSSH_9.2 ${SECRET}\r\n`));
  return {
    closed: `http://127.0.0.1:${await closedPort()}`,
    banner: `http://127.0.0.1:${await listen(banner)}`,
    json: `http://127.0.0.1:${await listen(json)}`,
    ssh: `http://127.0.0.1:${await listen(ssh)}`,
  };
}

describe("browser.cdpUrl", () => {
  it("never leads to the service itself, however loopback is spelled", async () => {
    const { port } = new URL(svc.url);
    const mine = await svc.start();
    const spellings = [
      `http://127.0.0.1:${port}`,
      `ws://localhost:${port}/v1/sessions/${mine}/cdp?apiKey=${encodeURIComponent(svc.key.key)}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      `http://[::ffff:7f00:1]:${port}`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}`,
      `http://0x7f.1:${port}`,
      `http://2130706433:${port}`,
      `http://127.1:${port}`,
      `http://017700000001:${port}`,
      `ws://0.0.0.0:${port}/`,
      `ws://[::1]:${port}/`,
    ];
    for (const cdpUrl of spellings) {
      const { status, body } = await start(svc, cdpUrl);
      expect(status, cdpUrl).toBe(400);
      expect(body.error, cdpUrl).toContain("browser.cdpUrl");
      expect(body.error, cdpUrl).toContain("leads to this service itself");
    }
    await ok(await svc.op(mine, "end"));
  });

  it("holds the operator's list to addresses: an IPv4-mapped spelling of a refused address is refused", async () => {
    const browser = await launchChrome({ headless: true, args: [...QUIET_ARGS, svc.marker] });
    const onlyOther = await startLiveService({
      cdpUrlHosts: parseEgressPolicy("127.0.0.2, 10.0.0.0/8", "test"),
    });
    const publicOnly = await startLiveService({ cdpUrlHosts: PUBLIC_ONLY });
    const nowhere = await startLiveService({ cdpUrlHosts: NOWHERE });
    try {
      const { port } = new URL(browser.wsEndpoint!);
      for (const cdpUrl of [
        browser.wsEndpoint!,
        `http://[::ffff:127.0.0.1]:${port}`,
        `http://[::ffff:7f00:1]:${port}`,
        `http://localhost:${port}`,
        `http://0x7f000001:${port}`,
      ]) {
        for (const service of [onlyOther, publicOnly]) {
          const { status, body } = await start(service, cdpUrl);
          expect(status, cdpUrl).toBe(400);
          expect(body.error, cdpUrl).toMatch(/\(127\.0\.0\.1\) is not one this service connects to/);
        }
        const { status, body } = await start(nowhere, cdpUrl);
        expect(status).toBe(400);
        expect(body.error).toContain("connects nowhere");
      }
      // Nothing of those tries reached the browser: it has only its own first tab.
      const page = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
      expect(page).toHaveLength(1);
    } finally {
      await Promise.all([onlyOther.close(), publicOnly.close(), nowhere.close()]);
      await browser.kill();
    }
  });

  it("connects to the address it checked, never to one the DevTools answer names", async () => {
    // Elsewhere: a WebSocket server on another address, which the answer below points at.
    let elsewhereHits = 0;
    const elsewhere = createHttpServer();
    const elsewhereWs = new WebSocketServer({ server: elsewhere });
    elsewhereWs.on("connection", () => elsewhereHits++);
    elsewhere.on("request", () => elsewhereHits++);
    const elsewherePort = await listen(elsewhere, "127.0.0.2");
    // The allowed endpoint names that other address in its /json/version.
    const upgrades: string[] = [];
    const endpoint = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ webSocketDebuggerUrl: `ws://127.0.0.2:${elsewherePort}/devtools/browser/abc` }),
      );
    });
    endpoint.on("upgrade", (req, socket) => {
      upgrades.push(req.url ?? "");
      socket.destroy();
    });
    const endpointPort = await listen(endpoint);
    const pinned = await startLiveService({ cdpUrlHosts: parseEgressPolicy("127.0.0.1", "test") });
    try {
      const { status, body } = await startAndUse(pinned, `http://127.0.0.1:${endpointPort}`);
      expect(status).toBe(502);
      expect(body.code).toBe("CDP_URL_UNREACHABLE");
      // The path was taken from the answer, the address was not.
      // (once at start, once at the first use that tries to attach it).
      expect(upgrades.length).toBeGreaterThan(0);
      expect(new Set(upgrades)).toEqual(new Set(["/devtools/browser/abc"]));
      expect(elsewhereHits).toBe(0);
    } finally {
      elsewhereWs.close();
      await pinned.close();
    }
  });

  it("says the same thing whatever answered (nothing, a web server, a JSON API, an SSH banner)", async () => {
    const answers = new Set<string>();
    for (const [what, url] of Object.entries(await strangers())) {
      const { status, body } = await startAndUse(svc, url);
      expect(status, what).toBe(502);
      expect(JSON.stringify(body), what).not.toContain(SECRET);
      answers.add(JSON.stringify(body));
    }
    expect(answers.size).toBe(1);
    expect(svc.service.sessions.size).toBe(0);
  });
});

describe("a model baseURL", () => {
  const extract = (service: LiveService, id: string, baseURL: string) =>
    service.op(
      id,
      "extract",
      {
        instruction: "the heading",
        options: { model: { modelName: "openai/gpt-4.1-mini", baseURL, apiKey: "sk-test", maxRetries: 0 } },
      },
      { headers: { "x-platform-cache-bypass": "true" } },
    );

  it("goes only where the operator allows, judged by address", async () => {
    const publicOnly = await startLiveService({ modelBaseUrlHosts: PUBLIC_ONLY });
    try {
      const id = await publicOnly.start();
      await ok(await publicOnly.op(id, "navigate", { url: fx.site.url("index.html") }));
      const { port } = new URL(fx.model.baseURL);
      for (const baseURL of [
        fx.model.baseURL,
        `http://[::ffff:127.0.0.1]:${port}/v1`,
        `http://localhost:${port}/v1`,
        `http://2130706433:${port}/v1`,
        `http://[::1]:${port}/v1`,
      ]) {
        const response = await extract(publicOnly, id, baseURL);
        expect(response.status, baseURL).toBe(400);
        expect((await response.json()).error, baseURL).toMatch(
          /options\.model\.baseURL.*is not one this service connects to/s,
        );
      }
      const ownPort = new URL(publicOnly.url).port;
      const self = await extract(publicOnly, id, `http://127.0.0.1:${ownPort}/v1`);
      expect(self.status).toBe(400);
      expect(fx.model.requests).toHaveLength(0);
    } finally {
      await publicOnly.close();
    }
  });

  it("fails the same way whatever answered, and the answer's text stays out of it", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const answers = new Set<string>();
    for (const [what, url] of Object.entries(await strangers())) {
      const response = await extract(svc, id, `${url}/v1`);
      const text = await response.text();
      expect(response.status, what).toBe(502);
      expect(text, what).not.toContain(SECRET);
      answers.add(text.replace(/http:\/\/127\.0\.0\.1:\d+/g, "<endpoint>"));
    }
    expect(answers.size).toBe(1);
    const replay = await ok<{ pages: { actions: unknown[] }[] }>(await svc.call(`/v1/sessions/${id}/replay`));
    expect(JSON.stringify(replay)).not.toContain(SECRET);
    await ok(await svc.op(id, "end"));
  });
});
