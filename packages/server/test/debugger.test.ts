// The debugger link (debugUrl), opened in real Chromium with no header: Chromium's own DevTools
// front end, served by the service from the installed Chromium, connected through the session's
// CDP proxy to the session's active page. Checked from inside the front end: its page target is
// the session's page, and a Runtime.evaluate it sends runs there.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { liveChromeProcesses } from "@deckhand/testkit";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  cdpCall,
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  STALL_MS,
  startFixtures,
  startLiveService,
} from "./live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
let viewer: Browser;

interface Started {
  sessionId: string;
  cdpUrl: string;
  debugUrl: string;
  sessionUrl: string;
}

beforeAll(async () => {
  [svc, fx, viewer] = await Promise.all([
    startLiveService(),
    startFixtures(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] }),
  ]);
});
afterAll(async () => {
  await viewer?.close();
  await svc?.close();
  await fx?.close();
});

/** What the DevTools front end in `page` is connected to, asked through its own SDK. */
async function inspected(page: import("playwright-core").Page): Promise<{ url: string; title: string }> {
  // A string, so that the test runner leaves its dynamic import alone.
  return page.evaluate(`(async () => {
    const sdk = await import(location.origin + "/devtools-frontend/core/sdk/sdk.js");
    const manager = sdk.TargetManager.TargetManager.instance();
    let target = manager.primaryPageTarget();
    for (const until = Date.now() + ${STALL_MS}; !target && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      target = manager.primaryPageTarget();
    }
    const answer = await target.runtimeAgent().invoke_evaluate({ expression: "document.title", returnByValue: true });
    return { url: target.inspectedURL(), title: answer.result.value };
  })()`);
}

describe("debugUrl", () => {
  it(
    "opens Chromium's DevTools on the session's active page, through the service",
    async () => {
      const a = await ok<Started>(await svc.call("/v1/sessions/start", { json: {} }));
      const b = await ok<Started>(await svc.call("/v1/sessions/start", { json: {} }));
      await ok(await svc.op(a.sessionId, "navigate", { url: fx.site.url("form.html") }));
      await ok(await svc.op(b.sessionId, "navigate", { url: fx.site.url("index.html") }));
      const titleOf = (id: string) => svc.service.sessions.get(id)!.dh.context.activePage()!.title();

      const context = await viewer.newContext();
      const page = await context.newPage();
      const requests: string[] = [];
      page.on("request", (request) => requests.push(request.url()));
      // The front end is a few hundred modules, served by the in-process service: on a loaded machine
      // its load took longer than Playwright's default 30 s (CI, load 20-46). A stall bound instead.
      await page.goto(a.debugUrl, { timeout: STALL_MS });
      expect(new URL(page.url()).pathname).toBe("/devtools-frontend/inspector.html");
      expect(await inspected(page)).toEqual({
        url: fx.site.url("form.html"),
        title: await titleOf(a.sessionId),
      });
      // Everything the front end loaded came from the service.
      expect(requests.length).toBeGreaterThan(5);
      for (const url of requests) expect(url.startsWith(`${svc.url}/`) || url.startsWith("data:")).toBe(true);
      await context.close();

      // The front end's files and nothing else of its browser: no way up to its DevTools endpoints.
      for (const attempt of [
        "/devtools-frontend/%2e%2e/json/version",
        "/devtools-frontend/..%2Fjson%2Fversion",
        "/devtools-frontend/./../json/list",
        "/devtools-frontend//json/version",
      ]) {
        const response = await fetch(`${svc.url}${attempt}`);
        const text = await response.text();
        expect(response.status, attempt).toBe(404);
        expect(text).not.toContain("webSocketDebuggerUrl");
      }

      const other = await viewer.newContext();
      const second = await other.newPage();
      await second.goto(b.debugUrl, { timeout: STALL_MS });
      expect(await inspected(second)).toEqual({
        url: fx.site.url("index.html"),
        title: await titleOf(b.sessionId),
      });
      await other.close();
      for (const s of [a, b]) await svc.op(s.sessionId, "end");
      // Two front ends loaded, each up to a stall.
    },
    3 * STALL_MS,
  );

  it("a foreign or tampered debug token is a 404; a page link's token opens no debugger", async () => {
    const a = await ok<Started>(await svc.call("/v1/sessions/start", { json: {} }));
    const b = await ok<Started>(await svc.call("/v1/sessions/start", { json: {} }));
    const token = new URL(a.debugUrl).searchParams.get("token")!;
    const onB = new URL(b.debugUrl);
    onB.searchParams.set("token", token);
    const pageToken = new URL(a.debugUrl);
    pageToken.searchParams.set("token", new URL(a.sessionUrl).searchParams.get("token")!);
    for (const url of [onB, pageToken].map(String)) {
      const response = await fetch(url, { redirect: "manual" });
      expect(response.status).toBe(404);
    }
    expect((await fetch(a.debugUrl, { redirect: "manual" })).status).toBe(302);
    for (const s of [a, b]) await svc.op(s.sessionId, "end");
  });

  it("the front end's browser has no tenant page, and a tenant's page cannot drive it", async () => {
    const a = await ok<Started>(await svc.call("/v1/sessions/start", { json: {} }));
    await ok(await svc.op(a.sessionId, "navigate", { url: fx.site.url("index.html") }));
    expect((await fetch(a.debugUrl, { redirect: "manual" })).status).toBe(302); // starts it
    const frontend = liveChromeProcesses(svc.marker).find((p) =>
      p.args.some((arg) => arg.startsWith("--remote-debugging-port")),
    );
    expect(frontend).toBeDefined();
    const profile = frontend!.args
      .find((arg) => arg.startsWith("--user-data-dir="))!
      .slice("--user-data-dir=".length);
    const [port, browserPath] = readFileSync(join(profile, "DevToolsActivePort"), "utf8").trim().split("\n");
    const endpoint = `ws://127.0.0.1:${port}${browserPath}`;

    // The endpoint is real (a local process without an Origin reaches it) and holds no page of anyone's.
    const targets = await new Promise<{ url: string; type: string }[]>((resolve, reject) => {
      const ws = new WebSocket(endpoint);
      ws.once("error", reject);
      ws.once("open", () => ws.send(JSON.stringify({ id: 1, method: "Target.getTargets" })));
      ws.on("message", (data) => {
        const message = JSON.parse(String(data));
        if (message.id !== 1) return;
        ws.close();
        resolve(message.result.targetInfos);
      });
    });
    expect(targets.filter((t) => t.type === "page").map((t) => t.url)).toEqual(["about:blank"]);

    // A tenant's page, knowing the port and the browser's id, cannot open it. (The refusal comes
    // at once; the page's own limit only ends a stall, on a busy machine too.)
    const page = svc.service.sessions.get(a.sessionId)!.dh.context.activePage()!;
    // (A string: the page's own WebSocket, not the test's import of the same name.)
    const outcome = await page.evaluate(`new Promise((resolve) => {
      const ws = new window.WebSocket(${JSON.stringify(endpoint)});
      ws.onopen = () => resolve("open");
      ws.onerror = () => resolve("refused");
      setTimeout(() => resolve("timeout"), 30000);
    })`);
    expect(outcome).toBe("refused");
    await svc.op(a.sessionId, "end");
  });
});

