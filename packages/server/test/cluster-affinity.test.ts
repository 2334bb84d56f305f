// A project's sessions stay together: placement sends a project's next session to the node that
// already runs its browser, though another node received the start and has a warm browser and as
// much room, so that three nodes hold a project's sessions in one browser process as one node
// would, not in one per node. Only when that node is full does the project spill, to the next best
// node. The project's quota holds across nodes. Three nodes on one real PostgreSQL (a schema of this
// file's own), each with a warm browser, two sessions each, three per project; every start is sent
// straight to a chosen node, and `x-deckhand-owner` says where it went.

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
if (!url) console.warn("Cluster affinity tests skipped: set DECKHAND_TEST_DATABASE_URL.");

const SECRET = crypto.randomBytes(32).toString("hex");

describe.skipIf(!url)("placement keeps a project's sessions on the node that runs its browser", () => {
  const schema = `deckhand_affinity_${crypto.randomBytes(6).toString("hex")}`;
  const marker = `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`;
  const nodes: Node[] = [];
  const keys: CreatedKey[] = [];

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
