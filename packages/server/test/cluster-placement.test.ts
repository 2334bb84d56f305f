// Placement counts what a node can start without launching a browser, and keeps a project's
// sessions together. Nodes on one real PostgreSQL (a schema of each describe's own).
//
// Two nodes: `warm` keeps a warm browser (--warm-browsers 1), `cold` keeps none. A start received
// by `cold` for a project new to the cluster goes to `warm`, whose warm browser takes it (no launch
// anywhere), and so does the project's next start, into the room of that project's browser there,
// though `cold` has more free places. The project's quota and the cluster's 429 still hold, and a
// node that has nothing ready still takes what no ready node can.
//
// Three nodes, each with a warm browser: a project's next session goes to the node that already
// runs its browser, though another node received the start and has a warm browser and as much
// room, so that three nodes hold a project's sessions in one browser process as one node would,
// not in one per node. Only when that node is full does the project spill, to the next best node.

import crypto from "node:crypto";
import { waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { affinity } from "../src/cluster/cluster.ts";
import type { CreatedKey, ClusterNode as StoredNode } from "../src/store/store.ts";
import {
  type ClusterNode as Node,
  startClusterNode,
  startOn,
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

describe.skipIf(!url)("placement keeps a project's sessions on the node that runs its browser", () => {
  const schema = `deckhand_affinity_${crypto.randomBytes(6).toString("hex")}`;
  const marker = `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`;
  const nodes: Node[] = [];
  const keys: CreatedKey[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++)
      nodes.push(
        await startClusterNode(
          { url: url!, schema, secret: SECRET },
          {
            maxSessions: 2,
            maxSessionsPerProject: 3,
            shutdownGraceMs: 500,
            browsers: { warmBrowsers: 1, args: [...QUIET_ARGS, marker] },
          },
        ),
      );
    for (const name of ["p", "q", "r"]) keys.push(await nodes[0]!.store.createKey({ name }));
  }, 120_000);

  afterAll(async () => {
    await stopCluster({ url: url!, schema }, nodes);
    expect(await waitForNoChrome(marker)).toEqual([]);
  }, 60_000);

  it("sends a project's next session to its browser's node wherever the start lands, spills only when that node is full; quota holds", async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    const [p, q, r] = keys as [CreatedKey, CreatedKey, CreatedKey];
    // Every node has a warm browser and as much room: each start below could go anywhere.
    await untilWarmPublished(
      a.store,
      nodes.map((node) => node.id),
    );
    const browserOf = (node: Node, id: string | undefined) => node.service.sessions.get(id!)?.cdp.browser;

    const first = await startOn(a, p);
    expect(first).toMatchObject({ status: 200, owner: a.id });
    // Received by b, which has a warm browser and more room than a: it goes to a, into the
    // browser of the first session, and b launches nothing and gives away no warm browser.
    const second = await startOn(b, p);
    expect(second).toMatchObject({ status: 200, owner: a.id });
    expect(browserOf(a, second.id)).toBe(browserOf(a, first.id));
    expect(a.service.sessions.pool.stats()).toMatchObject({ assigned: 1, warmTaken: 1, coldLaunches: 0 });
    for (const node of [b, c]) expect(node.service.sessions.pool.stats()).toMatchObject({ assigned: 0 });

    // a is full (--max-sessions 2): the project spills, to the node that received the start (b
    // and c are equals: a warm browser and two places each).
    const third = await startOn(c, p);
    expect(third).toMatchObject({ status: 200, owner: c.id });
    // The project's quota (3) is the cluster's: refused though b has room.
    expect(await startOn(b, p)).toMatchObject({ status: 429, code: "PROJECT_AT_CAPACITY" });

    // Another project, received by the full node a: b has the most room.
    const q1 = await startOn(a, q);
    expect(q1).toMatchObject({ status: 200, owner: b.id });
    // Its next, received by c, which has a place of its own: it joins q's browser on b.
    const q2 = await startOn(c, q);
    expect(q2).toMatchObject({ status: 200, owner: b.id });
    expect(browserOf(b, q2.id)).toBe(browserOf(b, q1.id));
    // b is full now: the last place in the cluster is c's.
    expect(await startOn(b, q)).toMatchObject({ status: 200, owner: c.id });
    // Every node is full: 429 only now.
    expect(await startOn(a, r)).toMatchObject({ status: 429, code: "AT_CAPACITY" });

    // One browser per project and node it runs on: p on a and c, q on b and c.
    expect(nodes.map((node) => node.service.sessions.pool.stats().assigned)).toEqual([1, 1, 2]);
    const owners = await Promise.all(
      [first, second, third].map(async (s) => (await a.store.getSession(s.id!))?.nodeId),
    );
    expect(owners).toEqual([a.id, a.id, c.id]);
  }, 120_000);
});

describe("the order of placement steps (affinity)", () => {
  const node = (over: Partial<StoredNode>): StoredNode => ({
    id: "n",
    live: true,
    draining: false,
    activeSessions: 0,
    ...over,
  });
  const ready = (anyProject: number, projects: Record<string, number> = {}) => ({ anyProject, projects });

  it("ranks room in the project's browser, then its sessions, then a warm browser; under --isolation session only the warm browser", () => {
    const roomInItsBrowser = node({ ready: ready(0, { p: 3 }), projectSessions: 1 });
    const runsItsSessions = node({ ready: ready(0), projectSessions: 2 });
    const warm = node({ ready: ready(8, { other: 5 }), projectSessions: 0 });
    const nothing = node({ ready: ready(0, { other: 5 }), projectSessions: 0 });
    expect([roomInItsBrowser, runsItsSessions, warm, nothing].map((n) => affinity(n, "p", 2, true))).toEqual([
      3, 2, 1, 0,
    ]);
    // Sessions of a project never share a browser (and a node publishes no room in one): being
    // where the project runs is worth nothing.
    expect([runsItsSessions, warm, nothing].map((n) => affinity(n, "p", 2, false))).toEqual([0, 1, 0]);
    // A node without free capacity is no place at all (placement drops it).
    expect(affinity(roomInItsBrowser, "p", 0, true)).toBe(0);
  });
});
