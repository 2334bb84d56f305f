// `npm run bench -- --only=cluster`: how many sessions three nodes on this machine hold against
// one, with the same memory per session (see sessionsHeld), and what a hop through another node
// costs. Nodes of one cluster in this process, on one PostgreSQL (a schema of each setup's own;
// DECKHAND_TEST_DATABASE_URL or DATABASE_URL). For the hop, two nodes and one session on the
// first: the same request is sent in turns to the owner (direct) and to the other node (forwarded
// to the owner), and the medians compared:
//
// - an operation answered as JSON: act with an Action (no model) on a small page;
// - the first event of a streamed operation (the same act with x-stream-response), from request to
//   the first bytes of the stream;
// - a CDP round trip on the session's /cdp WebSocket (Browser.getVersion), on a connection opened
//   once to each node.

import crypto from "node:crypto";
import { freemem } from "node:os";
import { createLogger, createService, openStore, type Service, type Store } from "@deckhand/server";
import { type FixtureServer, processTree, startFixtureServer } from "@deckhand/testkit";
import pg from "pg";
import WebSocket from "ws";
import { QUIET_ARGS } from "./support/browser.ts";
import { isChromium, pssBytes } from "./support/processes.ts";
import { checkTarget, emptyOutput, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize, timed } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PAGE_HTML =
  "<!doctype html><title>Bench</title><p id=count>0</p>" +
  '<button onclick="count.textContent = Number(count.textContent) + 1">Add one</button>';
const ACTION = {
  selector: "/html/body/button",
  method: "click",
  arguments: [],
  description: "the add button",
};
/** Sessions of one project in the sessions-held figure (a browser holds 8: half full each). */
const PER_PROJECT = 4;
/** The sessions-held figure stops at this much Chromium PSS (or 40 % of the free memory, if less)... */
const HOLD_BUDGET_BYTES = 1536 * 2 ** 20;
/** ... or at this many sessions on one node, to keep the run short. */
const HOLD_CEILING = 48;
/** Targets (issue 19): added latency of a forwarded operation, and of a CDP round trip, medians. */
const OP_ADDED_TARGET_MS = 3;
const CDP_ADDED_TARGET_MS = 1;

