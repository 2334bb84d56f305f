// Warm browsers (--warm-browsers): launched ahead of need, each given to the first tenant that
// needs a browser and to no other, replaced in the background, closed with the service. Real
// service, real Chromium; the browser a session runs in is known by its process id.

import { existsSync, readFileSync } from "node:fs";
import { liveChromeProcesses } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  alive,
  browserContextsOf,
  browserPid,
  cdpCall,
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "./live-helpers.ts";

let fx: Fixtures;
beforeAll(async () => {
  fx = await startFixtures();
});
afterAll(async () => {
  await fx?.close();
});

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** The profile directories of this service's running Chromium processes. */
/**
 * The profile directories of the service's running browsers, one per browser: a browser process
 * that is forking a helper shows, for the moment before the helper's exec, a second process with
 * its own command line (a busy machine makes that moment long enough to be seen).
 */
function profileDirs(svc: LiveService): string[] {
  const dirs = liveChromeProcesses(svc.marker).flatMap((chrome) => {
    const dir = chrome.args.find((arg) => arg.startsWith("--user-data-dir="));
    return dir ? [dir.slice("--user-data-dir=".length)] : [];
  });
  return [...new Set(dirs)];
}

/** One sample of the service's /metrics text, e.g. `deckhand_browsers{state="warm"}`. */
async function metric(svc: LiveService, sample: string): Promise<number | undefined> {
  const text = await svc.service.metrics.text();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

/** The session works: it loads a page and reads it. */
async function works(svc: LiveService, id: string, key: string): Promise<void> {
  await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }, { key }));
  const read = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}, { key }));
  expect(read.result.pageText.length).toBeGreaterThan(0);
}

