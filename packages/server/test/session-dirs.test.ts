// Two services on one machine, each with a data directory (store) of its own: each keeps its
// sessions' download directories under a root of its own store, and its sweeps never touch the
// other's. A file a session of the first downloads survives the second's heartbeats; what the
// second's own store says has ended is swept. Real Chromium, real downloads, real HTTP.

import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_DIR_PREFIX } from "../src/sessions/session-manager.ts";
import {
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "./live-helpers.ts";
import { rawCdpClient } from "./security/cdp-attacker.ts";

let fx: Fixtures;
let a: LiveService;
let b: LiveService;

beforeAll(async () => {
  fx = await startFixtures();
  fx.site.route("/report.csv", (_req, res) => {
    res.writeHead(200, {
      "content-type": "text/csv",
      "content-disposition": 'attachment; filename="report.csv"',
    });
    res.end("month,total\njanuary,42\n");
  });
  // Short leases: heartbeats (and their sweeps) every 200 ms.
  [a, b] = await Promise.all([
    startLiveService({ nodeLeaseMs: 600 }),
    startLiveService({ nodeLeaseMs: 600 }),
  ]);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await fx?.close();
});

/** Resolves once the service has completed `count` more reclaims (each with its sweep of directories). */
async function sweeps(svc: LiveService, count: number): Promise<void> {
  const target = svc.service.sessions.leaseStats().reclaims + count;
  await eventually(() => svc.service.sessions.leaseStats().reclaims >= target, 20_000, `${count} sweeps`);
}

describe("session directories of two services on one machine", () => {
  it("a file a session of one service downloaded survives the other's heartbeats", async () => {
    const id = await a.start({ keepAlive: true });
    const live = a.service.sessions.get(id)!;
    const [rootA, rootB] = [await a.service.sessions.sessionRoot(), await b.service.sessions.sessionRoot()];
    expect(rootA).not.toBe(rootB);
    expect(dirname(live.downloadDir)).toBe(rootA);
    expect(dirname(rootA)).toBe(tmpdir());

    // The page downloads a file, as a tenant's script would.
    await ok(await a.op(id, "navigate", { url: fx.site.url("index.html") }));
    const client = await rawCdpClient(a, id, a.key.key);
    try {
      const [tab] = await client.pages();
      const tabSession = await client.attach(tab!.targetId);
      await client.call(
        "Runtime.evaluate",
        {
          expression: `(() => { const a = document.createElement("a"); a.href = ${JSON.stringify(fx.site.url("report.csv"))}; a.download = ""; document.body.append(a); a.click(); })()`,
        },
        tabSession,
      );
      const file = join(live.downloadDir, "report.csv");
      await eventually(() => existsSync(file), 10_000, "the download");

      // B, whose store knows nothing of A's session, sweeps several times.
      await sweeps(b, 3);
      expect(await readFile(file, "utf8")).toBe("month,total\njanuary,42\n");
      // A's own sweeps keep it too: the session is active.
      await sweeps(a, 2);
      expect(existsSync(file)).toBe(true);
    } finally {
      client.close();
    }
    await ok(await a.op(id, "end"));
    expect(existsSync(live.downloadDir)).toBe(false);
  }, 60_000);

  it("sweeps only its own store's ended sessions, never another directory of the machine", async () => {
    const rootB = await b.service.sessions.sessionRoot();
    // A session of B's store that has ended, whose node could not remove its directory (killed).
    const ended = await b.store.createSession({ projectId: b.key.projectId, keyId: b.key.id });
    await b.store.endSession(ended.id);
    const leftover = join(rootB, `${SESSION_DIR_PREFIX}${ended.id}-x1y2z3`);
    await mkdir(leftover, { recursive: true });
    // One of the same name pattern outside B's root (another service's, or an older version's).
    const foreign = join(tmpdir(), `${SESSION_DIR_PREFIX}${ended.id}-a1b2c3`);
    await mkdir(foreign);
    try {
      await eventually(() => !existsSync(leftover), 20_000, "B to sweep its own ended session's directory");
      await sweeps(b, 2);
      expect(existsSync(foreign)).toBe(true);
      expect(await readdir(rootB)).toEqual([]);
    } finally {
      await rm(foreign, { recursive: true, force: true });
    }
  }, 60_000);
});
