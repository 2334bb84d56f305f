// GET /v1/sessions/{id}/cdp: the library's own Browser.connect works through it, and a client
// only ever sees and controls its own session's browser context.

import { match } from "@deckhand/testkit";
import { Browser, Deckhand, launchChrome } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { NOWHERE, parseEgressPolicy } from "../src/policy/egress.ts";
import {
  cdpCall,
  eventually,
  type Fixtures,
  idOf,
  type LiveService,
  MODEL_KEY,
  ok,
  QUIET_ARGS,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
} from "./live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
let mine: string;
let theirs: string;

const proxyUrl = (id: string) => `${svc.url.replace("http:", "ws:")}/v1/sessions/${id}/cdp`;
const connect = (id: string, key = svc.key.key) =>
  Browser.connect(proxyUrl(id), { headers: { "x-platform-api-key": key } });

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  mine = await svc.start();
  theirs = await svc.start();
  await ok(await svc.op(mine, "navigate", { url: fx.site.url("form.html") }));
  await ok(await svc.op(theirs, "navigate", { url: fx.site.url("index.html") }));
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

/** The HTTP status a WebSocket handshake was refused with. */
function handshakeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe("Browser.connect through the CDP proxy", () => {
  it("sees the session's pages as its default context, and drives them", async () => {
    const browser = await connect(mine);
    try {
      expect(browser.contexts()).toHaveLength(1);
      const pages = browser.defaultContext().pages();
      expect(pages.map((p) => p.url())).toEqual([fx.site.url("form.html")]);
      const page = pages[0]!;
      await page.locator("#username").fill("through the proxy");
      await page.locator("button").click();
      expect(await page.locator("#result").textContent()).toContain("through the proxy");
      await page.goto(fx.site.url("index.html"));
      await page.locator("#increment").click();
      // The session sees what the proxy client did.
      const text = await ok<{ result: { pageText: string } }>(await svc.op(mine, "extract", {}));
      expect(text.result.pageText).toContain("Count: 1");
    } finally {
      browser.disconnect();
    }
  });

  it("passes a large answer on whole and exact, characters of several bytes included", async () => {
    // The browser's pipe is read 64 KiB at a time: an answer of megabytes goes on in the chunks it
    // was read in, and a character's bytes may be split between two of them.
    const browser = await connect(mine);
    try {
      const page = browser.defaultContext().pages()[0]!;
      const unit = 'é€😀x\\"';
      const sent = await page.evaluate((u: string) => u.repeat(300_000), unit);
      expect(sent.length).toBe(unit.length * 300_000);
      expect(sent).toBe(unit.repeat(300_000));
      // The connection goes on: a small call after it is answered.
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
    } finally {
      browser.disconnect();
    }
  });

  it("opens new tabs in the session's context, where the session's operations find them", async () => {
    const browser = await connect(mine);
    try {
      const page = await browser.defaultContext().newPage(fx.site.url("list.html"));
      const live = svc.service.sessions.get(mine)!;
      await eventually(
        () => live.dh.context.pages().some((p) => p.targetId === page.targetId),
        5000,
        "the new tab",
      );
      const text = await ok<{ result: { pageText: string } }>(
        await svc.op(mine, "extract", { frameId: page.targetId }),
      );
      expect(text.result.pageText).toContain("Banana");
      // The tab the client opened is in front for the session too: operations naming no frame use it.
      await eventually(
        () => live.dh.context.activePage()?.targetId === page.targetId,
        5000,
        "the active page",
      );
      const active = await ok<{ result: { pageText: string } }>(await svc.op(mine, "extract", {}));
      expect(active.result.pageText).toContain("Banana");
      // And not in the other session's.
      expect(
        svc.service.sessions
          .get(theirs)!
          .dh.context.pages()
          .map((p) => p.targetId),
      ).not.toContain(page.targetId);
      await page.close();
    } finally {
      browser.disconnect();
    }
  });

  it("shows nothing of another session, and refuses to touch it", async () => {
    const other = svc.service.sessions.get(theirs)!;
    const foreign = other.dh.context.pages()[0]!.targetId;
    const browser = await connect(mine);
    try {
      const root = browser.connection.root;
      const { targetInfos } = await root.send("Target.getTargets");
      expect(targetInfos.map((t) => t.targetId)).not.toContain(foreign);
      expect(new Set(targetInfos.map((t) => t.browserContextId))).toEqual(
        new Set([svc.service.sessions.get(mine)!.cdp.contextId]),
      );
      const { defaultBrowserContextId, browserContextIds } = await root.send("Target.getBrowserContexts");
      expect(defaultBrowserContextId).toBe(svc.service.sessions.get(mine)!.cdp.contextId);
      expect(browserContextIds).toEqual([]);

      const refusals = await Promise.all(
        [
          root.send("Target.attachToTarget", { targetId: foreign, flatten: true }),
          root.send("Target.closeTarget", { targetId: foreign }),
          root.send("Target.activateTarget", { targetId: foreign }),
          root.send("Target.getTargetInfo", { targetId: foreign }),
          root.send("Browser.close"),
          root.send("Target.createBrowserContext", {}),
          root.send("Target.disposeBrowserContext", { browserContextId: other.cdp.contextId! }),
          root.send("Security.setIgnoreCertificateErrors", { ignore: true }),
        ].map((sent) =>
          sent.then(
            () => "allowed",
            (error: Error) => error.message,
          ),
        ),
      );
      for (const refusal of refusals) expect(refusal).not.toBe("allowed");
      expect(refusals[0]).toContain("No target with given id found");
      expect(refusals[4]).toContain("Browser.close is not available through the session's CDP proxy");

      // A command on a session id that is not this client's.
      const error = await cdpCall(
        proxyUrl(mine),
        "Runtime.evaluate",
        { expression: "1" },
        {
          "x-platform-api-key": svc.key.key,
        },
        "F00D",
      ).then(
        () => "allowed",
        (e: Error) => e.message,
      );
      expect(error).toBe("Session with given id not found.");

      // The other session is untouched, and its pages still open and work while this client is attached.
      expect(other.dh.context.pages().map((p) => p.targetId)).toContain(foreign);
      const opened = await other.dh.context.newPage(fx.site.url("form.html"));
      expect(opened.url()).toBe(fx.site.url("form.html"));
      await opened.close();
      expect(
        browser
          .defaultContext()
          .pages()
          .map((p) => p.targetId),
      ).not.toContain(opened.targetId);
      const theirText = await ok<{ result: { pageText: string } }>(await svc.op(theirs, "extract", {}));
      expect(theirText.result.pageText).toContain("Deckhand fixture");
    } finally {
      browser.disconnect();
    }
  });
});