describe("--warm-browsers 1, --isolation project", () => {
  let svc: LiveService;
  beforeAll(async () => {
    svc = await startLiveService({ browsers: { warmBrowsers: 1, maxBrowsers: 4, lingerMs: 500 } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it("serves a project's first session in a warm browser, refills, and never gives it to another project", async () => {
    const pool = svc.service.sessions.pool;
    await pool.whenWarm();
    const [warmA] = pool.warmPids();
    expect(warmA).toBeDefined();
    // The warm browser holds a spare context (its page open) for the project that takes it.
    await eventually(() => svc.service.sessions.spareContexts() === 1, 5000, "the warm browser's spare");
    expect(await metric(svc, 'deckhand_browsers{state="warm"}')).toBe(1);

    const a1 = await svc.start();
    expect(browserPid(svc, a1)).toBe(warmA);
    expect(pool.stats()).toMatchObject({ warmTaken: 1, coldLaunches: 0, assigned: 1 });
    await works(svc, a1, svc.key.key);

    // Replaced in the background: a new process, not the one project A has.
    await pool.whenWarm();
    const [warmB] = pool.warmPids();
    expect(warmB).toBeDefined();
    expect(warmB).not.toBe(warmA);
    expect(await metric(svc, 'deckhand_browsers{state="warm"}')).toBe(1);
    expect(await metric(svc, 'deckhand_browsers{state="assigned"}')).toBe(1);

    // A's second session shares A's browser; the warm one waits for another project.
    const a2 = await svc.start();
    expect(browserPid(svc, a2)).toBe(warmA);
    expect(pool.warmPids()).toEqual([warmB]);

    // Project B gets the other warm browser, never A's.
    const b1 = await svc.start({}, { key: svc.otherKey.key });
    expect(browserPid(svc, b1)).toBe(warmB);
    expect(browserPid(svc, b1)).not.toBe(browserPid(svc, a1));
    await works(svc, b1, svc.otherKey.key);
    expect(await metric(svc, 'deckhand_browser_assignments_total{source="warm"}')).toBe(2);
    expect(await metric(svc, 'deckhand_browser_assignments_total{source="cold"}')).toBe(0);

    // A's browser, once A has no session, closes: it is not kept warm for anyone else.
    for (const id of [a1, a2]) await ok(await svc.op(id, "end"));
    await eventually(() => !alive(warmA!), 5000, "project A's browser to close after its linger");
    await pool.whenWarm();
    expect(pool.warmPids()).not.toContain(warmA);
    const third = (await svc.store.createKey({ name: "third" })).key;
    const c1 = await svc.start({}, { key: third });
    expect([warmA, warmB]).not.toContain(browserPid(svc, c1));
    await ok(await svc.op(c1, "end", {}, { key: third }));
    await ok(await svc.op(b1, "end", {}, { key: svc.otherKey.key }));
  });

  it("does not hand out a warm browser that died while waiting, and replaces it", async () => {
    const pool = svc.service.sessions.pool;
    await pool.whenWarm();
    const [dead] = pool.warmPids();
    // The pid the pool knows may be a launcher (Debian's chromium script) with Chromium under it:
    // the browser process itself is the one that crashes.
    const chromium = liveChromeProcesses(svc.marker).find(
      (chrome) => chrome.pid === dead || parentOf(chrome.pid) === dead,
    );
    const profile = chromium?.args
      .find((arg) => arg.startsWith("--user-data-dir="))
      ?.slice("--user-data-dir=".length);
    expect(profile && existsSync(profile)).toBe(true);
    const lostBefore = pool.stats().warmLost;
    process.kill(chromium!.pid, "SIGKILL");
    // The pool's own signal: it counts the loss, then launches a replacement.
    await eventually(() => pool.stats().warmLost === lostBefore + 1, 5000, "the pool to notice the loss");
    expect(await metric(svc, "deckhand_warm_browsers_lost_total")).toBe(lostBefore + 1);
    expect(pool.warmPids()).not.toContain(dead);
    // Its helper processes (no longer its children) are killed, and its profile removed.
    await eventually(() => !existsSync(profile!), 5000, "the dead browser's profile to be removed");
    await pool.whenWarm();
    const [replacement] = pool.warmPids();
    expect(replacement).not.toBe(dead);

    const key = (await svc.store.createKey({ name: "after the crash" })).key;
    const id = await svc.start({}, { key });
    expect(browserPid(svc, id)).toBe(replacement);
    await works(svc, id, key);
    await ok(await svc.op(id, "end", {}, { key }));
  });

  it("starts a project's next session in a spare context made ahead: fresh, and unseen by the other sessions", async () => {
    const sessions = svc.service.sessions;
    const a1 = await svc.start();
    const first = sessions.get(a1)!.cdp;
    // The spare is made after a1 started, in a1's browser (the warm browser has one of its own).
    await eventually(
      async () => (await browserContextsOf(first)).length === 2,
      5000,
      "a spare context in project A's browser",
    );
    await eventually(() => sessions.spareContexts() === 2, 5000, "the spares to be ready");
    const spare = (await browserContextsOf(first)).filter((id) => id !== first.contextId);
    expect(spare).toHaveLength(1);
    await ok(await svc.op(a1, "navigate", { url: fx.site.url("set-cookie?name=first&value=a1-only") }));

    // a1's CDP client (its proxy) sees one page, its own, though the browser holds the spare's too.
    const proxy = `${svc.url.replace("http:", "ws:")}/v1/sessions/${a1}/cdp`;
    const seen = await cdpCall<{ targetInfos: { type: string }[] }>(
      proxy,
      "Target.getTargets",
      {},
      {
        "x-platform-api-key": svc.key.key,
      },
    );
    expect(seen.targetInfos.filter((t) => t.type === "page")).toHaveLength(1);
    const all = (await first.browser.connection.root.send("Target.getTargets")).targetInfos;
    const sparePages = all.filter((t) => t.type === "page" && t.browserContextId === spare[0]);
    expect(sparePages).toHaveLength(1);
    // Nor can it reach into the spare to leave something for the next session: a tab opened
    // there, or an attach to the spare's page, is refused.
    const headers = { "x-platform-api-key": svc.key.key };
    const refused = (sent: Promise<unknown>) =>
      sent.then(
        () => "allowed",
        (error: Error) => error.message,
      );
    const created = await refused(
      cdpCall(proxy, "Target.createTarget", { url: "about:blank", browserContextId: spare[0] }, headers),
    );
    expect(created).toContain("names a browser context that is not this session's");
    const attached = await refused(
      cdpCall(proxy, "Target.attachToTarget", { targetId: sparePages[0]!.targetId, flatten: true }, headers),
    );
    // The proxy answers as if the spare's page did not exist.
    expect(attached).toContain("No target with given id found");
    expect(
      (await first.browser.connection.root.send("Target.getTargets")).targetInfos.filter(
        (t) => t.type === "page" && t.browserContextId === spare[0],
      ),
    ).toHaveLength(1);

    const a2 = await svc.start();
    expect(sessions.get(a2)!.cdp.contextId).toBe(spare[0]);
    expect(sessions.get(a2)!.cdp.browser).toBe(first.browser);
    // Fresh: nothing of a1's (its cookie), and it works like any session.
    await ok(await svc.op(a2, "navigate", { url: fx.site.url("echo-cookies") }));
    const read = await ok<{ result: { pageText: string } }>(await svc.op(a2, "extract", {}));
    expect(read.result.pageText).not.toContain("a1-only");
    expect(sessions.get(a2)!.dh.context.pages()).toHaveLength(1);
    // And another spare is made for the session after.
    await eventually(() => sessions.spareContexts() === 2, 5000, "the next spare context");
    for (const id of [a1, a2]) await ok(await svc.op(id, "end"));
  });

  it("counts warm browsers as free capacity", async () => {
    const pool = svc.service.sessions.pool;
    await pool.whenWarm();
    // Every session of the earlier tests has ended; their browsers may linger (not yet closed).
    const idle = svc.service.sessions.freeCapacity();
    // A project with no browser here: four places (maxBrowsers) of eight sessions each, one warm.
    expect(idle).toEqual({ sessions: 32, withoutLaunch: 8 });
    const a = await svc.start();
    await pool.whenWarm();
    // Project A: seven more in its own browser without a launch, plus the warm one's eight.
    expect(svc.service.sessions.freeCapacity(svc.key.projectId)).toEqual({ sessions: 31, withoutLaunch: 15 });
    // Another project: A's busy browser is no place for it.
    expect(svc.service.sessions.freeCapacity(svc.otherKey.projectId)).toEqual({
      sessions: 24,
      withoutLaunch: 8,
    });
    await ok(await svc.op(a, "end"));
  });
});

describe("--warm-browsers with --isolation session", () => {
  it("gives each session a warm browser of its own, none shared", async () => {
    const svc = await startLiveService({
      browsers: { warmBrowsers: 2, isolation: "session", maxBrowsers: 4 },
      maxSessionsPerProject: 4,
    });
    try {
      const pool = svc.service.sessions.pool;
      await pool.whenWarm();
      const warm = pool.warmPids();
      expect(warm).toHaveLength(2);
      // Each warm browser holds a spare context; none is made after a start (no second session
      // will come to a session's own browser).
      await eventually(() => svc.service.sessions.spareContexts() === 2, 5000, "the warm browsers' spares");
      const s1 = await svc.start();
      const s2 = await svc.start();
      expect(new Set([browserPid(svc, s1), browserPid(svc, s2)])).toEqual(new Set(warm));
      for (const id of [s1, s2]) {
        const { cdp } = svc.service.sessions.get(id)!;
        expect(await browserContextsOf(cdp)).toEqual([cdp.contextId]);
      }
      await pool.whenWarm();
      for (const pid of pool.warmPids()) expect(warm).not.toContain(pid);
      for (const id of [s1, s2]) await ok(await svc.op(id, "end"));
    } finally {
      await svc.close();
    }
  });
});

describe("shutdown and --warm-browsers 0", () => {
  it("closes warm browsers, started or still starting, and leaves no profile directory", async () => {
    const svc = await startLiveService({ browsers: { warmBrowsers: 2 } });
    let dirs: string[];
    let pids: number[];
    try {
      await svc.service.sessions.pool.whenWarm();
      dirs = profileDirs(svc);
      expect(dirs).toHaveLength(2);
      pids = svc.service.sessions.pool.warmPids();
    } finally {
      await svc.close(); // fails if a Chrome process of this service is left
    }
    for (const pid of pids) expect(alive(pid)).toBe(false);
    for (const dir of dirs) expect(existsSync(dir)).toBe(false);

    // Closed while its warm browsers are still launching: they go too.
    const early = await startLiveService({ browsers: { warmBrowsers: 2 } });
    try {
      expect(early.service.sessions.pool.stats().warming + early.service.sessions.pool.stats().warm).toBe(2);
    } finally {
      await early.close();
    }
    expect(liveChromeProcesses(early.marker)).toEqual([]);
  });

  it("with 0, launches no browser before a session needs one (today's behaviour)", async () => {
    const svc = await startLiveService({ browsers: { warmBrowsers: 0 } });
    try {
      const pool = svc.service.sessions.pool;
      await pool.whenWarm();
      expect(svc.chromes()).toEqual([]);
      expect(pool.stats()).toMatchObject({ warm: 0, warming: 0, assigned: 0 });
      expect(await metric(svc, 'deckhand_browsers{state="warm"}')).toBe(0);
      const id = await svc.start();
      expect(pool.stats()).toMatchObject({ warmTaken: 0, coldLaunches: 1, warm: 0, warming: 0 });
      await works(svc, id, svc.key.key);
      // No spare context either: the browser holds the session's context only.
      const { cdp } = svc.service.sessions.get(id)!;
      expect(await browserContextsOf(cdp)).toEqual([cdp.contextId]);
      expect(svc.service.sessions.spareContexts()).toBe(0);
      await ok(await svc.op(id, "end"));
    } finally {
      await svc.close();
    }
  });
});
