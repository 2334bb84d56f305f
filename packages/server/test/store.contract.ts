// The behaviour every Store back end must have. store.sqlite.test.ts and store.postgres.test.ts run
// this same suite against their back end.

import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Store } from "../src/store/store.ts";

export interface StoreHarness {
  /** Opens a store on the harness's database; each call reaches the same data (restart = close + open). */
  open(): Promise<Store>;
  /** Every row of a table, read around the store (to check what is really on disk). */
  rawRows(table: string): Promise<Record<string, unknown>[]>;
  /** Every byte the back end keeps on disk, when it can say (SQLite: the file and its WAL). */
  rawBytes?(): Promise<Buffer>;
  /** Removes everything the harness created. */
  dispose(): Promise<void>;
}

export function storeContract(makeHarness: () => Promise<StoreHarness>): void {
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
  });

  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  describe("API keys", () => {
    it("creates a prefixed, high-entropy key that verifies to its key id and project", async () => {
      const created = await store.createKey({ name: "ci", projectId: "proj_contract" });
      expect(created.key).toMatch(/^dh_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(created).toMatchObject({ name: "ci", projectId: "proj_contract" });
      expect(await store.verifyKey(created.key)).toEqual({ keyId: created.id, projectId: "proj_contract" });
    });

    it("gives each key without a project id its own project", async () => {
      const a = await store.createKey();
      const b = await store.createKey();
      expect(a.projectId).toMatch(/^proj_/);
      expect(a.projectId).not.toBe(b.projectId);
    });

    it("keeps only a SHA-256 hash: the plaintext key is nowhere in the database", async () => {
      const created = await store.createKey({ name: "hashed" });
      const secret = created.key.split("_").slice(2).join("_");
      const rows = await harness.rawRows("api_keys");
      const row = rows.find((r) => r.id === created.id);
      expect(row?.key_hash).toBe(crypto.createHash("sha256").update(created.key).digest("hex"));
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(created.key);
      expect(dump).not.toContain(secret);
      if (harness.rawBytes) {
        const bytes = await harness.rawBytes();
        expect(bytes.includes(created.key)).toBe(false);
        expect(bytes.includes(secret)).toBe(false);
      }
    });

    it("lists keys without the key or its hash", async () => {
      const created = await store.createKey({ name: "listed" });
      const listed = (await store.listKeys()).find((k) => k.id === created.id);
      expect(listed).toEqual({
        id: created.id,
        name: "listed",
        projectId: created.projectId,
        createdAt: created.createdAt,
      });
      expect(JSON.stringify(await store.listKeys())).not.toContain(created.key);
    });

    it("rejects a wrong secret for a real key id, a malformed key and an unknown key", async () => {
      const created = await store.createKey();
      const wrong = `${created.key.slice(0, -1)}${created.key.endsWith("A") ? "B" : "A"}`;
      expect(await store.verifyKey(wrong)).toBeNull();
      expect(await store.verifyKey("not-a-key")).toBeNull();
      expect(await store.verifyKey("")).toBeNull();
      expect(await store.verifyKey(`dh_0123456789abcdef_${"x".repeat(43)}`)).toBeNull();
    });

    it("compares key hashes with crypto.timingSafeEqual", async () => {
      const created = await store.createKey();
      const spy = vi.spyOn(crypto, "timingSafeEqual");
      try {
        expect(await store.verifyKey(created.key)).not.toBeNull();
        expect(spy).toHaveBeenCalled();
        spy.mockClear();
        expect(await store.verifyKey(`dh_0123456789abcdef_${"y".repeat(43)}`)).toBeNull();
        expect(spy).toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    });

    it("rejects a revoked key and marks it revoked in the list", async () => {
      const created = await store.createKey({ name: "to revoke" });
      expect(await store.revokeKey(created.id)).toBe(true);
      expect(await store.verifyKey(created.key)).toBeNull();
      expect(await store.revokeKey(created.id)).toBe(false);
      expect(await store.revokeKey("no-such-key")).toBe(false);
      const listed = (await store.listKeys()).find((k) => k.id === created.id);
      expect(listed?.revokedAt).toBeTypeOf("number");
    });

    it("says which of some key ids are revoked", async () => {
      const live = await store.createKey({ name: "live" });
      const gone = await store.createKey({ name: "gone" });
      await store.revokeKey(gone.id);
      expect(await store.revokedKeyIds([live.id, gone.id, "no-such-key"])).toEqual([gone.id]);
      expect(await store.revokedKeyIds([live.id])).toEqual([]);
      expect(await store.revokedKeyIds([])).toEqual([]);
    });
  });

  describe("sessions", () => {
    it("goes from active to ended, with activity and end times", async () => {
      const session = await store.createSession({
        projectId: "proj_s",
        keyId: "key_s",
        params: { modelName: "openai/gpt-4.1-mini", selfHeal: true },
        clientLanguage: "typescript",
        createdAt: 1_700_000_000_000,
      });
      expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(session).toEqual({
        id: session.id,
        projectId: "proj_s",
        keyId: "key_s",
        params: { modelName: "openai/gpt-4.1-mini", selfHeal: true },
        clientLanguage: "typescript",
        status: "active",
        createdAt: 1_700_000_000_000,
        lastActivityAt: 1_700_000_000_000,
      });
      expect(await store.getSession(session.id)).toEqual(session);

      await store.touchSession(session.id, 1_700_000_005_000);
      expect((await store.getSession(session.id))?.lastActivityAt).toBe(1_700_000_005_000);
      // Activity never moves backwards.
      await store.touchSession(session.id, 1_700_000_001_000);
      expect((await store.getSession(session.id))?.lastActivityAt).toBe(1_700_000_005_000);

      expect((await store.listActiveSessions({ projectId: "proj_s" })).map((s) => s.id)).toEqual([
        session.id,
      ]);
      expect(await store.countActiveSessions({ projectId: "proj_s" })).toBe(1);

      expect(await store.endSession(session.id, 1_700_000_009_000)).toBe(true);
      const ended = await store.getSession(session.id);
      expect(ended).toMatchObject({
        status: "ended",
        endedAt: 1_700_000_009_000,
        lastActivityAt: 1_700_000_009_000,
      });
      expect(await store.endSession(session.id)).toBe(false);
      expect(await store.listActiveSessions({ projectId: "proj_s" })).toEqual([]);
      expect(await store.countActiveSessions({ projectId: "proj_s" })).toBe(0);
    });

    it("counts and lists active sessions across projects", async () => {
      const before = await store.countActiveSessions();
      const a = await store.createSession({ projectId: "proj_c1", keyId: "k" });
      await store.createSession({ projectId: "proj_c2", keyId: "k" });
      expect(await store.countActiveSessions()).toBe(before + 2);
      expect((await store.listActiveSessions()).some((s) => s.id === a.id)).toBe(true);
      expect(a.params).toEqual({});
      expect(a.clientLanguage).toBeUndefined();
    });

    it("answers null for an unknown session", async () => {
      expect(await store.getSession(crypto.randomUUID())).toBeNull();
      expect(await store.getReplay(crypto.randomUUID())).toBeNull();
    });
  });

  describe("replay", () => {
    it("groups actions into pages by URL, in the order they happened (spec 2.3-2.6)", async () => {
      const session = await store.createSession({
        projectId: "proj_r",
        keyId: "k",
        clientLanguage: "python",
      });
      const t = 1_700_000_000_000;
      await store.appendAction(session.id, {
        method: "navigate",
        parameters: { url: "https://a.test/" },
        result: { ok: true },
        timestamp: t,
        endTime: t + 500,
        pageUrl: "https://a.test/",
      });
      await store.appendAction(session.id, {
        method: "act",
        parameters: { input: "click sign in" },
        result: { success: true },
        timestamp: t + 1000,
        endTime: t + 2500,
        pageUrl: "https://a.test/",
        tokenUsage: { inputTokens: 1200, outputTokens: 40, timeMs: 1400, cost: 0.0031 },
      });
      await store.appendAction(session.id, {
        method: "extract",
        parameters: { instruction: "the price" },
        result: { extraction: "$3" },
        timestamp: t + 3000,
        pageUrl: "https://b.test/",
        tokenUsage: { inputTokens: 10 },
      });
      await store.appendAction(session.id, {
        method: "observe",
        parameters: {},
        result: { actions: [] },
        timestamp: t + 4000,
        endTime: t + 4100,
        pageUrl: "https://a.test/",
      });

      expect(await store.getReplay(session.id)).toStrictEqual({
        pages: [
          {
            url: "https://a.test/",
            timestamp: t,
            duration: 2500,
            actions: [
              {
                method: "navigate",
                parameters: { url: "https://a.test/" },
                result: { ok: true },
                timestamp: t,
                endTime: t + 500,
              },
              {
                method: "act",
                parameters: { input: "click sign in" },
                result: { success: true },
                timestamp: t + 1000,
                endTime: t + 2500,
                tokenUsage: { inputTokens: 1200, outputTokens: 40, timeMs: 1400, cost: 0.0031 },
              },
            ],
          },
          {
            url: "https://b.test/",
            timestamp: t + 3000,
            duration: 0,
            actions: [
              {
                method: "extract",
                parameters: { instruction: "the price" },
                result: { extraction: "$3" },
                timestamp: t + 3000,
                tokenUsage: { inputTokens: 10 },
              },
            ],
          },
          {
            url: "https://a.test/",
            timestamp: t + 4000,
            duration: 100,
            actions: [
              {
                method: "observe",
                parameters: {},
                result: { actions: [] },
                timestamp: t + 4000,
                endTime: t + 4100,
              },
            ],
          },
        ],
        clientLanguage: "python",
      });
    });

    it("has no pages and no clientLanguage for a fresh session without one", async () => {
      const session = await store.createSession({ projectId: "proj_r", keyId: "k" });
      expect(await store.getReplay(session.id)).toStrictEqual({ pages: [] });
    });

    it("stores variable values and API keys redacted, variable names kept", async () => {
      const session = await store.createSession({ projectId: "proj_r", keyId: "k" });
      await store.appendAction(session.id, {
        method: "act",
        parameters: {
          input: "type %password% into the password field",
          options: {
            variables: { password: "hunter2", user: { value: "alice", description: "the login" } },
            model: { modelName: "openai/gpt-4.1-mini", apiKey: "sk-secret-model-key" },
          },
        },
        result: { success: true, message: "typed hunter2" },
        timestamp: 1,
        pageUrl: "https://login.test/",
      });
      const replay = await store.getReplay(session.id);
      const action = replay?.pages[0]?.actions[0];
      expect(action?.parameters).toEqual({
        input: "type %password% into the password field",
        options: {
          variables: { password: "[redacted]", user: { value: "[redacted]", description: "the login" } },
          model: { modelName: "openai/gpt-4.1-mini", apiKey: "[redacted]" },
        },
      });
      const dump = JSON.stringify(await harness.rawRows("replay_actions"));
      expect(dump).not.toContain("sk-secret-model-key");
      expect(dump).not.toContain("alice");
    });
  });

  describe("cache", () => {
    it("stores, replaces and deletes JSON values", async () => {
      expect(await store.cacheGet("proj_k", "act:a")).toBeUndefined();
      await store.cachePut("proj_k", "act:a", {
        selector: "/html/body/button",
        args: [1, "x"],
        nested: { n: null },
      });
      expect(await store.cacheGet("proj_k", "act:a")).toEqual({
        selector: "/html/body/button",
        args: [1, "x"],
        nested: { n: null },
      });
      await store.cachePut("proj_k", "act:a", "replaced");
      expect(await store.cacheGet("proj_k", "act:a")).toBe("replaced");
      expect(await store.cacheDelete("proj_k", "act:a")).toBe(true);
      expect(await store.cacheDelete("proj_k", "act:a")).toBe(false);
      expect(await store.cacheGet("proj_k", "act:a")).toBeUndefined();
    });

    it("never lets one project read, replace or delete another project's entry", async () => {
      await store.cachePut("proj_one", "same-key", { owner: "one" });
      expect(await store.cacheGet("proj_two", "same-key")).toBeUndefined();
      expect(await store.cacheDelete("proj_two", "same-key")).toBe(false);
      await store.cachePut("proj_two", "same-key", { owner: "two" });
      expect(await store.cacheGet("proj_one", "same-key")).toEqual({ owner: "one" });
      expect(await store.cacheGet("proj_two", "same-key")).toEqual({ owner: "two" });
    });

    it("refuses a value that is not JSON", async () => {
      await expect(store.cachePut("proj_k", "bad", undefined)).rejects.toThrow(/JSON/);
    });
  });

  describe("node leases", () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it("a live lease renews; a lapsed one does not, and its node's active sessions are ended by a sweep", async () => {
      const key = await store.createKey();
      const alive = `node-alive-${crypto.randomUUID()}`;
      const gone = `node-gone-${crypto.randomUUID()}`;
      await store.registerNode(alive, 60_000);
      await store.registerNode(gone, 1000);
      const mine = await store.createSession({ projectId: key.projectId, keyId: key.id, nodeId: alive });
      const theirs = await store.createSession({ projectId: key.projectId, keyId: key.id, nodeId: gone });
      const theirsEnded = await store.createSession({
        projectId: key.projectId,
        keyId: key.id,
        nodeId: gone,
      });
      await store.endSession(theirsEnded.id, 1_700_000_000_000);
      const legacy = await store.createSession({ projectId: key.projectId, keyId: key.id });
      expect(await store.getSession(mine.id)).toMatchObject({ nodeId: alive, status: "active" });
      expect((await store.getSession(legacy.id))?.nodeId).toBeUndefined();

      expect(await store.renewNode(alive, 60_000)).toBe(true);
      expect(await store.nodeIsLive(gone)).toBe(true);
      await sleep(1100);
      expect(await store.nodeIsLive(gone)).toBe(false);
      expect(await store.renewNode(gone, 60_000)).toBe(false);

      const reclaimed = await store.reclaimLapsedNodes();
      expect(reclaimed.nodeIds).toContain(gone);
      expect(reclaimed.nodeIds).not.toContain(alive);
      expect(reclaimed.sessionIds).toEqual([theirs.id]);
      expect(await store.getSession(theirs.id)).toMatchObject({ status: "ended", endReason: "node lost" });
      expect((await store.getSession(theirsEnded.id))?.endedAt).toBe(1_700_000_000_000);
      expect(await store.getSession(mine.id)).toMatchObject({ status: "active" });
      expect(await store.getSession(legacy.id)).toMatchObject({ status: "active" });
      // A second sweep finds nothing; the forgotten node can take a lease again.
      expect(await store.reclaimLapsedNodes()).toEqual({ nodeIds: [], sessionIds: [] });
      await store.registerNode(gone, 60_000);
      expect(await store.nodeIsLive(gone)).toBe(true);
      await store.removeNode(gone);
      await store.endSession(mine.id);
      await store.removeNode(alive);
      expect(await store.nodeIsLive(alive)).toBe(false);
      await store.endSession(legacy.id);
    });

    it("a node whose lease lapsed takes it again and keeps the sessions nobody reclaimed; it is told of the ones reclaimed", async () => {
      const key = await store.createKey();
      const node = `node-stalled-${crypto.randomUUID()}`;
      // A lease of 1 ms, certainly lapsed 50 ms later.
      await store.registerNode(node, 1);
      const kept = await store.createSession({ projectId: key.projectId, keyId: key.id, nodeId: node });
      const alreadyEnded = await store.createSession({
        projectId: key.projectId,
        keyId: key.id,
        nodeId: node,
      });
      await store.endSession(alreadyEnded.id);
      await sleep(50);
      // A node never reclaims its own sessions.
      expect((await store.reclaimLapsedNodes({ except: node })).sessionIds).not.toContain(kept.id);
      expect(await store.renewNode(node, 60_000)).toBe(false);
      // Nobody reclaimed it: the node keeps its session (and hears of the one that had ended).
      expect(await store.resumeNode(node, 60_000, [kept.id, alreadyEnded.id])).toEqual([alreadyEnded.id]);
      expect(await store.nodeIsLive(node)).toBe(true);
      expect((await store.reclaimLapsedNodes()).sessionIds).not.toContain(kept.id);
      expect(await store.getSession(kept.id)).toMatchObject({ status: "active" });

      // It stalls again, and this time another node reclaims its session before it comes back.
      await store.registerNode(node, 1);
      await sleep(50);
      expect((await store.reclaimLapsedNodes()).sessionIds).toContain(kept.id);
      expect(await store.renewNode(node, 60_000)).toBe(false);
      expect(await store.resumeNode(node, 60_000, [kept.id])).toEqual([kept.id]);
      expect(await store.resumeNode(node, 60_000, [])).toEqual([]);
      await store.removeNode(node);
    });

    it("keeps each node's address, capacity and draining mark, and counts its active sessions", async () => {
      const key = await store.createKey();
      const node = `node-cluster-${crypto.randomUUID()}`;
      await store.registerNode(node, 60_000, { advertiseUrl: "http://10.0.0.5:3000", maxSessions: 4 });
      const session = await store.createSession({ projectId: key.projectId, keyId: key.id, nodeId: node });
      expect(await store.getNode(node)).toEqual({
        id: node,
        advertiseUrl: "http://10.0.0.5:3000",
        maxSessions: 4,
        live: true,
        draining: false,
        activeSessions: 1,
      });
      expect((await store.listLiveNodes()).find((n) => n.id === node)).toMatchObject({ activeSessions: 1 });
      // Asked for a project: its sessions on each node too (placement keeps a project together).
      const other = await store.createKey();
      const forProject = async (projectId: string) =>
        (await store.listLiveNodes(projectId)).find((n) => n.id === node)?.projectSessions;
      expect(await forProject(key.projectId)).toBe(1);
      expect(await forProject(other.projectId)).toBe(0);
      expect((await store.listLiveNodes()).find((n) => n.id === node)?.projectSessions).toBeUndefined();
      await store.setNodeDraining(node);
      expect((await store.getNode(node))?.draining).toBe(true);
      await store.endSession(session.id);
      expect((await store.getNode(node))?.activeSessions).toBe(0);
      expect(await forProject(key.projectId)).toBe(0);
      await store.removeNode(node);
      expect(await store.getNode(node)).toBeNull();
      expect((await store.listLiveNodes()).some((n) => n.id === node)).toBe(false);
    });

    it("keeps what each node can start without a launch: registered, renewed and published between renewals", async () => {
      const node = `node-ready-${crypto.randomUUID()}`;
      const ready = (anyProject: number, projects: Record<string, number> = {}) => ({ anyProject, projects });
      await store.registerNode(node, 60_000, { advertiseUrl: "http://10.0.0.6:3000", ready: ready(8) });
      expect((await store.getNode(node))?.ready).toEqual(ready(8));
      await store.setNodeReady(node, ready(0, { "project-a": 7 }));
      expect((await store.listLiveNodes()).find((n) => n.id === node)?.ready).toEqual(
        ready(0, { "project-a": 7 }),
      );
      // A renewal that says nothing of it keeps it; one that does replaces it.
      expect(await store.renewNode(node, 60_000)).toBe(true);
      expect((await store.getNode(node))?.ready).toEqual(ready(0, { "project-a": 7 }));
      expect(await store.renewNode(node, 60_000, ready(8, { "project-a": 6 }))).toBe(true);
      expect((await store.getNode(node))?.ready).toEqual(ready(8, { "project-a": 6 }));
      await store.removeNode(node);
      // A node registered without it has published nothing.
      await store.registerNode(node, 60_000, { maxSessions: 2 });
      expect((await store.getNode(node))?.ready).toBeUndefined();
      await store.removeNode(node);
    });

    it("admits a session only within the node's (or the store's) limit and the project's, counting every node", async () => {
      const key = await store.createKey();
      const node = `node-admit-${crypto.randomUUID()}`;
      const other = `node-admit-${crypto.randomUUID()}`;
      const input = (nodeId: string) => ({ projectId: key.projectId, keyId: key.id, nodeId });
      const first = await store.admitSession(input(node), {
        maxSessions: 1,
        perNode: true,
        maxPerProject: 2,
      });
      expect("session" in first && first.session.nodeId).toBe(node);
      expect(
        await store.admitSession(input(node), { maxSessions: 1, perNode: true, maxPerProject: 2 }),
      ).toEqual({
        refused: "node",
      });
      const second = await store.admitSession(input(other), {
        maxSessions: 1,
        perNode: true,
        maxPerProject: 2,
      });
      expect("session" in second).toBe(true);
      // The project has two, on two nodes: a third node with room still refuses it.
      expect(
        await store.admitSession(input(`node-admit-${crypto.randomUUID()}`), {
          maxSessions: 1,
          perNode: true,
          maxPerProject: 2,
        }),
      ).toEqual({ refused: "project" });
      // Counting the whole store (no cluster): every active session counts against the limit.
      const total = await store.countActiveSessions();
      expect(
        await store.admitSession(input(node), { maxSessions: total, perNode: false, maxPerProject: 99 }),
      ).toEqual({
        refused: "node",
      });
      for (const admitted of [first, second])
        if ("session" in admitted) await store.endSession(admitted.session.id);
    });

    it("ends the active sessions of a node that has no lease at all (forgotten, still starting sessions)", async () => {
      const key = await store.createKey();
      const orphan = await store.createSession({
        projectId: key.projectId,
        keyId: key.id,
        nodeId: `node-never-registered-${crypto.randomUUID()}`,
      });
      expect((await store.reclaimLapsedNodes()).sessionIds).toEqual([orphan.id]);
    });
  });

  describe("screenshots and the session page's record", () => {
    const jpeg = (n: number) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(n, n % 251)]);

    it("numbers actions in the order they were appended and lists them with their page", async () => {
      const session = await store.createSession({ projectId: "proj_s", keyId: "k" });
      const first = await store.appendAction(session.id, {
        method: "navigate",
        parameters: { url: "https://a.test/" },
        result: {},
        timestamp: 1,
        endTime: 2,
        pageUrl: "https://a.test/",
      });
      const second = await store.appendAction(session.id, {
        method: "act",
        parameters: { input: "x" },
        result: { success: true },
        timestamp: 3,
        pageUrl: "https://a.test/",
        tokenUsage: { inputTokens: 5 },
      });
      expect(second).toBeGreaterThan(first);
      expect(await store.listActions(session.id)).toStrictEqual([
        {
          seq: first,
          pageUrl: "https://a.test/",
          method: "navigate",
          parameters: { url: "https://a.test/" },
          result: {},
          timestamp: 1,
          endTime: 2,
        },
        {
          seq: second,
          pageUrl: "https://a.test/",
          method: "act",
          parameters: { input: "x" },
          result: { success: true },
          timestamp: 3,
          tokenUsage: { inputTokens: 5 },
        },
      ]);
      expect(await store.listActions(crypto.randomUUID())).toEqual([]);
    });

    it("keeps a step's screenshots byte for byte, per session, and lists them without their bytes", async () => {
      const a = await store.createSession({ projectId: "proj_s", keyId: "k" });
      const b = await store.createSession({ projectId: "proj_s", keyId: "k" });
      await store.putScreenshot(a.id, 7, "before", jpeg(100));
      await store.putScreenshot(a.id, 7, "after", jpeg(200));
      await store.putScreenshot(b.id, 7, "after", jpeg(300));
      expect(await store.getScreenshot(a.id, 7, "after")).toEqual(jpeg(200));
      expect(await store.getScreenshot(b.id, 7, "after")).toEqual(jpeg(300));
      expect(await store.getScreenshot(b.id, 7, "before")).toBeNull();
      expect(await store.getScreenshot(a.id, 8, "after")).toBeNull();
      expect(await store.listScreenshots(a.id)).toEqual([
        { actionSeq: 7, kind: "before", bytes: 103 },
        { actionSeq: 7, kind: "after", bytes: 203 },
      ]);
    });

    it("deletes screenshots older than the retention limit, and only those", async () => {
      const session = await store.createSession({ projectId: "proj_s", keyId: "k" });
      await store.putScreenshot(session.id, 1, "after", jpeg(10));
      await new Promise((resolve) => setTimeout(resolve, 5));
      const cut = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.putScreenshot(session.id, 2, "after", jpeg(20));
      expect(await store.pruneScreenshots(cut)).toBeGreaterThanOrEqual(1);
      expect(await store.getScreenshot(session.id, 1, "after")).toBeNull();
      expect(await store.getScreenshot(session.id, 2, "after")).toEqual(jpeg(20));
      expect(await store.listScreenshots(session.id)).toEqual([{ actionSeq: 2, kind: "after", bytes: 23 }]);
    });

    it("keeps one random secret per name, the same after a restart", async () => {
      const first = await store.serviceSecret("contract-links");
      expect(first.length).toBe(32);
      expect(await store.serviceSecret("contract-links")).toEqual(first);
      expect(await store.serviceSecret("contract-other")).not.toEqual(first);
      await store.close();
      store = await harness.open();
      expect(await store.serviceSecret("contract-links")).toEqual(first);
    });
  });

  describe("a project's sessions and totals (the dashboard)", () => {
    it("lists one project's sessions, active first then newest, with steps, pages, tokens, cost, cache hits and why each ended", async () => {
      const mine = "proj_dash_mine";
      const key = await store.createKey({ projectId: mine });
      const at = Date.UTC(2030, 0, 2, 10, 0, 0);
      const old = await store.createSession({ projectId: mine, keyId: key.id, createdAt: at - 86_400_000 });
      const ended = await store.createSession({ projectId: mine, keyId: key.id, createdAt: at });
      const live = await store.createSession({ projectId: mine, keyId: key.id, createdAt: at - 3_600_000 });
      const theirs = await store.createSession({
        projectId: "proj_dash_theirs",
        keyId: key.id,
        createdAt: at,
      });
      const step = (
        url: string,
        timestamp: number,
        result: Record<string, unknown>,
        usage?: { inputTokens: number; outputTokens: number; cost: number },
      ) => ({
        method: "act",
        parameters: { input: "x" },
        result,
        timestamp,
        endTime: timestamp + 10,
        pageUrl: url,
        ...(usage ? { tokenUsage: usage } : {}),
      });
      // a, a, b, a: three pages as the replay groups them.
      await store.appendAction(
        ended.id,
        step("https://a.test/", at + 1, { success: true }, { inputTokens: 100, outputTokens: 10, cost: 0.5 }),
      );
      await store.appendAction(
        ended.id,
        step("https://a.test/", at + 2, { success: true, cacheStatus: "HIT" }),
      );
      await store.appendAction(
        ended.id,
        step(
          "https://b.test/",
          at + 3,
          { success: false, error: "no" },
          { inputTokens: 50, outputTokens: 5, cost: 0.25 },
        ),
      );
      await store.appendAction(
        ended.id,
        step("https://a.test/", at + 4, { success: true, cacheStatus: "HIT" }),
      );
      await store.appendAction(
        theirs.id,
        step(
          "https://c.test/",
          at + 5,
          { success: true, cacheStatus: "HIT" },
          { inputTokens: 9, outputTokens: 9, cost: 9 },
        ),
      );
      await store.endSession(ended.id, at + 60_000, "ended by the client");
      await store.endSession(old.id, at - 86_000_000, "idle timeout");

      const listed = await store.listProjectSessions(mine);
      expect(listed.map((s) => s.id)).toEqual([live.id, ended.id, old.id]);
      expect(listed[0]).toMatchObject({
        status: "active",
        steps: 0,
        pages: 0,
        inputTokens: 0,
        cost: 0,
        cacheHits: 0,
      });
      expect(listed[0]!.endReason).toBeUndefined();
      expect(listed[1]).toMatchObject({
        id: ended.id,
        projectId: mine,
        status: "ended",
        createdAt: at,
        endedAt: at + 60_000,
        endReason: "ended by the client",
        steps: 4,
        pages: 3,
        inputTokens: 150,
        outputTokens: 15,
        cost: 0.75,
        cacheHits: 2,
        failures: 1,
      });
      expect(listed[2]).toMatchObject({ endReason: "idle timeout", steps: 0 });
      expect(await store.getSession(ended.id)).toMatchObject({ endReason: "ended by the client" });
      expect((await store.listProjectSessions(mine, { limit: 2 })).map((s) => s.id)).toEqual([
        live.id,
        ended.id,
      ]);
      expect((await store.listProjectSessions("proj_dash_theirs")).map((s) => s.id)).toEqual([theirs.id]);
      expect(await store.listProjectSessions("proj_dash_nobody")).toEqual([]);
    });

    it("adds up a project's days (UTC): sessions started and steps run, none of another project's", async () => {
      const mine = "proj_days_mine";
      const key = await store.createKey({ projectId: mine });
      const day1 = Date.UTC(2031, 4, 1, 23, 59, 0);
      const day2 = Date.UTC(2031, 4, 2, 0, 1, 0);
      const a = await store.createSession({ projectId: mine, keyId: key.id, createdAt: day1 });
      const b = await store.createSession({ projectId: mine, keyId: key.id, createdAt: day2 });
      const other = await store.createSession({
        projectId: "proj_days_theirs",
        keyId: key.id,
        createdAt: day2,
      });
      const act = (timestamp: number, cost: number, hit = false) => ({
        method: "act",
        parameters: {},
        result: hit ? { success: true, cacheStatus: "HIT" } : { success: true },
        timestamp,
        pageUrl: "https://d.test/",
        tokenUsage: { inputTokens: 10, outputTokens: 1, cost },
      });
      await store.appendAction(a.id, act(day1, 1));
      await store.appendAction(a.id, act(day2 + 1000, 2, true)); // a session that runs past midnight
      await store.appendAction(b.id, act(day2 + 2000, 4));
      await store.appendAction(other.id, act(day2 + 3000, 100, true));
      // An old session, before `since`: left out.
      const before = await store.createSession({
        projectId: mine,
        keyId: key.id,
        createdAt: day1 - 10 * 86_400_000,
      });
      await store.appendAction(before.id, act(day1 - 10 * 86_400_000, 1000));

      expect(await store.projectDailyTotals(mine, day1 - 86_400_000)).toEqual([
        { day: "2031-05-01", sessions: 1, steps: 1, inputTokens: 10, outputTokens: 1, cost: 1, cacheHits: 0 },
        { day: "2031-05-02", sessions: 1, steps: 2, inputTokens: 20, outputTokens: 2, cost: 6, cacheHits: 1 },
      ]);
      expect(await store.projectDailyTotals("proj_days_nobody", 0)).toEqual([]);
    });
  });

  describe("restart", () => {
    it("keeps keys, sessions, replay and cache when the store is closed and opened again", async () => {
      const key = await store.createKey({ name: "persistent" });
      const revoked = await store.createKey({ name: "revoked before restart" });
      await store.revokeKey(revoked.id);
      const session = await store.createSession({
        projectId: key.projectId,
        keyId: key.id,
        params: { a: 1 },
      });
      const ended = await store.createSession({ projectId: key.projectId, keyId: key.id });
      await store.endSession(ended.id, 1_800_000_000_000);
      await store.appendAction(session.id, {
        method: "act",
        parameters: { input: "x" },
        result: { success: true },
        timestamp: 5,
        endTime: 9,
        pageUrl: "https://p.test/",
      });
      await store.cachePut(key.projectId, "entry", [1, 2, 3]);
      const replayBefore = await store.getReplay(session.id);
      const keysBefore = await store.listKeys();

      await store.close();
      store = await harness.open();

      expect(await store.verifyKey(key.key)).toEqual({ keyId: key.id, projectId: key.projectId });
      expect(await store.verifyKey(revoked.key)).toBeNull();
      expect(await store.listKeys()).toEqual(keysBefore);
      expect(await store.getSession(session.id)).toMatchObject({ status: "active", params: { a: 1 } });
      expect(await store.getSession(ended.id)).toMatchObject({ status: "ended", endedAt: 1_800_000_000_000 });
      expect(await store.getReplay(session.id)).toStrictEqual(replayBefore);
      expect(await store.cacheGet(key.projectId, "entry")).toEqual([1, 2, 3]);
    });
  });
}