/** A raw CDP client on the session's proxy: commands by method, on the root or a session. */
async function rawProxyClient(id: string) {
  const ws = new WebSocket(proxyUrl(id), { headers: { "x-platform-api-key": svc.key.key } });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    const call = typeof message.id === "number" ? pending.get(message.id) : undefined;
    if (!call) return;
    pending.delete(message.id);
    if (message.error) call.reject(new Error(message.error.message));
    else call.resolve(message.result);
  });
  return {
    send<T = Record<string, unknown>>(method: string, params = {}, sessionId?: string): Promise<T> {
      const messageId = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(messageId, { resolve: resolve as (result: unknown) => void, reject });
        ws.send(JSON.stringify({ id: messageId, method, params, ...(sessionId ? { sessionId } : {}) }));
      });
    },
    close: () => ws.close(),
  };
}

describe("a session on the browser target (what Playwright's newCDPSession opens)", () => {
  it("is held to the rules of the connection itself", async () => {
    const client = await rawProxyClient(mine);
    try {
      const { sessionId: browserSession } = await client.send<{ sessionId: string }>(
        "Target.attachToBrowserTarget",
      );
      const own = svc.service.sessions.get(mine)!;
      const foreign = svc.service.sessions.get(theirs)!.dh.context.pages()[0]!.targetId;
      const { targetInfos } = await client.send<{
        targetInfos: { targetId: string; browserContextId: string }[];
      }>("Target.getTargets", {}, browserSession);
      expect(new Set(targetInfos.map((t) => t.browserContextId))).toEqual(new Set([own.cdp.contextId]));
      const refused = (sent: Promise<unknown>) =>
        sent.then(
          () => "allowed",
          (error: Error) => error.message,
        );
      expect(await refused(client.send("Browser.close", {}, browserSession))).toContain("not available");
      expect(
        await refused(
          client.send("Target.attachToTarget", { targetId: foreign, flatten: true }, browserSession),
        ),
      ).toContain("No target with given id found");
      expect(
        await refused(client.send("Security.setIgnoreCertificateErrors", { ignore: true }, browserSession)),
      ).toContain("not available through the session's CDP proxy");

      // Its own pages it may attach to and drive.
      const page = own.dh.context.pages()[0]!.targetId;
      const { sessionId: pageSession } = await client.send<{ sessionId: string }>(
        "Target.attachToTarget",
        { targetId: page, flatten: true },
        browserSession,
      );
      const { result } = await client.send<{ result: { value: unknown } }>(
        "Runtime.evaluate",
        { expression: "6 * 7" },
        pageSession,
      );
      expect(result.value).toBe(42);
    } finally {
      client.close();
    }
  });
});

