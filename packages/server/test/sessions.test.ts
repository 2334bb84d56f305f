// Sessions on real browsers: start, resume, end, idle expiry, capacity, the shared browser pool,
// and operations of one session running one at a time.

import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { match, startChildScript } from "@deckhand/testkit";
import { Browser } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import {
  browserContextsOf,
  browserTargetsOf,
  eventually,
  type Fixtures,
  idOf,
  type LiveService,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;

beforeAll(async () => {
  [svc, fx] = await Promise.all([
    startLiveService({ maxSessions: 4, maxSessionsPerProject: 4 }),
    startFixtures(),
  ]);
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

async function endAll(): Promise<void> {
  for (const session of svc.service.sessions.sessions()) await svc.op(session.id, "end");
}

describe("SessionStart", () => {
  it("starts a session in its own browser context and answers its id and CDP address", async () => {
    const response = await svc.call("/v1/sessions/start", { json: { modelName: "openai/gpt-4.1-mini" } });
    expect(response.status).toBe(200);
    const body = await response.json();
    const { sessionId } = body.data;
    expect(body).toEqual({
      success: true,
      data: {
        sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        available: true,
        cdpUrl: expect.stringMatching(
          /^ws:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/[0-9a-f-]{36}\/cdp\?token=[\w-]+\.[\w-]+$/,
        ),
        debugUrl: expect.stringMatching(
          /^http:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/[0-9a-f-]{36}\/debug\?token=/,
        ),
        sessionUrl: expect.stringMatching(
          /^http:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/[0-9a-f-]{36}\/view\?token=/,
        ),
      },
    });
    for (const link of [body.data.cdpUrl, body.data.debugUrl, body.data.sessionUrl]) {
      expect(link).toContain(`${svc.url.replace("http://", "")}/v1/sessions/${sessionId}/`);
      expect(link).not.toContain(svc.key.key.split("_").slice(2).join("_"));
    }
    const live = svc.service.sessions.get(sessionId)!;
    expect(live.cdp.contextId).toEqual(expect.any(String));
    expect(await browserContextsOf(live.cdp)).toContain(live.cdp.contextId);
    await svc.op(sessionId, "end");
  });

  it("400 names the field of an invalid start body", async () => {
    const cases: [Record<string, unknown>, string, code?: string][] = [
      [{ verbose: 5 }, "`verbose`"],
      // The code of the library's InvalidAISDKModelFormatError, which a REMOTE client raises for it.
      [{ modelName: "mystery-model-7" }, "`modelName`", "INVALID_MODEL_FORMAT"],
      [{ sessionCreateParams: { timeout: -1 } }, "`sessionCreateParams.timeout`"],
      [
        { browser: { type: "local", launchOptions: { executablePath: "/bin/sh" } } },
        "`browser.launchOptions.executablePath`",
      ],
      [
        { browser: { type: "local", launchOptions: { args: ["--disable-web-security"] } } },
        "`browser.launchOptions.args`",
      ],
    ];
    for (const [body, field, code = "INVALID_REQUEST"] of cases) {
      const response = await svc.call("/v1/sessions/start", { json: body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      const answer = await response.json();
      expect(answer.code).toBe(code);
      expect(answer.error).toContain(field);
    }
    // None of them holds a place.
    expect(svc.service.sessions.size).toBe(0);
  });

  it("resumes the caller's own live session by sessionId or browserbaseSessionID", async () => {
    const id = await svc.start();
    for (const body of [{ sessionId: id }, { browserbaseSessionID: id }]) {
      const data = await ok<{ sessionId: string; available: boolean }>(
        await svc.call("/v1/sessions/start", { json: body }),
      );
      expect(data).toMatchObject({ sessionId: id, available: true });
    }
    expect(svc.service.sessions.size).toBe(1);
    await svc.op(id, "end");
  });

  it("404 for resuming another project's session, exactly as for an unknown id", async () => {
    const id = await svc.start();
    const theirs = await svc.call("/v1/sessions/start", { json: { sessionId: id }, key: svc.otherKey.key });
    const unknownId = randomUUID();
    const unknown = await svc.call("/v1/sessions/start", {
      json: { sessionId: unknownId },
      key: svc.otherKey.key,
    });
    expect([theirs.status, unknown.status]).toEqual([404, 404]);
    const [a, b] = [await theirs.json(), await unknown.json()];
    expect(a.error.replace(id, unknownId)).toBe(b.error);
    await svc.op(id, "end");
  });
});

describe("authentication", () => {
  it("401 without a key and with a wrong key, on start, operations, end and replay", async () => {
    const id = await svc.start();
    const paths: [string, unknown][] = [
      ["/v1/sessions/start", {}],
      [`/v1/sessions/${id}/navigate`, { url: fx.site.url("index.html") }],
      [`/v1/sessions/${id}/act`, { input: "click" }],
      [`/v1/sessions/${id}/end`, undefined],
    ];
    for (const [path, json] of paths) {
      const none = await fetch(`${svc.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
      expect(none.status, path).toBe(401);
      const wrong = await svc.call(path, {
        method: "POST",
        ...(json !== undefined ? { json } : {}),
        key: "dh_0000000000000000_wrong",
      });
      expect(wrong.status, path).toBe(401);
      expect(await wrong.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
    }
    expect((await fetch(`${svc.url}/v1/sessions/${id}/replay`)).status).toBe(401);
    // The session is untouched.
    expect(svc.service.sessions.get(id)?.ended).toBe(false);
    await svc.op(id, "end");
  });

  it("404 for every operation on another project's session, and the session is untouched", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    for (const [name, body] of [
      ["navigate", { url: fx.site.url("form.html") }],
      ["act", { input: "click the button" }],
      ["extract", {}],
      ["observe", {}],
      ["end", undefined],
    ] as const) {
      const response = await svc.op(id, name, body, { key: svc.otherKey.key });
      expect(response.status, name).toBe(404);
      expect((await response.json()).code).toBe("SESSION_NOT_FOUND");
    }
    expect((await svc.call(`/v1/sessions/${id}/replay`, { key: svc.otherKey.key })).status).toBe(404);
    const page = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}));
    expect(page.result.pageText).toContain("Deckhand fixture");
    await svc.op(id, "end");
  });
});

describe("SessionEnd", () => {
  it("disposes of the session's browser context, keeps its replay, and answers 410 afterwards", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const { cdp } = svc.service.sessions.get(id)!;
    const end = await svc.op(id, "end");
    expect(end.status).toBe(200);
    expect(await end.json()).toEqual({ success: true });

    expect(await browserContextsOf(cdp)).not.toContain(cdp.contextId);
    const targetInfos = await browserTargetsOf(cdp);
    expect(targetInfos.filter((t) => t.browserContextId === cdp.contextId)).toEqual([]);
    expect(svc.service.sessions.get(id)).toBeUndefined();
    expect((await svc.store.getSession(id))?.status).toBe("ended");

    const act = await svc.op(id, "navigate", { url: fx.site.url("form.html") });
    expect(act.status).toBe(410);
    expect((await act.json()).code).toBe("SESSION_ENDED");
    expect((await svc.op(id, "end")).status).toBe(410);
    expect((await svc.call("/v1/sessions/start", { json: { sessionId: id } })).status).toBe(410);
    const replay = await ok<{ pages: { url: string }[] }>(await svc.call(`/v1/sessions/${id}/replay`));
    expect(replay.pages.map((p) => p.url)).toEqual([fx.site.url("index.html")]);
  });

  it("ends a session after its idle timeout (sessionCreateParams.timeout, seconds)", async () => {
    // A page that answers when the test lets it: a navigation to it is an operation that lasts as
    // long as the test chooses, longer than the idle timeout, whatever the machine's load.
    let arrived!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const unroute = fx.site.route("/held-by-idle-test.html", async (_req, res) => {
      arrived();
      await released;
      res.writeHead(200, { "content-type": "text/html" }).end("<title>Held</title><p>held</p>");
    });
    try {
      const id = await svc.start({ sessionCreateParams: { timeout: 2 } });
      const { cdp } = svc.service.sessions.get(id)!;
      // Activity keeps it alive: an operation running past the timeout is not cut, and the timeout
      // starts again when it ends (the only race left: the operation must arrive within 2 s of the
      // start's answer, one request on loopback).
      const navigating = svc.op(id, "navigate", { url: fx.site.url("held-by-idle-test.html") });
      await requested;
      // At least the timeout and a half (a busy machine makes it longer, which changes nothing).
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      release();
      await ok(await navigating);
      expect(svc.service.sessions.get(id)).toBeDefined();
      expect((await svc.store.getSession(id))?.status).toBe("active");
      // Then, with nothing to do, it ends by itself.
      await eventually(
        async () => (await svc.store.getSession(id))?.status === "ended",
        5000,
        "the idle end",
      );
      expect(svc.service.sessions.get(id)).toBeUndefined();
      expect(await browserContextsOf(cdp)).not.toContain(cdp.contextId);
      expect((await svc.op(id, "extract", {})).status).toBe(410);
    } finally {
      release();
      unroute();
    }
  });
});

describe("capacity and the browser pool", () => {
  it("answers 429 at the session limit and starts again once a session ended", async () => {
    await endAll();
    const ids = await Promise.all([svc.start(), svc.start(), svc.start(), svc.start()]);
    const refused = await svc.call("/v1/sessions/start", { json: {} });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ success: false, code: "AT_CAPACITY" });
    // The four share one browser process, each in a context of its own.
    expect(svc.service.sessions.pool.size).toBe(1);
    const contexts = new Set(ids.map((id) => svc.service.sessions.get(id)!.cdp.contextId));
    expect(contexts.size).toBe(4);

    await svc.op(ids[0]!, "end");
    ids[0] = await svc.start();
    await Promise.all(ids.map((id) => svc.op(id, "end")));
  });

  it("closes a pool browser that has had no session for its linger time", async () => {
    await endAll();
    const id = await svc.start();
    expect(svc.service.sessions.pool.size).toBe(1);
    expect(svc.chromes().length).toBeGreaterThan(0);
    await svc.op(id, "end");
    await eventually(() => svc.service.sessions.pool.size === 0, 5000, "the pool to close its browser");
    await eventually(() => svc.chromes().length === 0, 5000, "Chrome to exit");
  });
});

describe("a lost browser", () => {
  it("ends the sessions that lived in it, and the next start gets a new browser", async () => {
    await endAll();
    const [a, b] = await Promise.all([svc.start(), svc.start()]);
    const crashed = svc.service.sessions.get(a)!.dh.context.browser;
    expect(svc.service.sessions.get(b)!.dh.context.browser).toBe(crashed);
    await crashed.kill();
    await eventually(() => svc.service.sessions.size === 0, 5000, "the sessions to end");
    for (const id of [a, b]) {
      expect((await svc.store.getSession(id))?.status).toBe("ended");
      expect((await svc.op(id, "extract", {})).status).toBe(410);
    }
    const next = await svc.start();
    expect(svc.service.sessions.get(next)!.dh.context.browser).not.toBe(crashed);
    expect((await svc.op(next, "extract", {})).status).toBe(200);
    await svc.op(next, "end");
  });
});

describe("a session's operations", () => {
  it("run one at a time, in the order they arrived", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const model = scriptedModelConfig(fx.model);
    const seen: string[] = [];
    let firstAsked!: () => void;
    const firstRunning = new Promise<void>((resolve) => (firstAsked = resolve));
    const answer = (request: { text: string }) => ({
      elementId: idOf(request.text, /button: Increment/),
      method: "click",
      arguments: [],
      description: "click Increment",
      completed: true,
    });
    fx.model.on(
      match.all(match.schemaName("act"), match.lastUser("first click")),
      (request) => {
        seen.push("first");
        firstAsked();
        return answer(request);
      },
      { latencyMs: 600 },
    );
    fx.model.on(match.all(match.schemaName("act"), match.lastUser("second click")), (request) => {
      seen.push("second");
      return answer(request);
    });
    const first = svc.op(
      id,
      "act",
      { input: "first click", options: { model } },
      { headers: WITH_MODEL_KEY },
    );
    // The second is sent once the first is running (its model answer takes 600 ms more).
    await firstRunning;
    const second = svc.op(
      id,
      "act",
      { input: "second click", options: { model, serverCache: false } },
      {
        headers: WITH_MODEL_KEY,
      },
    );
    const [a, b] = await Promise.all([ok(await first), ok(await second)]);
    expect([a, b].map((d) => (d as { result: { success: boolean } }).result.success)).toEqual([true, true]);
    // The second was asked only after the first had answered and acted.
    expect(seen).toEqual(["first", "second"]);
    const replay = await ok<{
      pages: { actions: { method: string; timestamp: number; endTime: number }[] }[];
    }>(await svc.call(`/v1/sessions/${id}/replay`));
    const acts = replay.pages.flatMap((p) => p.actions).filter((x) => x.method === "act");
    expect(acts).toHaveLength(2);
    expect(acts[1]!.timestamp).toBeGreaterThanOrEqual(acts[0]!.endTime);
    const text = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}));
    expect(text.result.pageText).toMatch(/Count: 2/);
    await svc.op(id, "end");
  });
});

describe("shutdown", () => {
  it("closing the service ends its sessions and leaves no Chrome process", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "deckhand-shutdown-"));
    const store = new SqliteStore(dir);
    try {
      const other = await startLiveService({ store });
      const id = await other.start();
      expect(other.chromes().length).toBeGreaterThan(0);
      await other.close();
      expect(other.chromes()).toEqual([]);
      expect((await store.getSession(id))?.status).toBe("ended");
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a client that goes away (keepAlive)", () => {
  // A service of its own, with a short disconnect grace.
  let short: LiveService;
  // Long enough that a request or a reconnection on a busy 2-core machine lands well inside it.
  const GRACE_MS = 1000;
  beforeAll(async () => {
    short = await startLiveService({ sessionDisconnectGraceMs: GRACE_MS });
  });
  afterAll(async () => {
    await short?.close();
  });

  const connect = (id: string) =>
    Browser.connect(`${short.url.replace("http:", "ws:")}/v1/sessions/${id}/cdp`, {
      headers: { "x-platform-api-key": short.key.key },
    });
  const status = async (id: string) => (await short.store.getSession(id))?.status;
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // The service learns of a client's leaving from its socket's close, a moment after the client let
  // go (on a busy machine, more than a moment). What the tests do next (a request within the grace,
  // or a wait past it) means something only once it has: a fixed wait could end before that.
  const left = (id: string) =>
    eventually(
      () => short.service.sessions.get(id)?.cdpClients === 0,
      5000,
      "the service to see the client go",
    );

  it("without keepAlive: the session ends once its last CDP client left and no request came", async () => {
    const id = await short.start();
    const { cdp } = short.service.sessions.get(id)!;
    const [first, second] = await Promise.all([connect(id), connect(id)]);
    first.disconnect();
    // Another client is still connected: nothing ends.
    await eventually(
      () => short.service.sessions.get(id)?.cdpClients === 1,
      5000,
      "the service to see one go",
    );
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");
    second.disconnect();
    await eventually(async () => (await status(id)) === "ended", 5000, "the end after the last client left");
    expect(short.service.sessions.get(id)).toBeUndefined();
    expect(await browserContextsOf(cdp)).not.toContain(cdp.contextId);
    // Its record stays readable.
    expect((await short.call(`/v1/sessions/${id}/replay`)).status).toBe(200);
  });

  it("without keepAlive: a request within the grace, or a client that comes back, keeps it", async () => {
    const id = await short.start();
    (await connect(id)).disconnect();
    await left(id);
    await ok(await short.op(id, "navigate", { url: fx.site.url("index.html") }));
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");

    const again = await connect(id);
    again.disconnect();
    await left(id);
    const back = await connect(id);
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");
    back.disconnect();
    await eventually(async () => (await status(id)) === "ended", 5000, "the end once it left for good");
  });

  it("with keepAlive: the session waits for its client to resume it", async () => {
    const id = await short.start({ sessionCreateParams: { keepAlive: true } });
    (await connect(id)).disconnect();
    await left(id);
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");
    const resumed = await short.call("/v1/sessions/start", { json: { sessionId: id } });
    expect(resumed.status).toBe(200);
    await ok(await short.op(id, "navigate", { url: fx.site.url("index.html") }));
    await ok(await short.op(id, "end"));
  });

  it("a resume that asks for keepAlive keeps a session started without it", async () => {
    const id = await short.start();
    const resumed = await short.call("/v1/sessions/start", {
      json: { sessionId: id, sessionCreateParams: { keepAlive: true } },
    });
    expect(resumed.status).toBe(200);
    (await connect(id)).disconnect();
    await left(id);
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");
    await ok(await short.op(id, "end"));
  });

  it("a session that never had a CDP client is left to its idle timeout", async () => {
    const id = await short.start();
    await ok(await short.op(id, "navigate", { url: fx.site.url("index.html") }));
    await wait(GRACE_MS * 1.5);
    expect(await status(id)).toBe("active");
    await ok(await short.op(id, "end"));
  });

  it("a REMOTE client killed with SIGKILL leaves no session behind", async () => {
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "remote-client-and-wait.ts");
    const { child, match } = await startChildScript(script, /SESSION (\S+)/, {
      env: { DECKHAND_TEST_URL: short.url, DECKHAND_TEST_KEY: short.key.key },
    });
    const id = match[1]!;
    expect(await status(id)).toBe("active");
    child.kill("SIGKILL");
    await eventually(async () => (await status(id)) === "ended", 10_000, "the end after the client died");
    expect(short.service.sessions.get(id)).toBeUndefined();
  });
});
