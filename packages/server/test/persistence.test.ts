// A restarted service (same database) still knows its API keys, still serves the replays of the
// sessions it ran, and still answers from its server cache; sessions a previous run left active
// are ended. On SQLite (a file) and on PostgreSQL (DECKHAND_TEST_DATABASE_URL).

import crypto from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { match } from "@deckhand/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres-store.ts";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import type { CreatedKey, Store } from "../src/store/store.ts";
import {
  type Fixtures,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

interface Database {
  open(): Promise<Store>;
  dispose(): Promise<void>;
}

let fx: Fixtures;
beforeAll(async () => {
  fx = await startFixtures();
});
afterAll(() => fx?.close());

function restartSuite(name: string, makeDatabase: () => Database, shared: boolean) {
  it(`${name}: keys, replays and cache entries survive a restart; leftover sessions are ended`, async () => {
    const database = makeDatabase();
    const model = scriptedModelConfig(fx.model);
    fx.model.clear();
    fx.model.resetRequests();
    fx.model.on(match.schemaName("extract"), { extraction: "persisted answer" });
    let keys: { key: CreatedKey; otherKey: CreatedKey };
    let sessionId: string;
    try {
      // ---- first run ----
      const firstStore = await database.open();
      const first = await startLiveService({ store: firstStore });
      keys = { key: first.key, otherKey: first.otherKey };
      sessionId = await first.start({}, { headers: { "x-language": "go" } });
      await ok(await first.op(sessionId, "navigate", { url: fx.site.url("list.html") }));
      const miss = await first.op(
        sessionId,
        "extract",
        { instruction: "summarise", options: { model } },
        { headers: WITH_MODEL_KEY },
      );
      expect((await ok<{ cacheStatus: string }>(miss)).cacheStatus).toBe("MISS");
      await first.close();
      // A session a crashed run left active (one fresh, one long idle).
      const fresh = await firstStore.createSession({ projectId: keys.key.projectId, keyId: keys.key.id });
      const stale = await firstStore.createSession({
        projectId: keys.key.projectId,
        keyId: keys.key.id,
        createdAt: Date.now() - 24 * 3600_000,
      });
      await firstStore.close();

      // ---- second run, same database ----
      const secondStore = await database.open();
      const second = await startLiveService({ store: secondStore, keys });
      try {
        const replay = await ok<{
          pages: { url: string; actions: { method: string }[] }[];
          clientLanguage: string;
        }>(await second.call(`/v1/sessions/${sessionId}/replay`));
        expect(replay.clientLanguage).toBe("go");
        expect(replay.pages).toEqual([
          expect.objectContaining({
            url: fx.site.url("list.html"),
            actions: [
              expect.objectContaining({ method: "navigate" }),
              expect.objectContaining({ method: "extract" }),
            ],
          }),
        ]);
        // The other project's key still works, and still sees nothing of this one.
        expect(
          (await second.call(`/v1/sessions/${sessionId}/replay`, { key: keys.otherKey.key })).status,
        ).toBe(404);

        const next = await second.start();
        await ok(await second.op(next, "navigate", { url: fx.site.url("list.html") }));
        const hit = await second.op(
          next,
          "extract",
          { instruction: "summarise", options: { model } },
          { headers: WITH_MODEL_KEY },
        );
        expect(await ok<{ result: Record<string, unknown> }>(hit)).toMatchObject({
          result: { extraction: "persisted answer" },
          cacheStatus: "HIT",
        });
        expect(fx.model.callCount).toBe(1);

        expect((await secondStore.getSession(stale.id))?.status).toBe("ended");
        if (shared) {
          // It may be another node's: left alone, and answered as running elsewhere.
          expect((await secondStore.getSession(fresh.id))?.status).toBe("active");
          const elsewhere = await second.op(fresh.id, "extract", {});
          expect(elsewhere.status).toBe(409);
          expect((await elsewhere.json()).code).toBe("SESSION_ELSEWHERE");
          await secondStore.endSession(fresh.id);
        } else {
          expect((await secondStore.getSession(fresh.id))?.status).toBe("ended");
          expect((await second.op(fresh.id, "extract", {})).status).toBe(410);
        }
        await second.op(next, "end");
      } finally {
        await second.close();
        await secondStore.close();
      }
    } finally {
      await database.dispose();
    }
  });
}

describe("restart on SQLite", () => {
  restartSuite(
    "SQLite file",
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), "deckhand-restart-"));
      return {
        open: async () => new SqliteStore(dir),
        dispose: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    false,
  );
});

const url = process.env.DECKHAND_TEST_DATABASE_URL;
if (!url) {
  console.warn(
    "PostgreSQL restart test skipped: set DECKHAND_TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test).",
  );
}
describe.skipIf(!url)(
  url ? "restart on PostgreSQL" : "restart on PostgreSQL (skipped: DECKHAND_TEST_DATABASE_URL is not set)",
  () => {
    restartSuite(
      "PostgreSQL",
      () => {
        const schema = `deckhand_restart_${crypto.randomBytes(6).toString("hex")}`;
        return {
          open: () => PostgresStore.open({ url: url!, schema }),
          dispose: async () => {
            const client = new pg.Client({ connectionString: url });
            await client.connect();
            try {
              await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
            } finally {
              await client.end();
            }
          },
        };
      },
      true,
    );
  },
);