describe("the library's REMOTE client", () => {
  it("drives a session: page API through the proxy, AI operations over HTTP, metrics from the replay", async () => {
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["%user%"],
      description: "type the user name",
      completed: true,
    }));
    fx.model.on(match.schemaName("extract"), { extraction: "a list page" });
    const dh = new Deckhand({
      env: "REMOTE",
      apiKey: svc.key.key,
      apiUrl: svc.url,
      model: { ...scriptedModelConfig(fx.model), apiKey: MODEL_KEY },
      verbose: 0,
      disablePino: true,
    });
    await dh.init();
    try {
      const live = svc.service.sessions.get(dh.sessionId!)!;
      expect(live.projectId).toBe(svc.key.projectId);
      await dh.page.goto(fx.site.url("form.html"));
      const acted = await dh.act("type the user name", { variables: { user: "remote-user" } });
      expect(acted).toMatchObject({ success: true, cacheStatus: "MISS" });
      expect(await dh.page.locator("#username").inputValue()).toBe("remote-user");
      // A tab the client opens is where its next operation works.
      await dh.context.newPage(fx.site.url("list.html"));
      expect(await dh.extract("what is this page")).toEqual({
        extraction: "a list page",
        cacheStatus: "MISS",
      });
      expect((await dh.extract()).pageText).toContain("Banana");
      const metrics = await dh.metrics;
      expect(metrics.totalPromptTokens).toBe(200);
      expect(metrics.actCompletionTokens).toBe(20);
    } finally {
      await dh.close();
    }
    expect((await svc.store.getSession(dh.sessionId!))?.status).toBe("ended");
  });
});

describe("a session on a browser of the caller's (browser.cdpUrl)", () => {
  it("works through the service and its proxy, and ending it leaves that browser running", async () => {
    const own = await launchChrome({ headless: true, args: [...QUIET_ARGS, svc.marker] });
    try {
      const id = await svc.start({ browser: { type: "local", cdpUrl: own.wsEndpoint! } });
      const { cdp } = svc.service.sessions.get(id)!;
      expect(cdp.contextId).toBeUndefined();
      expect(cdp.browser.launched).toBeUndefined();
      await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
      const browser = await connect(id);
      try {
        const urls = browser
          .defaultContext()
          .pages()
          .map((p) => p.url());
        expect(urls).toContain(fx.site.url("list.html"));
        // Nothing of the service's own sessions shows here.
        expect(urls).not.toContain(fx.site.url("form.html"));
      } finally {
        browser.disconnect();
      }
      await ok(await svc.op(id, "end"));
      expect(own.hasExited()).toBe(false);
      const { targetInfos } = await cdpCall<{ targetInfos: unknown[] }>(own.wsEndpoint!, "Target.getTargets");
      expect(targetInfos.length).toBeGreaterThan(0);
    } finally {
      await own.kill();
    }
  });
});

