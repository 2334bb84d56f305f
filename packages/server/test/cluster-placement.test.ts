// Placement counts what a node can start without launching a browser. Two nodes on one real
// PostgreSQL (a schema of this file's own): `warm` keeps a warm browser (--warm-browsers 1), `cold`
// keeps none. A start received by `cold` for a project new to the cluster goes to `warm`, whose
// warm browser takes it (no launch anywhere), and so does the project's next start, into the room
// of that project's browser there, though `cold` has more free places. The project's quota and the
// cluster's 429 still hold, and a node that has nothing ready still takes what no ready node can.

import crypto from "node:crypto";
import { waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreatedKey } from "../src/store/store.ts";
import {
  type ClusterNode as Node,
  startClusterNode,
  stopCluster,
  untilWarmPublished,
} from "./cluster-node.ts";
import { QUIET_ARGS } from "./live-helpers.ts";

const url = process.env.DECKHAND_TEST_DATABASE_URL;
if (!url) console.warn("Cluster placement tests skipped: set DECKHAND_TEST_DATABASE_URL.");

const SECRET = crypto.randomBytes(32).toString("hex");

describe.skipIf(!url)("placement prefers a node that starts without a browser launch", () => {
  const schema = `deckhand_placement_${crypto.randomBytes(6).toString("hex")}`;
  const marker = `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`;
  let warm: Node;
  let cold: Node;
  const keys: CreatedKey[] = [];

  const startNode = (warmBrowsers: number) =>
    startClusterNode(
      { url: url!, schema, secret: SECRET },
      {
        maxSessions: 2,
        maxSessionsPerProject: 2,
        shutdownGraceMs: 500,
        browsers: { warmBrowsers, args: [...QUIET_ARGS, marker] },
      },
    );

  const startOn = async (node: Node, key: CreatedKey) => {
    const response = await fetch(`${node.url}/v1/sessions/start`, {
      method: "POST",
      headers: { "x-platform-api-key": key.key, "content-type": "application/json" },
      body: "{}",
    });
    const body = (await response.json()) as { code?: string; data?: { sessionId: string } };
    return {
      status: response.status,
      code: body.code,
      id: body.data?.sessionId,
      owner: response.headers.get("x-deckhand-owner"),
    };
  };

  beforeAll(async () => {
    warm = await startNode(1);
    cold = await startNode(0);
    for (const name of ["first", "second", "third"]) keys.push(await warm.store.createKey({ name }));
  }, 120_000);

  afterAll(async () => {
    await stopCluster({ url: url!, schema }, [warm, cold]);
    expect(await waitForNoChrome(marker)).toEqual([]);
  }, 60_000);

  it("sends a new project's first session to the node with a warm browser, and its next into that browser's room; quota and 429 hold", async () => {
    const [project, other, third] = keys as [CreatedKey, CreatedKey, CreatedKey];
    await untilWarmPublished(warm.store, [warm.id]);
    const published = (await cold.store.listLiveNodes()).find((node) => node.id === cold.id);
    expect(published?.ready).toEqual({ anyProject: 0, projects: {} });

    // Received by the node without a warm browser, though it has as much room: the warm one takes it.
    const first = await startOn(cold, project);
    expect(first).toMatchObject({ status: 200, owner: warm.id });
    expect(warm.service.sessions.pool.stats()).toMatchObject({ warmTaken: 1, coldLaunches: 0 });
    // The project's next start: warm has less room left (1 against 2) but its project browser has
    // room (no launch), so it goes there too, wherever it was received.
    const second = await startOn(cold, project);
    expect(second).toMatchObject({ status: 200, owner: warm.id });
    expect(warm.service.sessions.get(second.id!)?.cdp.browser).toBe(
      warm.service.sessions.get(first.id!)?.cdp.browser,
    );
    expect(warm.service.sessions.pool.stats()).toMatchObject({ warmTaken: 1, coldLaunches: 0 });
    // No browser was launched on the cold node for any of it.
    expect(cold.service.sessions.pool.stats()).toMatchObject({ assigned: 0, coldLaunches: 0 });

    // The project's quota is the cluster's: a third is refused though the cold node has room.
    expect(await startOn(warm, project)).toMatchObject({ status: 429, code: "PROJECT_AT_CAPACITY" });
    // The warm node is full: another project's sessions go to the cold node, which launches for them.
    expect(await startOn(warm, other)).toMatchObject({ status: 200, owner: cold.id });
    expect(await startOn(warm, other)).toMatchObject({ status: 200, owner: cold.id });
    expect(cold.service.sessions.pool.stats()).toMatchObject({ coldLaunches: 1 });
    // Every node is full: 429 only now, from either node.
    for (const node of [warm, cold]) {
      expect(await startOn(node, third)).toMatchObject({ status: 429, code: "AT_CAPACITY" });
    }
  }, 120_000);
});
