// Sessions of different projects never share a browser process (--isolation project, the
// default), and with --isolation session no two sessions do. A tenant whose browser crashes, or is
// killed, loses only its own sessions: the others keep answering, with their pages and cookies.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  alive,
  browserPid,
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";

let fx: Fixtures;
beforeAll(async () => {
  fx = await startFixtures();
});
afterAll(async () => {
  await fx?.close();
});

async function status(svc: LiveService, id: string, key: string): Promise<number> {
  return (await svc.op(id, "extract", {}, { key })).status;
}

async function cookieKept(svc: LiveService, id: string, key: string, cookie: string): Promise<void> {
  await ok(await svc.op(id, "navigate", { url: fx.site.url("echo-cookies") }, { key }));
  const text = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}, { key }));
  expect(text.result.pageText).toContain(cookie);
}

describe("--isolation project (the default)", () => {
  let svc: LiveService;
  beforeAll(async () => {
    svc = await startLiveService({ maxSessionsPerProject: 4 });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it("puts one project's sessions in one browser and another project's in another", async () => {
    const [a1, a2] = [await svc.start(), await svc.start()];
    const b1 = await svc.start({}, { key: svc.otherKey.key });
    expect(browserPid(svc, a1)).toBe(browserPid(svc, a2));
    expect(browserPid(svc, b1)).not.toBe(browserPid(svc, a1));
    expect(svc.service.sessions.pool.size).toBe(2);
    for (const id of [a1, a2]) await ok(await svc.op(id, "end"));
    await ok(await svc.op(b1, "end", {}, { key: svc.otherKey.key }));
  });

  it("a crash of one project's browser ends only that project's sessions", async () => {
    const [a1, a2] = [await svc.start(), await svc.start()];
    const b1 = await svc.start({}, { key: svc.otherKey.key });
    const other = svc.otherKey.key;
    await ok(
      await svc.op(
        b1,
        "navigate",
        { url: fx.site.url("set-cookie?name=tenant-b&value=still-here") },
        { key: other },
      ),
    );
    await ok(await svc.op(a1, "navigate", { url: fx.site.url("form.html") }));
    const crashed = browserPid(svc, a1);
    const survivor = browserPid(svc, b1);
    // What a tenant did to the shared browser before (a browser-internal page that crashes it),
    // done here the way only the service itself still can: through its own connection.
    await svc.service.sessions
      .get(a1)!
      .cdp.browser.connection.root.send("Browser.crash")
      .catch(() => undefined);
    await eventually(
      async () => (await status(svc, a1, svc.key.key)) === 410,
      10_000,
      "tenant A's session to end",
    );
    expect(await status(svc, a2, svc.key.key)).toBe(410);
    await eventually(() => !alive(crashed), 10_000, "the crashed browser to be gone");
    // Tenant B goes on as if nothing happened: same browser, same cookies, answering.
    expect(alive(survivor)).toBe(true);
    expect(browserPid(svc, b1)).toBe(survivor);
    await cookieKept(svc, b1, other, "tenant-b=still-here");
    // And tenant A can start again, in a browser of its own.
    const again = await svc.start();
    expect(browserPid(svc, again)).not.toBe(survivor);
    await ok(await svc.op(again, "navigate", { url: fx.site.url("index.html") }));
    await ok(await svc.op(again, "end"));
    await ok(await svc.op(b1, "end", {}, { key: other }));
  });

  it("a project waits for no other: 429 only when every browser is another project's and busy", async () => {
    const small = await startLiveService({ browsers: { maxBrowsers: 2, lingerMs: 60_000 } });
    try {
      const third = (await small.store.createKey({ name: "third project" })).key;
      const a = await small.start();
      const b = await small.start({}, { key: small.otherKey.key });
      const refused = await small.call("/v1/sessions/start", { json: {}, key: third });
      expect(refused.status).toBe(429);
      const body = await refused.json();
      expect(body).toMatchObject({ success: false, code: "AT_CAPACITY" });
      expect(body.error).toContain("--max-browsers 2");
      // A lingering browser of a project with no session gives its place up at once.
      await ok(await small.op(a, "end"));
      const c = await small.start({}, { key: third });
      expect(small.service.sessions.pool.size).toBe(2);
      expect(browserPid(small, c)).not.toBe(browserPid(small, b));
      await ok(await small.op(c, "navigate", { url: fx.site.url("index.html") }, { key: third }));
    } finally {
      await small.close();
    }
  });
});

describe("--isolation session", () => {
  let svc: LiveService;
  beforeAll(async () => {
    svc = await startLiveService({ browsers: { isolation: "session" }, maxSessionsPerProject: 4 });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it("gives every session a browser of its own, even within a project, and closes it with the session", async () => {
    const [a1, a2] = [await svc.start(), await svc.start()];
    expect(browserPid(svc, a1)).not.toBe(browserPid(svc, a2));
    const pid = browserPid(svc, a1);
    await ok(await svc.op(a1, "end"));
    await eventually(() => !alive(pid), 10_000, "the session's browser to close");
    await ok(await svc.op(a2, "end"));
  });

  it("a session whose browser is killed ends; the project's other session goes on", async () => {
    const [a1, a2] = [await svc.start(), await svc.start()];
    await ok(await svc.op(a2, "navigate", { url: fx.site.url("set-cookie?name=sibling&value=alive") }));
    const killed = browserPid(svc, a1);
    // The watchdog shell's child is Chrome itself: kill the whole group, as the OOM killer might.
    process.kill(-killed, "SIGKILL");
    await eventually(async () => (await status(svc, a1, svc.key.key)) === 410, 10_000, "the session to end");
    await cookieKept(svc, a2, svc.key.key, "sibling=alive");
    await ok(await svc.op(a2, "end"));
  });
});
