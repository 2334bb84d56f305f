// Revoking a key takes what it holds open away within a second: its CDP proxy sockets and its
// operation streams, also when the key is revoked by another process (`deckhand-server keys
// revoke`, which writes the database the service reads). On SQLite, and on PostgreSQL when
// DECKHAND_TEST_DATABASE_URL is set. Another key's session is untouched.

import { spawn } from "node:child_process";
import crypto from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import {
  type Fixtures,
  type LiveService,
  ok,
  parseEvents,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";
import { rawCdpClient } from "./cdp-attacker.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const node = path.resolve(here, "../../../../node_modules/.bin/node");
const cli = path.resolve(here, "../../src/cli.ts");
const databaseUrl = process.env.DECKHAND_TEST_DATABASE_URL;

/** Runs `deckhand-server keys revoke <id>` as the operator would, in a process of its own. */
function revokeWithCli(id: string, where: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const child = spawn(node, ["--conditions=deckhand-source", cli, "keys", "revoke", id, ...where], { env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

interface Backend {
  store: Store;
  /** The CLI's flags to reach the same database. */
  cliFlags: string[];
  dispose(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(path.join(tmpdir(), "deckhand-revoke-"));
  const store = new SqliteStore(dir);
  return {
    store,
    cliFlags: ["--data-dir", dir],
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const schema = `deckhand_revoke_${crypto.randomBytes(6).toString("hex")}`;
  const store = await PostgresStore.open({ url: databaseUrl!, schema });
  const url = new URL(databaseUrl!);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    store,
    cliFlags: ["--database-url", url.href],
    dispose: async () => {
      await store.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

let fx: Fixtures;
beforeAll(async () => {
  fx = await startFixtures();
});
afterAll(async () => {
  await fx?.close();
});

const backends: [string, () => Promise<Backend>, boolean][] = [
  ["SQLite", sqliteBackend, true],
  ["PostgreSQL", postgresBackend, databaseUrl !== undefined],
];

for (const [name, open, available] of backends) {
  describe.skipIf(!available)(
    `revoking a key (${name}${available ? "" : ": set DECKHAND_TEST_DATABASE_URL"})`,
    () => {
      let backend: Backend;
      let svc: LiveService;
      beforeAll(async () => {
        backend = await open();
        svc = await startLiveService({ store: backend.store });
      });
      afterAll(async () => {
        await svc?.close();
        await backend?.dispose();
      });

      it("closes the key's CDP sockets and streams within a second, from another process; others go on", async () => {
        const doomed = await backend.store.createKey({ name: "to be revoked" });
        const id = await svc.start({}, { key: doomed.key });
        const bystander = await svc.start({}, { key: svc.otherKey.key });
        await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }, { key: doomed.key }));

        // What the key holds open: two CDP sockets and a streamed navigation that waits on a slow page.
        const sockets = [await rawCdpClient(svc, id, doomed.key), await rawCdpClient(svc, id, doomed.key)];
        const closedAt = sockets.map((s) => s.closed.then((code) => ({ code, at: Date.now() })));
        const stream = await svc.call(`/v1/sessions/${id}/navigate`, {
          json: { url: fx.site.url("slow?ms=30000") },
          key: doomed.key,
          headers: { "x-stream-response": "true" },
        });
        expect(stream.status).toBe(200);
        const reader = stream.body!.getReader();
        let streamed = "";
        const decoder = new TextDecoder();
        const streamEnded = (async () => {
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              streamed += decoder.decode(value, { stream: true });
            }
          } catch {
            // cut: that is an end too (and the final event below is then missing)
          }
          return Date.now();
        })();
        // Each socket is in use right up to the revocation.
        for (const socket of sockets) expect((await socket.pages()).length).toBeGreaterThan(0);

        const revoked = await revokeWithCli(doomed.id, backend.cliFlags);
        expect(revoked.code, revoked.output).toBe(0);
        const at = Date.now();
        for (const closed of await Promise.all(closedAt)) {
          expect(closed.code).toBe(1008);
          expect(closed.at - at).toBeLessThan(1000);
        }
        expect((await streamEnded) - at).toBeLessThan(1000);
        // The stream was not cut: it ended with its final event, which names the revocation.
        const events = parseEvents(streamed);
        expect(events.at(-1)).toMatchObject({
          type: "system",
          data: { status: "error", code: "KEY_REVOKED", error: expect.stringMatching(/revoked/) },
        });
        expect(events.filter((event) => event.data.status === "finished")).toEqual([]);

        // Nothing the key held answers any more, and it cannot come back.
        const again = await svc.call(`/v1/sessions/${id}/extract`, { json: {}, key: doomed.key });
        expect(again.status).toBe(401);
        await expect(rawCdpClient(svc, id, doomed.key)).rejects.toThrow(/401/);
        // The other project's session is untouched.
        const client = await rawCdpClient(svc, bystander, svc.otherKey.key);
        try {
          expect((await client.pages()).length).toBe(1);
        } finally {
          client.close();
        }
        await ok(
          await svc.op(bystander, "navigate", { url: fx.site.url("form.html") }, { key: svc.otherKey.key }),
        );
        // (Bounded for a loaded machine: the revoking CLI process alone may take 20 s to load.)
      }, 120_000);
    },
  );
}