interface Node {
  service: Service;
  store: Store;
  url: string;
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function startNode(
  url: string,
  schema: string,
  secret: string,
  limits: { maxSessions?: number; maxSessionsPerProject?: number } = {},
): Promise<Node> {
  const store = await openStore({ databaseUrl: url, databaseSchema: schema });
  const port = await freePort();
  const service = await createService({
    store,
    logger: createLogger({ level: "silent" }),
    browsers: { args: [...QUIET_ARGS] },
    screenshots: { enabled: false },
    cluster: { advertiseUrl: `http://127.0.0.1:${port}`, secret },
    ...limits,
  });
  await service.app.listen({ host: "127.0.0.1", port });
  await service.advertise();
  return { service, store, url: `http://127.0.0.1:${port}` };
}

function post(base: string, key: string, pathname: string, body: unknown, stream = false): Promise<Response> {
  return fetch(`${base}${pathname}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-platform-api-key": key,
      ...(stream ? { "x-stream-response": "true" } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** A CDP client on a WebSocket: one command at a time, its round trip timed. */
async function cdpClient(address: string): Promise<{ roundTrip(): Promise<number>; close(): void }> {
  const ws = new WebSocket(address, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let id = 0;
  return {
    roundTrip: () =>
      new Promise((resolve) => {
        const mine = ++id;
        const started = performance.now();
        const onMessage = (data: WebSocket.RawData) => {
          if ((JSON.parse(String(data)) as { id?: number }).id !== mine) return;
          ws.off("message", onMessage);
          resolve(performance.now() - started);
        };
        ws.on("message", onMessage);
        ws.send(JSON.stringify({ id: mine, method: "Browser.getVersion" }));
      }),
    close: () => ws.close(),
  };
}

/** What one setup (one node, or three) held: sessions started until a 429 or the memory bound. */
interface Held {
  nodes: number;
  maxSessionsEach: number;
  held: number;
  /** What stopped it: a 429's code, or "memory bound". */
  stoppedBy: string;
  /** Chromium PSS of every node's browsers (warm ones included), before any session and at the end (MiB). */
  idleMb: number;
  fullMb: number;
}

/**
 * Starts sessions, PER_PROJECT to a project, sent to the nodes in turns (as a round-robin load
 * balancer would), until one is refused 429 or the nodes' browsers together pass `budgetBytes` of
 * PSS; then ends them all and stops the nodes.
 */
async function holdSessions(
  ctx: SuiteContext,
  url: string,
  secret: string,
  setup: { nodes: number; maxSessionsEach: number; budgetBytes: number },
): Promise<Held> {
  const schema = `deckhand_bench_hold_${crypto.randomBytes(4).toString("hex")}`;
  const nodes: Node[] = [];
  const started: { id: string; key: string }[] = [];
  // Every Chromium under this process is one of these nodes' (the suite's other nodes are closed).
  const browsersPss = () => pssBytes(processTree(process.pid).filter(isChromium));
  try {
    for (let i = 0; i < setup.nodes; i++)
      nodes.push(
        await startNode(url, schema, secret, {
          maxSessions: setup.maxSessionsEach,
          maxSessionsPerProject: PER_PROJECT,
        }),
      );
    // Idle: each node's warm browser up (the pool's own signal), nothing else.
    await Promise.all(nodes.map((node) => node.service.sessions.pool.whenWarm()));
    const idle = browsersPss();
    const keys: string[] = [];
    let stoppedBy = "";
    for (let i = 0; !stoppedBy; i++) {
      if (i % PER_PROJECT === 0) keys.push((await nodes[0]!.store.createKey({ name: `hold ${i}` })).key);
      const key = keys.at(-1)!;
      if (i % 8 === 0) ctx.progress(`cluster: ${setup.nodes} node(s), session ${i + 1}`);
      const response = await post(nodes[i % nodes.length]!.url, key, "/v1/sessions/start", {});
      const body = (await response.json()) as { code?: string; data?: { sessionId: string } };
      if (response.status === 429) stoppedBy = `429 ${body.code}`;
      else if (response.status !== 200) throw new Error(`start answered ${response.status}: ${body.code}`);
      else {
        started.push({ id: body.data!.sessionId, key });
        if (browsersPss() > setup.budgetBytes) stoppedBy = "memory bound";
      }
    }
    return {
      nodes: setup.nodes,
      maxSessionsEach: setup.maxSessionsEach,
      held: started.length,
      stoppedBy,
      idleMb: idle / 2 ** 20,
      fullMb: browsersPss() / 2 ** 20,
    };
  } finally {
    for (const session of started)
      await post(nodes[0]!.url, session.key, `/v1/sessions/${session.id}/end`, {});
    for (const node of nodes) {
      await node.service.app.close();
      await node.store.close();
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

/**
 * Sessions held by one node, then by three on this machine, with the same memory per session:
 * the one node may run up to HOLD_CEILING sessions and stops at the memory budget (its Chromium
 * PSS); three nodes then get a third of what it held each (--max-sessions), so that the two hold
 * the same sessions in the same budget unless the cluster's own cost (two more warm browsers)
 * makes the difference.
 */
async function sessionsHeld(ctx: SuiteContext, url: string, secret: string): Promise<Held[]> {
  const budgetBytes = Math.min(HOLD_BUDGET_BYTES, Math.floor(freemem() * 0.4));
  const one = await holdSessions(ctx, url, secret, { nodes: 1, maxSessionsEach: HOLD_CEILING, budgetBytes });
  const three = await holdSessions(ctx, url, secret, {
    nodes: 3,
    maxSessionsEach: Math.max(1, Math.ceil(one.held / 3)),
    budgetBytes,
  });
  return [one, three];
}

export const clusterSuite: Suite = {
  name: "cluster",
  title:
    "several nodes: sessions held by three nodes against one; added latency of a forwarded operation, first SSE event and CDP round trip",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const url = process.env.DECKHAND_TEST_DATABASE_URL ?? process.env.DATABASE_URL;
    if (!url) {
      output.notes.push("cluster: skipped, no PostgreSQL (set DECKHAND_TEST_DATABASE_URL or DATABASE_URL).");
      return output;
    }
    const schema = `deckhand_bench_cluster_${crypto.randomBytes(4).toString("hex")}`;
    const secret = crypto.randomBytes(32).toString("hex");
    // First, while no other node of the suite runs: every Chromium under this process is theirs.
    const held = await sessionsHeld(ctx, url, secret);
    output.tables.push({
      title: "Sessions held on this machine: one node, then three, with the same memory per session",
      columns: [
        "nodes",
        "--max-sessions each",
        "sessions held",
        "stopped by",
        "browsers idle MiB",
        "browsers full MiB",
        "MiB per session",
      ],
      rows: held.map((h) => [
        String(h.nodes),
        String(h.maxSessionsEach),
        String(h.held),
        h.stoppedBy,
        h.idleMb.toFixed(0),
        h.fullMb.toFixed(0),
        (h.fullMb / h.held).toFixed(1),
      ]),
      notes: [
        `Sessions of ${PER_PROJECT} to a project, sent to the nodes in turns; Chromium PSS of every node's browsers`,
        `  (warm ones included), bound ${(Math.min(HOLD_BUDGET_BYTES, Math.floor(freemem() * 0.4)) / 2 ** 20).toFixed(0)} MiB (${HOLD_BUDGET_BYTES / 2 ** 20} MiB, or 40 % of the free memory if less).`,
        `  One node may take ${HOLD_CEILING} sessions and stops at the bound; the three get a third of what it held each.`,
        "  MiB per session: the browsers' PSS at the end over the sessions held (the nodes' own Node.js is one process here).",
      ],
    });
    const site: FixtureServer = await startFixtureServer();
    site.route("/bench-cluster.html", (_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(PAGE_HTML);
    });
    const nodes: Node[] = [];
    try {
      nodes.push(await startNode(url, schema, secret), await startNode(url, schema, secret));
      const [owner, other] = nodes as [Node, Node];
      const key = await owner.store.createKey({ name: "bench" });
      const started = await (await post(owner.url, key.key, "/v1/sessions/start", {})).json();
      const id = (started as { data: { sessionId: string } }).data.sessionId;
      const path = (name: string) => `/v1/sessions/${id}/${name}`;
      const ok = async (response: Response) => {
        const text = await response.text();
        if (!response.ok) throw new Error(`answered ${response.status}: ${text}`);
      };
      await ok(await post(owner.url, key.key, path("navigate"), { url: site.url("bench-cluster.html") }));
      const samples = {
        op: { direct: [] as number[], forwarded: [] as number[] },
        firstEvent: { direct: [] as number[], forwarded: [] as number[] },
        cdp: { direct: [] as number[], forwarded: [] as number[] },
      };
      const reps = ctx.reps(60, 12);
      // Warm-up: connections, compiled code, the hop's keep-alive pool.
      for (const node of nodes) {
        await ok(await post(node.url, key.key, path("act"), { input: ACTION }));
        await (await post(node.url, key.key, path("act"), { input: ACTION }, true)).text();
      }
      for (let i = 0; i < reps; i++) {
        if (i % 10 === 0) ctx.progress(`cluster: operations ${i + 1}/${reps}`);
        for (const [label, node] of [
          ["direct", owner],
          ["forwarded", other],
        ] as const) {
          samples.op[label].push(
            (await timed(async () => ok(await post(node.url, key.key, path("act"), { input: ACTION })))).ms,
          );
          const t0 = performance.now();
          const response = await post(node.url, key.key, path("act"), { input: ACTION }, true);
          const reader = response.body!.getReader();
          await reader.read();
          samples.firstEvent[label].push(performance.now() - t0);
          while (!(await reader.read()).done) {}
        }
      }
      const clients = {
        direct: await cdpClient(`${owner.url.replace("http", "ws")}${path("cdp")}?apiKey=${key.key}`),
        forwarded: await cdpClient(`${other.url.replace("http", "ws")}${path("cdp")}?apiKey=${key.key}`),
      };
      for (const client of Object.values(clients)) for (let i = 0; i < 20; i++) await client.roundTrip();
      const cdpReps = ctx.reps(500, 100);
      ctx.progress(`cluster: ${cdpReps} CDP round trips each way`);
      for (let i = 0; i < cdpReps; i++) {
        samples.cdp.direct.push(await clients.direct.roundTrip());
        samples.cdp.forwarded.push(await clients.forwarded.roundTrip());
      }
      for (const client of Object.values(clients)) client.close();
      await ok(await post(other.url, key.key, path("end"), {}));

      const rows = (["op", "firstEvent", "cdp"] as const).map((what) => {
        const direct = summarize(samples[what].direct);
        const forwarded = summarize(samples[what].forwarded);
        return { what, direct, forwarded, added: forwarded.median - direct.median };
      });
      const label = {
        op: "act (an Action), JSON answer",
        firstEvent: "first event of a streamed act",
        cdp: "CDP round trip (Browser.getVersion)",
      };
      output.tables.push({
        title: "A request sent to the owner (direct) and to another node (forwarded), in turns",
        columns: [
          "what",
          "direct median",
          "direct p95",
          "forwarded median",
          "forwarded p95",
          "added (median)",
        ],
        rows: rows.map((row) => [
          label[row.what],
          fmtMs(row.direct.median),
          fmtMs(row.direct.p95),
          fmtMs(row.forwarded.median),
          fmtMs(row.forwarded.p95),
          fmtMs(row.added),
        ]),
        notes: [
          `${reps} operations and ${cdpReps} CDP round trips each way; two nodes in one process on loopback, one PostgreSQL.`,
          "Forwarded: the other node authenticates the key, reads the session's owner from the store, and " +
            "streams the owner's answer back (undici); the CDP WebSocket is joined socket to socket.",
        ],
      });
      const byWhat = Object.fromEntries(rows.map((row) => [row.what, row]));
      output.targets.push(
        checkTarget("forwarded operation: added median", byWhat.op!.added, "ms", "<=", OP_ADDED_TARGET_MS),
        checkTarget(
          "forwarded CDP round trip: added median",
          byWhat.cdp!.added,
          "ms",
          "<=",
          CDP_ADDED_TARGET_MS,
        ),
      );
      output.figures = { samples, rows };
      return output;
    } finally {
      for (const node of nodes) {
        await node.service.app.close();
        await node.store.close();
      }
      await site.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  },
};
