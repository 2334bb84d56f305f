// `npm run bench -- --only=cluster`: what a hop through another node costs. Two nodes of one
// cluster in this process, on one PostgreSQL (a schema of the run's own; DECKHAND_TEST_DATABASE_URL
// or DATABASE_URL), one session on the first. The same request is sent in turns to the owner
// (direct) and to the other node (forwarded to the owner), and the medians compared:
//
// - an operation answered as JSON: act with an Action (no model) on a small page;
// - the first event of a streamed operation (the same act with x-stream-response), from request to
//   the first bytes of the stream;
// - a CDP round trip on the session's /cdp WebSocket (Browser.getVersion), on a connection opened
//   once to each node.

import crypto from "node:crypto";
import { createLogger, createService, openStore, type Service, type Store } from "@deckhand/server";
import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import pg from "pg";
import WebSocket from "ws";
import { QUIET_ARGS } from "./support/browser.ts";
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

async function startNode(url: string, schema: string, secret: string): Promise<Node> {
  const store = await openStore({ databaseUrl: url, databaseSchema: schema });
  const port = await freePort();
  const service = await createService({
    store,
    logger: createLogger({ level: "silent" }),
    browsers: { args: [...QUIET_ARGS] },
    screenshots: { enabled: false },
    cluster: { advertiseUrl: `http://127.0.0.1:${port}`, secret },
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

export const clusterSuite: Suite = {
  name: "cluster",
  title: "several nodes: added latency of a forwarded operation, first SSE event and CDP round trip",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const url = process.env.DECKHAND_TEST_DATABASE_URL ?? process.env.DATABASE_URL;
    if (!url) {
      output.notes.push("cluster: skipped, no PostgreSQL (set DECKHAND_TEST_DATABASE_URL or DATABASE_URL).");
      return output;
    }
    const schema = `deckhand_bench_cluster_${crypto.randomBytes(4).toString("hex")}`;
    const secret = crypto.randomBytes(32).toString("hex");
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