describe("where browser.cdpUrl may lead", () => {
  async function startStatus(
    service: LiveService,
    cdpUrl: string,
  ): Promise<{ status: number; body: { code?: string; error?: string } }> {
    const response = await service.call("/v1/sessions/start", {
      json: { browser: { type: "local", cdpUrl } },
    });
    return { status: response.status, body: await response.json() };
  }

  it("only to the hosts the operator allows (--cdp-url-hosts), or nowhere", async () => {
    const own = await launchChrome({ headless: true, args: [...QUIET_ARGS, svc.marker] });
    const onlyOther = await startLiveService({ cdpUrlHosts: parseEgressPolicy("127.0.0.2", "test") });
    const none = await startLiveService({ cdpUrlHosts: NOWHERE });
    const byName = await startLiveService({ cdpUrlHosts: parseEgressPolicy("localhost", "test") });
    try {
      const refused = await startStatus(onlyOther, own.wsEndpoint!);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(
        /browser\.cdpUrl.*"127\.0\.0\.1" \(127\.0\.0\.1\) is not one this service connects to \(allowed: 127\.0\.0\.2\)/s,
      );
      const nowhere = await startStatus(none, own.wsEndpoint!);
      expect(nowhere.status).toBe(400);
      expect(nowhere.body.error).toContain("connects nowhere of the caller's choosing");
      // An allowed host attaches: the browser answers on localhost as well.
      const id = await byName.start({
        browser: { type: "local", cdpUrl: own.wsEndpoint!.replace("127.0.0.1", "localhost") },
      });
      await ok(await byName.op(id, "navigate", { url: fx.site.url("list.html") }));
      await ok(await byName.op(id, "end"));
      expect(own.hasExited()).toBe(false);
    } finally {
      await Promise.all([onlyOther.close(), none.close(), byName.close()]);
      await own.kill();
    }
  });
});

describe("authentication and lifetime", () => {
  it("takes the key from the x-platform-api-key header or ?apiKey=, and refuses others with 401/404", async () => {
    expect(await handshakeStatus(proxyUrl(mine))).toBe(401);
    expect(await handshakeStatus(proxyUrl(mine), { "x-platform-api-key": "dh_0000000000000000_nope" })).toBe(
      401,
    );
    expect(await handshakeStatus(proxyUrl(mine), { "x-platform-api-key": svc.otherKey.key })).toBe(404);
    expect(
      await handshakeStatus(proxyUrl("00000000-0000-4000-8000-000000000000"), {
        "x-platform-api-key": svc.key.key,
      }),
    ).toBe(404);
    expect(await handshakeStatus(`${proxyUrl(mine)}?apiKey=${encodeURIComponent(svc.key.key)}`)).toBe(101);
    expect(
      await handshakeStatus(`${svc.url.replace("http:", "ws:")}/v1/elsewhere`, {
        "x-platform-api-key": svc.key.key,
      }),
    ).toBe(404);
    expect(svc.logText()).not.toContain(svc.key.key);
  });

  it("answers a plain GET with 426, and keeps a key given as ?apiKey= out of the log", async () => {
    const response = await svc.call(`/v1/sessions/${mine}/cdp`);
    expect(response.status).toBe(426);
    expect(await response.json()).toMatchObject({ success: false, code: "UPGRADE_REQUIRED" });
    const byQuery = await fetch(
      `${svc.url}/v1/sessions/${mine}/cdp?apiKey=${encodeURIComponent(svc.otherKey.key)}`,
    );
    expect(byQuery.status).toBe(404);
    expect(svc.logText()).toContain("apiKey=[redacted]");
    expect(svc.logText()).not.toContain(svc.otherKey.key);
  });

  it("closes the connection when the session ends, and refuses it afterwards with 410", async () => {
    const id = await svc.start();
    const browser = await connect(id);
    const closed = new Promise<void>((resolve) => browser.onDisconnected(() => resolve()));
    await ok(await svc.op(id, "end"));
    await closed;
    expect(browser.isConnected()).toBe(false);
    expect(await handshakeStatus(proxyUrl(id), { "x-platform-api-key": svc.key.key })).toBe(410);
  });
});
