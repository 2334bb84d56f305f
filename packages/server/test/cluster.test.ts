// Three service nodes on one real PostgreSQL (a schema of this file's own) behind a real nginx,
// round-robin with no affinity: any node serves any session. A REMOTE client (the library itself)
// runs a whole session through nginx, and nginx's access log (which records the node each request
// reached and the owner that node named) shows requests landing on nodes that do not own the session
// and being served. Placement spills new sessions to the nodes with room, a project's quota holds
// across nodes, and the internal path refuses forged, missing and replayed signatures and another
// project's session. An owner that cannot be reached while its lease is live answers 503 with
// Retry-After and changes nothing.

import crypto from "node:crypto";
import {
  type FixtureServer,
  match,
  type ScriptedModel,
  ScriptedReply,
  type ScriptedRequest,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Deckhand } from "deckhand";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { z } from "zod";
import { ClusterTrust } from "../src/cluster/trust.ts";
import type { Service } from "../src/service.ts";
import type { PostgresStore } from "../src/store/postgres-store.ts";
import type { CreatedKey } from "../src/store/store.ts";
import { startClusterNode, stopCluster, untilWarmPublished } from "./cluster-node.ts";
import { QUIET_ARGS } from "./live-helpers.ts";
import { freePort, NGINX, type Nginx, startNginx } from "./nginx.ts";

const url = process.env.DECKHAND_TEST_DATABASE_URL;
if (!url) console.warn("Cluster tests skipped: set DECKHAND_TEST_DATABASE_URL.");
if (!NGINX) console.warn("Cluster tests skipped: nginx is not installed (node scripts/setup.mjs --tests).");

const SECRET = crypto.randomBytes(32).toString("hex");
const MODEL_KEY = "sk-test-cluster-0123456789";

interface Node {
  name: string;
  service: Service;
  store: PostgresStore;
  url: string;
  id: string;
}

