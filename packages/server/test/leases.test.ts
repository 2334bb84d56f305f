// Two real deckhand-server processes on one real PostgreSQL (a schema of this run's own). A session
// belongs to the node that started it, under that node's lease: the other node never changes it
// behind the owner's back (409 naming the owner), and once the owner is killed with SIGKILL its
// sessions are ended within 30 s, freeing their place, with the defaults an operator gets.

import crypto from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FixtureServer, startFixtureServer, waitForNoChrome } from "@deckhand/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { PostgresStore } from "../src/store/postgres-store.ts";
import type { CreatedKey } from "../src/store/store.ts";
import { eventually } from "./live-helpers.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

const url = process.env.DECKHAND_TEST_DATABASE_URL;
if (!url) {
  console.warn(
    "Lease tests skipped: set DECKHAND_TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test).",
  );
}

describe.skipIf(!url)(
  url ? "two nodes on PostgreSQL" : "two nodes on PostgreSQL (skipped: no database)",
  () => {
    const schema = `deckhand_lease_${crypto.randomBytes(6).toString("hex")}`;
    const markers = {
      a: `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`,
      b: `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`,
    };
    let store: PostgresStore;
    let key: CreatedKey;
    let site: FixtureServer;
    let a: ServerProcess | undefined;
    let b: ServerProcess | undefined;

    // Both nodes on one machine: one temporary directory, where a killed node's leftovers must go.
    const tmp = mkdtempSync(path.join(tmpdir(), "deckhand-lease-nodes-"));
    const start = (marker: string) =>
      startServerProcess(["--database-url", url!, "--database-schema", schema, "--max-sessions", "1"], {
        marker,
        tmp,
      });

    const call = (node: ServerProcess, pathname: string, json?: unknown) =>
      fetch(`${node.url}${pathname}`, {
        method: json === undefined ? "GET" : "POST",
        headers: {
          "x-platform-api-key": key.key,
          ...(json !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });

    beforeAll(async () => {
      store = await PostgresStore.open({ url: url!, schema });
      key = await store.createKey({ name: "lease test" });
      site = await startFixtureServer();
      [a, b] = await Promise.all([start(markers.a), start(markers.b)]);
    }, 240_000);

    afterAll(async () => {
      for (const node of [a, b]) {
        if (node && node.child.exitCode === null && node.child.signalCode === null)
          node.child.kill("SIGKILL");
      }
      await Promise.all([a?.exited, b?.exited]);
      await site?.close();
      await store?.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
      rmSync(tmp, { recursive: true, force: true });
      expect(await waitForNoChrome(markers.a)).toEqual([]);
      expect(await waitForNoChrome(markers.b)).toEqual([]);
    });

    it("the other node leaves a session alone while its owner lives, and reclaims it within 30 s of a SIGKILL", async () => {
      const started = await call(a!, "/v1/sessions/start", {});
      expect(started.status).toBe(200);
      const { sessionId, cdpUrl } = (await started.json()).data as { sessionId: string; cdpUrl: string };
      const nodeA = (await store.getSession(sessionId))?.nodeId;
      expect(nodeA).toEqual(expect.any(String));
      // The session's download directory, on this machine (under the store's own root in it).
      const sessionDirs = () => readdirSync(tmp, { recursive: true }).map(String);
      expect(sessionDirs().some((name) => name.includes(sessionId))).toBe(true);

      // A CDP client of the session, on node A, for the whole test.
      const cdp = new WebSocket(cdpUrl, { headers: { "x-platform-api-key": key.key } });
      await new Promise((resolve, reject) => cdp.once("open", resolve).once("error", reject));
      let nextId = 1;
      /** One CDP command on that same connection. */
      const command = (method: string) =>
        new Promise<unknown>((resolve, reject) => {
          const id = nextId++;
          const onMessage = (data: WebSocket.RawData) => {
            const message = JSON.parse(data.toString());
            if (message.id !== id) return;
            cdp.off("message", onMessage);
            if (message.error) reject(new Error(message.error.message));
            else resolve(message.result);
          };
          cdp.on("message", onMessage);
          cdp.send(JSON.stringify({ id, method, params: {} }));
        });
      await command("Target.getTargets");

      // ---- node B, while A lives: it refuses to act on A's session and changes nothing ----
      const end = await call(b!, `/v1/sessions/${sessionId}/end`, {});
      expect(end.status).toBe(409);
      const refusal = await end.json();
      expect(refusal).toMatchObject({
        success: false,
        code: "SESSION_ELSEWHERE",
        details: { nodeId: nodeA },
      });
      expect(refusal.error).toContain(`node ${nodeA}`);
      expect(
        (await call(b!, `/v1/sessions/${sessionId}/navigate`, { url: site.url("form.html") })).status,
      ).toBe(409);
      expect((await call(b!, "/v1/sessions/start", { sessionId })).status).toBe(409);
      expect((await store.getSession(sessionId))?.status).toBe("active");
      // The owner still serves it, and its CDP client is still connected.
      expect(
        (await call(a!, `/v1/sessions/${sessionId}/navigate`, { url: site.url("form.html") })).status,
      ).toBe(200);
      expect(cdp.readyState).toBe(WebSocket.OPEN);
      await command("Target.getTargets");
      // The one place (--max-sessions 1) is taken, on either node.
      expect((await call(b!, "/v1/sessions/start", {})).status).toBe(429);

      // ---- A is killed: no clean shutdown, no lease given up ----
      const killedAt = Date.now();
      a!.child.kill("SIGKILL");
      await a!.exited;
      let status = "active";
      while (status === "active" && Date.now() - killedAt < 40_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        status = (await store.getSession(sessionId))?.status ?? "missing";
      }
      const reclaimedAfter = Date.now() - killedAt;
      console.info(`leases: the killed node's session was ended ${reclaimedAfter} ms after the SIGKILL`);
      expect(status).toBe("ended");
      expect(reclaimedAfter).toBeLessThan(30_000);

      // Its place is free again, and the session is answered as ended everywhere.
      expect((await call(b!, `/v1/sessions/${sessionId}/end`, {})).status).toBe(410);
      expect((await call(b!, "/v1/sessions/start", { sessionId })).status).toBe(410);
      const next = await call(b!, "/v1/sessions/start", {});
      expect(next.status).toBe(200);
      const nextId2 = (await next.json()).data.sessionId as string;
      expect((await call(b!, `/v1/sessions/${nextId2}/end`, {})).status).toBe(200);
      // A's browser went with it, and its profile too.
      expect(await waitForNoChrome(markers.a)).toEqual([]);
      // A could not remove its session's download directory; B does, once the session has ended.
      await eventually(
        () => !sessionDirs().some((name) => name.includes(sessionId)),
        10_000,
        "A's session directory to go",
      );
      cdp.terminate();

      // B stops cleanly and gives its lease up.
      b!.child.kill("SIGTERM");
      expect(await b!.exited).toBe(0);
      expect(readdirSync(tmp)).toEqual([]);
      const nodes = await store.reclaimLapsedNodes();
      expect(nodes.sessionIds).toEqual([]);
    }, 90_000);
  },
);