describe("closing the debugger", () => {
  // A service whose sessions outlive their last CDP client by 200 ms only.
  const graceMs = 200;
  let quick: LiveService;
  beforeAll(async () => {
    quick = await startLiveService({ sessionDisconnectGraceMs: graceMs });
  });
  afterAll(async () => {
    await quick?.close();
  });

  /** Resolves after `ms` on this process's clock, which is the in-process service's too. */
  const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("does not end the session; its own CDP client going away still does, after the grace", async () => {
    const started = await ok<Started>(await quick.call("/v1/sessions/start", { json: {} }));
    const id = started.sessionId;
    await ok(await quick.op(id, "navigate", { url: fx.site.url("form.html") }));
    const live = quick.service.sessions.get(id)!;

    const context = await viewer.newContext();
    const page = await context.newPage();
    // (Committed is enough: the service says when the front end has connected.)
    await page.goto(started.debugUrl, { waitUntil: "commit" });
    await eventually(() => live.debuggers === 1, 60_000, "the debugger to connect");
    await context.close();
    // The service saw the front end go ...
    await eventually(() => live.debuggers === 0, 10_000, "the debugger's socket to close");
    // ... and any timer it armed then (for the grace) has fired by the time this one, armed
    // later for five times as long, does.
    await after(graceMs * 5);
    expect(live.ended).toBe(false);
    expect(quick.service.sessions.get(id)).toBe(live);
    expect(quick.logText()).not.toContain("client disconnected");
    await ok(await quick.op(id, "navigate", { url: fx.site.url("index.html") }));

    // The session's own client (the /cdp proxy) going away ends it as documented.
    await cdpCall(started.cdpUrl, "Target.getTargets");
    await eventually(() => live.ended, 10_000, "the session to end after its client left");
    expect(quick.logText()).toContain("client disconnected");
    expect((await quick.op(id, "navigate", { url: fx.site.url("index.html") })).status).toBe(410);
  }, 120_000);
});
