// A burst of session starts (issue 19: 20 at once of one new project). Real service, real
// Chromium: every start of the burst succeeds, each in an isolated context of its own, in browsers
// of its project only, within the project's quota. And the pool's two burst rules, checked on the
// pool itself where their moment is exact: no third browser launches for a project while its
// second is launching (a running one takes a few more sessions instead), and no warm browser
// launches while a session is being set up.

import { randomBytes } from "node:crypto";
import { waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserLease, BrowserPool } from "../src/sessions/browser-pool.ts";
import {
  browserContextsOf,
  browserPid,
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  QUIET_ARGS,
  startFixtures,
  startLiveService,
} from "./live-helpers.ts";

const BURST = 20;
const PER_BROWSER = 8;

describe(`${BURST} starts at once of one new project (--warm-browsers 1, --sessions-per-browser ${PER_BROWSER})`, () => {
  let fx: Fixtures;
  let svc: LiveService;
  beforeAll(async () => {
    fx = await startFixtures();
    svc = await startLiveService({
      maxSessions: BURST + 5,
      maxSessionsPerProject: BURST,
      browsers: { warmBrowsers: 1, maxBrowsers: 6, sessionsPerBrowser: PER_BROWSER, lingerMs: 500 },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await fx?.close();
  });

  it("all start, each in a context of its own, in browsers no other project has, and the quota holds", async () => {
    const pool = svc.service.sessions.pool;
    // Another project's session first: the burst must not land in its browser.
    await pool.whenWarm();
    const other = await svc.start({}, { key: svc.otherKey.key });
    const otherPid = browserPid(svc, other);
    await pool.whenWarm();
    await eventually(() => svc.service.sessions.spareContexts() >= 2, 10_000, "the spare contexts");

    const answers = await Promise.all(
      Array.from({ length: BURST }, () => svc.call("/v1/sessions/start", { json: {} })),
    );
    const ids = await Promise.all(
      answers.map(async (answer) => (await ok<{ sessionId: string }>(answer)).sessionId),
    );
    expect(new Set(ids).size).toBe(BURST);

    // The project's quota: the 21st is refused, the other project is not held up by the burst.
    const refused = await svc.call("/v1/sessions/start", { json: {} });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "PROJECT_AT_CAPACITY" });

    // Each session its own isolated context, in a browser of this project only.
    const sessions = ids.map((id) => svc.service.sessions.get(id)!);
    const contexts = sessions.map((s) => s.cdp.contextId);
    expect(contexts.every((c) => typeof c === "string")).toBe(true);
    expect(new Set(contexts).size).toBe(BURST);
    const perBrowser = new Map<number, number>();
    for (const id of ids) {
      const pid = browserPid(svc, id);
      expect(pid).not.toBe(otherPid);
      perBrowser.set(pid, (perBrowser.get(pid) ?? 0) + 1);
    }
    // At most half as many again as --sessions-per-browser in one browser (the burst headroom).
    for (const count of perBrowser.values()) expect(count).toBeLessThanOrEqual(PER_BROWSER * 1.5);
    for (const session of sessions) {
      const inBrowser = await browserContextsOf(session.cdp);
      expect(inBrowser).toContain(session.cdp.contextId);
    }

    // They work: the first and the last of the burst load a page and read it.
    for (const id of [ids[0]!, ids[BURST - 1]!]) {
      await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
      const read = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}));
      expect(read.result.pageText.length).toBeGreaterThan(0);
    }

    // After the burst the pool is warm again, with a browser no project has had.
    await pool.whenWarm();
    const [warm] = pool.warmPids();
    expect(warm).toBeDefined();
    expect([otherPid, ...perBrowser.keys()]).not.toContain(warm);

    for (const id of ids) await ok(await svc.op(id, "end"));
    await ok(await svc.op(other, "end", {}, { key: svc.otherKey.key }));
  });
});

describe("BrowserPool in a burst", () => {
  const pools: BrowserPool[] = [];
  const marker = `--deckhand-test-run=${randomBytes(6).toString("hex")}`;
  const makePool = (options: ConstructorParameters<typeof BrowserPool>[0]) => {
    const pool = new BrowserPool({ ...options, args: [...QUIET_ARGS, marker] });
    pools.push(pool);
    return pool;
  };
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    expect(await waitForNoChrome(marker)).toEqual([]);
  });

  it("does not launch another browser for a project while one is launching: a running one takes up to half again", async () => {
    const pool = makePool({ sessionsPerBrowser: 2, maxBrowsers: 5, warmBrowsers: 0 });
    const first = await Promise.all([pool.acquire("p"), pool.acquire("p")]);
    const running = first[0]!.browser;
    // Sent together: the third launches the project's second browser and the fourth joins it; the
    // fifth finds it full and launching, and joins the running one (2 + 1 of headroom); the sixth
    // finds that one at its ceiling too, and launches a third browser as before.
    const burst = [pool.acquire("p"), pool.acquire("p"), pool.acquire("p"), pool.acquire("p")];
    const leases: BrowserLease[] = await Promise.all(burst);
    const browsers = leases.map((lease) => lease.browser);
    expect(browsers[0]).not.toBe(running);
    expect(browsers[1]).toBe(browsers[0]);
    expect(browsers[2]).toBe(running);
    expect(browsers[3]).not.toBe(running);
    expect(browsers[3]).not.toBe(browsers[0]);
    expect(pool.size).toBe(3);
    // Another project never joins them, burst or not.
    const other = await pool.acquire("q");
    expect([running, ...browsers]).not.toContain(other.browser);
    for (const lease of [...first, ...leases, other]) lease.release();
  });

  it("launches no warm browser while a session is being set up, and refills once it is", async () => {
    const pool = makePool({ warmBrowsers: 1, maxBrowsers: 4 });
    pool.warmUp();
    await pool.whenWarm();
    const letWarm = pool.holdWarm();
    const lease = await pool.acquire("p");
    // The warm browser was taken; its replacement waits for the set-up to finish.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.stats()).toMatchObject({ warm: 0, warming: 0, warmTaken: 1 });
    letWarm();
    letWarm(); // a second call changes nothing
    await pool.whenWarm();
    expect(pool.stats()).toMatchObject({ warm: 1, warmTaken: 1, coldLaunches: 0 });
    lease.release();
  });
});
