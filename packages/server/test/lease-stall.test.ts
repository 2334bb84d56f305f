// A node whose lease renewal is held up (its event loop blocked for longer than the lease, or its
// database out of reach) ends only the sessions another node really reclaimed meanwhile: a stall
// alone ends nothing. Service nodes in this process on one real PostgreSQL schema of this run's own,
// real Chromium, real HTTP.

import crypto from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres-store.ts";
import type { Store } from "../src/store/store.ts";
import { eventually, type Fixtures, ok, startFixtures, startLiveService } from "./live-helpers.ts";

const url = process.env.DECKHAND_TEST_DATABASE_URL;
if (!url) {
  console.warn(
    "Lease stall tests skipped: set DECKHAND_TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test).",
  );
}

/** Blocks this process's event loop (every timer, socket and query of the services in it) for `ms`. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe.skipIf(!url)(
  url ? "a stalled lease renewal" : "a stalled lease renewal (skipped: no database)",
  () => {
    const schema = `deckhand_stall_${crypto.randomBytes(6).toString("hex")}`;
    const stores: PostgresStore[] = [];
    let fx: Fixtures;

    const openStore = async () => {
      const store = await PostgresStore.open({ url: url!, schema });
      stores.push(store);
      return store;
    };

    beforeAll(async () => {
      fx = await startFixtures();
    });

    afterAll(async () => {
      await fx?.close();
      await Promise.all(stores.map((store) => store.close()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    });

    it("keeps the node's sessions when its event loop was blocked past the lease and no other node took them", async () => {
      const leaseMs = 900;
      const a = await startLiveService({ store: await openStore(), nodeLeaseMs: leaseMs });
      try {
        const id = await a.start({ keepAlive: true });
        await ok(await a.op(id, "navigate", { url: fx.site.url("form.html") }));
        // (On a busy machine a lease this short may lapse now and then already: harmless too.)
        const resumed = () => a.logText().split("no other node took its sessions").length - 1;
        const resumedBefore = resumed();
        const before = a.service.sessions.leaseStats();

        // More than three leases without a renewal: the lease has certainly lapsed in the database.
        blockEventLoop(leaseMs * 3);
        await eventually(() => resumed() > resumedBefore, 20_000, "the renewal after the stall");

        const stats = a.service.sessions.leaseStats();
        expect(stats.lapses).toBeGreaterThan(before.lapses);
        expect(stats.renewals).toBeGreaterThan(before.renewals);
        // The stall shows in the renewal it held up, and is logged as a warning: as the lateness of
        // the renewal that came after it (less the one third of the lease it was due at most after
        // the block began), or, when a renewal's query was in flight as the block began, as that
        // renewal's duration (its answer waited in the socket until the loop ran again).
        const heldUpMs = Math.max(stats.maxLagMs, stats.maxDurationMs);
        expect(heldUpMs).toBeGreaterThanOrEqual(leaseMs * 3 - leaseMs / 3 - 50);
        expect(a.logText()).toContain("this node's lease was renewed late");
        expect(a.logText()).not.toContain('"lease lost"');

        // The session lives on: in the store, in the service, and for the client.
        expect((await a.store.getSession(id))?.status).toBe("active");
        expect(a.service.sessions.get(id)?.ended).toBe(false);
        await ok(await a.op(id, "navigate", { url: fx.site.url("index.html") }));
        expect(await a.store.nodeIsLive(a.service.sessions.nodeId)).toBe(true);
        await ok(await a.op(id, "end"));
      } finally {
        await a.close();
      }
    }, 60_000);

    it("ends a session that another node really reclaimed while the lease was lapsed, and only that", async () => {
      const leaseMs = 1500;
      // Node A's renewals fail while `unreachable` is set, as if its database connection were cut.
      let unreachable = false;
      const real = await openStore();
      const cutOff = new Proxy(real, {
        get(target, property) {
          if (property === "renewNode" && unreachable)
            return async () => {
              throw new Error("connection to the database lost (test)");
            };
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }) as Store;
      const a = await startLiveService({ store: cutOff, nodeLeaseMs: leaseMs });
      const b = await startLiveService({ store: await openStore(), nodeLeaseMs: leaseMs, keys: a });
      try {
        const id = await a.start({ keepAlive: true });
        await ok(await a.op(id, "navigate", { url: fx.site.url("form.html") }));
        const nodeA = a.service.sessions.nodeId;
        // While A's lease lives, B leaves the session alone.
        expect((await b.op(id, "navigate", { url: fx.site.url("index.html") })).status).toBe(409);

        unreachable = true;
        // B's reclaim ends A's session once A's lease lapsed.
        await eventually(
          async () => (await b.store.getSession(id))?.status === "ended",
          20_000,
          "B to reclaim A's session",
        );
        // Until A hears of it, A still runs it: its renewals failed, which ends nothing by itself.
        expect(a.service.sessions.leaseStats().failures).toBeGreaterThan(0);
        expect(a.service.sessions.get(id)).toBeDefined();

        unreachable = false;
        await eventually(() => a.service.sessions.get(id) === undefined, 20_000, "A to end the session");
        expect(a.logText()).toContain("another node ended some of its sessions");
        expect(a.logText()).toMatch(new RegExp(`"sessionId":"${id}","reason":"lease lost"`));
        // A holds its lease again and serves new sessions; the reclaimed one is gone for good.
        expect(await a.store.nodeIsLive(nodeA)).toBe(true);
        expect((await a.op(id, "navigate", { url: fx.site.url("index.html") })).status).toBe(410);
        const next = await a.start({ keepAlive: true });
        await ok(await a.op(next, "navigate", { url: fx.site.url("index.html") }));
        await ok(await a.op(next, "end"));
      } finally {
        await b.close();
        await a.close();
      }
    }, 90_000);
  },
);