describe.skipIf(!url || !NGINX)("three nodes behind nginx", () => {
  const schema = `deckhand_cluster_${crypto.randomBytes(6).toString("hex")}`;
  const marker = `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`;
  const nodes: Node[] = [];
  let nginx: Nginx;
  let site: FixtureServer;
  let model: ScriptedModel;
  let key: CreatedKey;
  let otherKey: CreatedKey;

  const startNode = async (name: string): Promise<Node> => ({
    name,
    ...(await startClusterNode(
      { url: url!, schema, secret: SECRET },
      {
        // One session per node, two per project: the spill and the quota show with few browsers.
        maxSessions: 1,
        maxSessionsPerProject: 2,
        shutdownGraceMs: 500,
        // Small, so that the hop's test of the owner's limit sends little.
        cdpMaxMessageBytes: 256 * 1024,
        browsers: { lingerMs: 500, args: [...QUIET_ARGS, marker] },
      },
    )),
  });
  const byId = (id: string) => nodes.find((node) => node.id === id);

  const call = (
    base: string,
    pathname: string,
    init: { json?: unknown; key?: string; headers?: Record<string, string> } = {},
  ) =>
    fetch(`${base}${pathname}`, {
      method: init.json === undefined ? "GET" : "POST",
      headers: {
        "x-platform-api-key": init.key ?? key.key,
        ...(init.json !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });

  const startOn = async (base: string, k = key.key) => {
    const response = await call(base, "/v1/sessions/start", { json: {}, key: k });
    const text = await response.text();
    return {
      status: response.status,
      code: response.status === 200 ? undefined : (JSON.parse(text) as { code: string }).code,
      id: response.status === 200 ? (JSON.parse(text).data.sessionId as string) : undefined,
      node: response.headers.get("x-deckhand-node"),
      owner: response.headers.get("x-deckhand-owner"),
    };
  };

  beforeAll(async () => {
    [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
    for (const name of ["a", "b", "c"]) nodes.push(await startNode(name));
    key = await nodes[0]!.store.createKey({ name: "cluster" });
    otherKey = await nodes[0]!.store.createKey({ name: "other project" });
    nginx = await startNginx(nodes.map((node) => node.url.replace("http://", "")));
  }, 120_000);

  /**
   * A start received by `node` stays there when every node can start it without a launch and has
   * as much room (placement prefers a node with a warm browser) and none runs the project's browser
   * (placement prefers that one even more): once every warm browser is up, and the project's
   * browsers of the earlier tests have closed (they linger 500 ms after their last session).
   */
  const startHere = async (node: Node) => {
    await untilWarmPublished(
      node.store,
      nodes.map((n) => n.id),
      key.projectId,
    );
    return startOn(node.url);
  };

  afterAll(async () => {
    await nginx?.close();
    await stopCluster({ url: url!, schema }, nodes);
    await Promise.all([site?.close(), model?.close()]);
    expect(await waitForNoChrome(marker)).toEqual([]);
  }, 60_000);

  it("places a new session on the node with room, the receiving node first among equals; quota and capacity hold across nodes", async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    // Every node has room (and a warm browser): the node that received the start takes it (no hop).
    const first = await startHere(a);
    expect(first).toMatchObject({ status: 200, node: a.id, owner: a.id });
    // a is full: the start received by a goes to another node, and the answer says which.
    const second = await startOn(a.url);
    expect(second.status).toBe(200);
    expect(second.node).toBe(a.id);
    expect([b.id, c.id]).toContain(second.owner);
    expect((await a.store.getSession(second.id!))?.nodeId).toBe(second.owner);
    // The project has its two sessions (on two nodes): a third is refused though c has room.
    expect(await startOn(a.url)).toMatchObject({ status: 429, code: "PROJECT_AT_CAPACITY" });
    // Another project gets the last place, wherever the start lands...
    const third = await startOn(c.url, otherKey.key);
    expect(third.status).toBe(200);
    expect(new Set([first.owner, second.owner, third.owner]).size).toBe(3);
    // ... and then the cluster is full: 429 only now.
    expect(await startOn(b.url, otherKey.key)).toMatchObject({ status: 429, code: "AT_CAPACITY" });
    // --isolation project: each project's sessions in browsers of its own, on every node.
    for (const started of [first, second, third]) {
      const owner = byId(started.owner!)!;
      const live = owner.service.sessions.get(started.id!)!;
      expect(live.projectId).toBe(started === third ? otherKey.projectId : key.projectId);
    }
    for (const started of [first, second, third]) {
      const k = started === third ? otherKey.key : key.key;
      // Ended through nginx: wherever the request lands, the owner ends it.
      expect((await call(nginx.url, `/v1/sessions/${started.id}/end`, { json: {}, key: k })).status).toBe(
        200,
      );
    }
  }, 120_000);

  it("refuses forged, missing and replayed cluster signatures, and another project's session on the internal path", async () => {
    const [a] = nodes as [Node];
    const started = await startHere(a);
    expect(started.owner).toBe(a.id);
    const path = `/v1/sessions/${started.id}/extract`;
    const send = (headers: Record<string, string>) =>
      fetch(`${a.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const mine = { projectId: key.projectId, keyId: key.id };
    const theirs = { projectId: otherKey.projectId, keyId: otherKey.id };
    const sign = (secret: string, identity = mine, to = a.id, p = path) =>
      new ClusterTrust(secret, "node-of-the-test").sign(to, "POST", p, { identity, placed: false });

    // No API key and a claim signed with another secret: refused, nothing served.
    const forged = await send(sign(crypto.randomBytes(32).toString("hex")));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ code: "CLUSTER_UNAUTHORIZED" });
    // The claim without its signature.
    const { "x-deckhand-cluster": claimOnly } = sign(SECRET);
    const unsigned = await send({ "x-deckhand-cluster": claimOnly! });
    expect(unsigned.status).toBe(401);
    // A valid key does not make a forged claim pass either.
    expect((await send({ ...sign("x".repeat(64)), "x-platform-api-key": key.key })).status).toBe(401);
    // Signed for another node, or for another path.
    expect((await send(sign(SECRET, mine, nodes[1]!.id))).status).toBe(401);
    expect((await send(sign(SECRET, mine, a.id, `/v1/sessions/${started.id}/act`))).status).toBe(401);

    // The CDP WebSocket, the same: a forged claim opens nothing, even for a session of its project.
    const cdpPath = `/v1/sessions/${started.id}/cdp`;
    const cdpClaim = (secret: string) =>
      new ClusterTrust(secret, "node-of-the-test").sign(a.id, "GET", cdpPath, {
        identity: mine,
        placed: false,
      });
    expect(await upgradeStatus(`${a.url.replace("http", "ws")}${cdpPath}`, cdpClaim("y".repeat(64)))).toBe(
      401,
    );
    expect(await upgradeStatus(`${a.url.replace("http", "ws")}${cdpPath}`, cdpClaim(SECRET))).toBe(101);

    // Correctly signed: served, once.
    const good = sign(SECRET);
    const served = await send(good);
    expect(served.status).toBe(200);
    expect((await served.json()).data.result.pageText).toBeTypeOf("string");
    const replayed = await send(good);
    expect(replayed.status).toBe(401);
    expect((await replayed.json()).message).toContain("already used");

    // Correctly signed, for another project: the owner checks the session's project as for any caller.
    const foreign = await send(sign(SECRET, theirs));
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ code: "SESSION_NOT_FOUND" });
    // A revoked key's identity is refused even when signed.
    const revoked = await a.store.createKey({ projectId: key.projectId, name: "revoked" });
    await a.store.revokeKey(revoked.id);
    expect((await send(sign(SECRET, { projectId: key.projectId, keyId: revoked.id }))).status).toBe(401);

    expect((await call(a.url, `/v1/sessions/${started.id}/end`, { json: {} })).status).toBe(200);
  }, 60_000);

  it("answers 503 with Retry-After, changing nothing, when a live-leased owner cannot be reached", async () => {
    const [a] = nodes as [Node];
    // A node whose lease is live but which nothing answers for (killed a moment ago).
    const ghost = `ghost-${crypto.randomBytes(4).toString("hex")}`;
    await a.store.registerNode(ghost, 60_000, {
      advertiseUrl: `http://127.0.0.1:${await freePort()}`,
      maxSessions: 0,
    });
    const session = await a.store.createSession({ projectId: key.projectId, keyId: key.id, nodeId: ghost });
    try {
      const answer = await call(a.url, `/v1/sessions/${session.id}/extract`, { json: {} });
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(await answer.json()).toMatchObject({ code: "OWNER_UNREACHABLE" });
      // The CDP WebSocket too.
      expect(
        await upgradeStatus(`${a.url.replace("http", "ws")}/v1/sessions/${session.id}/cdp?apiKey=${key.key}`),
      ).toBe(503);
      expect((await a.store.getSession(session.id))?.status).toBe("active");
    } finally {
      await a.store.removeNode(ghost);
      await a.store.endSession(session.id);
    }
  }, 60_000);

  it("streams a forwarded operation event by event, and a client that goes away cancels it at the owner", async () => {
    const [a, b] = nodes as [Node, Node];
    const started = await startHere(a);
    expect(started.owner).toBe(a.id);
    // A page that never answers: the navigation runs until it is cancelled.
    let arrived!: () => void;
    let closed!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    const abandoned = new Promise<void>((resolve) => (closed = resolve));
    const unroute = site.route("/hangs", (req) => {
      arrived();
      req.socket.once("close", () => closed());
    });
    try {
      const abort = new AbortController();
      // Sent to b, which does not run the session.
      const response = await fetch(`${b.url}/v1/sessions/${started.id}/navigate`, {
        method: "POST",
        headers: {
          "x-platform-api-key": key.key,
          "content-type": "application/json",
          "x-stream-response": "true",
        },
        body: JSON.stringify({ url: site.url("/hangs") }),
        signal: abort.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-deckhand-node")).toBe(b.id);
      expect(response.headers.get("x-deckhand-owner")).toBe(a.id);
      // The first events arrive while the operation still runs (nothing waits for the end).
      const reader = response.body!.getReader();
      let text = "";
      while (!text.includes('"running"')) text += new TextDecoder().decode((await reader.read()).value);
      await requested;
      // The client hangs up: the hop closes, the owner cancels, and the browser stops loading the page.
      abort.abort();
      await abandoned;
    } finally {
      unroute();
    }
    // The session goes on, reached through any node.
    const next = await call(nodes[2]!.url, `/v1/sessions/${started.id}/extract`, { json: {} });
    expect(next.status).toBe(200);
    expect((await call(b.url, `/v1/sessions/${started.id}/end`, { json: {} })).status).toBe(200);
  }, 60_000);

  it("routes an MCP session through nginx: its id names its node, and every node forwards to it", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), {
      requestInit: { headers: { "x-platform-api-key": key.key } },
    });
    const client = new Client({ name: "deckhand-cluster-test", version: "1.0.0" });
    await client.connect(transport);
    const before = nginx.log().length;
    try {
      const holder = transport.sessionId!.split(".")[0]!;
      expect(nodes.map((node) => node.id)).toContain(holder);
      const text = (content: unknown) =>
        (content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
      // Several calls in a row: round-robin sends most of them to nodes that do not hold the session.
      for (let i = 0; i < 3; i++) {
        const nav = await client.callTool({ name: "navigate", arguments: { url: site.url("index.html") } });
        expect(nav.isError, text(nav.content)).toBeFalsy();
        const outline = await client.callTool({ name: "text", arguments: {} });
        expect(text(outline.content)).toContain("button: Increment");
      }
      // Another project's key naming the session: 404, on whichever node it lands.
      for (let i = 0; i < 3; i++) {
        const foreign = await fetch(`${nginx.url}/mcp`, {
          method: "POST",
          headers: {
            "x-platform-api-key": otherKey.key,
            "mcp-session-id": transport.sessionId!,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/list" }),
        });
        expect(foreign.status).toBe(404);
      }
      const forwarded = nginx
        .log()
        .slice(before)
        .filter((line) => line.uri === "/mcp" && line.method === "POST" && line.status === 200);
      expect(
        forwarded.filter((line) => line.node !== holder && line.owner === holder).length,
      ).toBeGreaterThanOrEqual(1);
    } finally {
      // Ended (DELETE, routed to its node like the rest), not only left: its browser session would
      // otherwise stay until the MCP idle timeout, and draw the project's next sessions to its node.
      await transport.terminateSession();
      await client.close();
    }
  }, 120_000);

  it("holds a forwarded CDP WebSocket to the owner's allow-list and message size limit", async () => {
    const [a, b] = nodes as [Node, Node];
    const started = await startHere(a);
    expect(started.owner).toBe(a.id);
    // Opened on b, which forwards it to a.
    const ws = new WebSocket(`${b.url.replace("http", "ws")}/v1/sessions/${started.id}/cdp`, {
      headers: { "x-platform-api-key": key.key },
      maxPayload: 0,
    });
    const upgraded = new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      ws.once("upgrade", (response) => resolve(response.headers));
      ws.once("error", reject);
    });
    const opened = new Promise((resolve) => ws.once("open", resolve));
    const headers = await upgraded;
    expect(headers["x-deckhand-node"]).toBe(b.id);
    expect(headers["x-deckhand-owner"]).toBe(a.id);
    await opened;
    const answers = new Map<number, { result?: unknown; error?: { message: string } }>();
    const waiters = new Map<number, () => void>();
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id === undefined) return;
      answers.set(message.id, message);
      waiters.get(message.id)?.();
    });
    const send = (id: number, method: string, params: object = {}) =>
      new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
        waiters.set(id, () => resolve(answers.get(id)!));
        ws.send(JSON.stringify({ id, method, params }));
      });
    // Allowed: answered by the browser, through both hops.
    expect((await send(1, "Browser.getVersion")).result).toMatchObject({ product: expect.any(String) });
    // Not on the allow-list: refused by the owner's proxy, as for a direct client.
    const refused = await send(2, "Browser.close");
    expect(refused.error).toBeDefined();
    expect(refused.result).toBeUndefined();
    // Larger than the owner's limit: the owner closes the connection (1009), and the hop with it.
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    ws.send(
      JSON.stringify({ id: 3, method: "Runtime.evaluate", params: { expression: "x".repeat(300 * 1024) } }),
    );
    expect(await closed).toBe(1009);
    // The session is still there, served through any node.
    expect((await call(nodes[2]!.url, `/v1/sessions/${started.id}/extract`, { json: {} })).status).toBe(200);
    expect((await call(a.url, `/v1/sessions/${started.id}/end`, { json: {} })).status).toBe(200);
  }, 60_000);

  it("runs a whole session through nginx for a REMOTE client: every request is served wherever it lands", async () => {
    model.on(match.schemaName("act"), (request: ScriptedRequest) => ({
      elementId: Number(/\[(\d+)\] button: Increment/.exec(request.text)?.[1] ?? -1),
      method: "click",
      arguments: [],
      description: "click Increment",
      completed: true,
    }));
    model.on(match.schemaName("extract"), { count: 1 });
    model.on(match.schemaName("observe"), (request: ScriptedRequest) => ({
      elements: [
        {
          elementId: Number(/\[(\d+)\] button: Increment/.exec(request.text)?.[1] ?? -1),
          description: "the Increment button",
        },
      ],
    }));
    model.on(
      (r: ScriptedRequest) => r.tools.some((t) => t.name === "done"),
      () =>
        ScriptedReply.toolCalls({
          name: "done",
          arguments: { reasoning: "nothing to do", taskComplete: true },
        }),
    );
    model.on(match.schemaProperty("goalReached"), { goalReached: true, evidence: "shown" });

    const dh = new Deckhand({
      env: "REMOTE",
      apiKey: key.key,
      apiUrl: nginx.url,
      verbose: 0,
      disablePino: true,
      model: { modelName: "openai/gpt-4.1-mini", apiKey: MODEL_KEY, baseURL: model.baseURL },
      explicitInstructions: false,
    });
    await dh.init();
    try {
      const id = dh.sessionId!;
      const owner = (await nodes[0]!.store.getSession(id))!.nodeId!;
      await dh.page.goto(site.url("index.html"));
      // Three of each in a row: round-robin sends at least two of every three to non-owners.
      for (let i = 0; i < 3; i++) expect((await dh.act("click increment")).success).toBe(true);
      expect(await dh.page.locator("#count").textContent()).toBe("3");
      for (let i = 0; i < 3; i++)
        expect(
          await dh.extract("the count", z.object({ count: z.number() }), { serverCache: false }),
        ).toMatchObject({ count: 1 });
      for (let i = 0; i < 3; i++)
        expect((await dh.observe("find the increment button", { serverCache: false }))[0]?.description).toBe(
          "the Increment button",
        );
      for (let i = 0; i < 3; i++) {
        const result = await dh.agent().execute({ instruction: "say done", maxSteps: 3 });
        expect(result.completed).toBe(true);
      }
      // The replay, read through nginx, has every operation (from the shared store).
      const replay = (await (await call(nginx.url, `/v1/sessions/${id}/replay`)).json()) as {
        data: { pages: { actions: { method: string }[] }[] };
      };
      const methods = replay.data.pages.flatMap((page) => page.actions.map((action) => action.method));
      expect(methods.filter((m) => m === "act")).toHaveLength(3);
      expect(methods.filter((m) => m === "agentExecute")).toHaveLength(3);

      // Playwright on the session's cdpUrl (nginx's address), three times: at least two of them
      // joined through a node that does not run the session.
      const resumed = (await (
        await call(nginx.url, "/v1/sessions/start", { json: { sessionId: id } })
      ).json()) as {
        data: { cdpUrl: string; sessionUrl: string; debugUrl: string };
      };
      expect(new URL(resumed.data.cdpUrl).host).toBe(new URL(nginx.url).host);
      for (let i = 0; i < 3; i++) {
        const browser = await chromium.connectOverCDP(resumed.data.cdpUrl);
        try {
          const pages = browser.contexts().flatMap((context) => context.pages());
          expect(await pages[0]!.evaluate(() => document.querySelector("#count")?.textContent)).toBe("3");
        } finally {
          await browser.close();
        }
      }

      // The session page: served by the owner (it has the live view), three times.
      for (let i = 0; i < 3; i++) {
        const page = await fetch(resumed.data.sessionUrl);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain("view/live");
      }
      // The DevTools link: a redirect to the front end, whose WebSocket reaches the page.
      for (let i = 0; i < 3; i++) {
        const debug = await fetch(resumed.data.debugUrl, { redirect: "manual" });
        expect(debug.status).toBe(302);
        const ws = new URL(debug.headers.get("location")!, nginx.url).searchParams.get("ws")!;
        expect(ws.startsWith(new URL(nginx.url).host)).toBe(true);
        expect(await evaluateOverDevtools(`ws://${ws}`, "document.querySelector('#count').textContent")).toBe(
          "3",
        );
      }
      await dh.close();

      const lines = nginx.log().filter((line) => line.uri.includes(id));
      const landed = (what: RegExp, status: number) =>
        lines.filter((line) => what.test(`${line.method} ${line.uri}`) && line.status === status);
      for (const [what, status] of [
        [/POST .*\/act$/, 200],
        [/POST .*\/extract$/, 200],
        [/POST .*\/observe$/, 200],
        [/POST .*\/agentExecute$/, 200],
        [/GET .*\/cdp$/, 101],
        [/GET .*\/view$/, 200],
        [/GET .*\/debug$/, 302],
        [/GET .*\/devtools$/, 101],
      ] as const) {
        const served = landed(what, status);
        // Every one named the owner, and some were served by a node that is not it.
        expect(served.length, `${what}`).toBeGreaterThanOrEqual(3);
        expect(new Set(served.map((line) => line.owner)), `${what}`).toEqual(new Set([owner]));
        expect(served.filter((line) => line.node !== owner).length, `${what}`).toBeGreaterThanOrEqual(1);
      }
      expect((await nodes[0]!.store.getSession(id))?.status).toBe("ended");
    } finally {
      await dh.close().catch(() => undefined);
      model.clear();
    }
  }, 240_000);
});

/** The HTTP status a WebSocket upgrade is answered with (101 when it opened). */
function upgradeStatus(address: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(address, { headers });
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    ws.once("error", (error) => {
      if (!String(error.message).includes("Unexpected server response")) reject(error);
    });
  });
}

/** What a DevTools front end would get: Runtime.evaluate on the page, over the debugger's WebSocket. */
function evaluateOverDevtools(address: string, expression: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(address);
    ws.once("error", reject);
    ws.once("open", () =>
      ws.send(
        JSON.stringify({ id: 1, method: "Runtime.evaluate", params: { expression, returnByValue: true } }),
      ),
    );
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: { result?: { value?: unknown } } };
      if (message.id !== 1) return;
      ws.close();
      resolve(message.result?.result?.value);
    });
  });
}
