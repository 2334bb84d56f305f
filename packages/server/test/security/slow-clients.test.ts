// Slow and numerous clients (issue 18): sockets that send their request headers a byte at a time,
// and event-stream POSTs that announce a 100 KB body and trickle it, are answered 408 and closed by
// the header and request timeouts while a bystander keeps being answered; each is logged once, at
// debug level. One address gets at most --max-connections-per-address connections; the next is
// answered 429 and closed, and a client of another address, or one under the limit, is served.
// Beside another project's real session (real Chromium), a thousand of each delay none of its
// requests by seconds, end nothing of it, and leave no memory held once they are gone.

import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { addressKey } from "../../src/connections.ts";
import { ServiceMetrics } from "../../src/metrics.ts";
import { startService, type TestService } from "../helpers.ts";
import { eventually, ok, startFixtures, startLiveService } from "../live-helpers.ts";
import { expectMemoryBack, percentile, pollLatencies, settled } from "./bystander.ts";
import { rawRequest } from "./raw-http.ts";

let svc: TestService | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await svc?.close();
  svc = undefined;
});

interface SlowClient {
  socket: net.Socket;
  /** The client's own port: how the service's log names it. */
  port: number;
  received: string;
  closed: Promise<void>;
}

/** A client that sends `first`, then one byte of `drip` every `everyMs` for as long as it is open. */
function slowClient(url: string, first: string, drip: string, everyMs: number): Promise<SlowClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    sockets.push(socket);
    const client: SlowClient = {
      socket,
      port: 0,
      received: "",
      closed: new Promise((done) => socket.once("close", () => done())),
    };
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (chunk) => {
      client.received += chunk.toString("utf8");
    });
    socket.on("error", () => undefined);
    socket.once("close", () => clearInterval(timer));
    socket.once("connect", () => {
      client.port = socket.localPort!;
      socket.write(first);
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(drip);
      }, everyMs);
      resolve(client);
    });
    socket.once("error", reject);
  });
}

/** Log lines that name this client (by its port). */
function linesOf(service: TestService, client: SlowClient) {
  return service.logs().filter((line) => line.remotePort === client.port);
}

describe("slow clients", () => {
  it("slow headers and trickling bodies are closed by the timeouts; a bystander is answered meanwhile", async () => {
    const metrics = new ServiceMetrics();
    // The per-address limit has its own test: here all 300 come from 127.0.0.1.
    svc = await startService({
      headersTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
      maxConnectionsPerAddress: 0,
      metrics,
    });
    const session = await svc.session();
    const opened = Date.now();
    const headerClients = await Promise.all(
      Array.from({ length: 150 }, () => slowClient(svc!.url, "GET /v1/sessions/", "x", 250)),
    );
    const bodyClients = await Promise.all(
      Array.from({ length: 150 }, () =>
        slowClient(
          svc!.url,
          `POST /v1/sessions/${session.id}/act HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
            `x-platform-api-key: ${svc!.key.key}\r\nx-stream-response: true\r\ncontent-length: 100000\r\n\r\n{"input":"`,
          "a",
          250,
        ),
      ),
    );
    const everyone = [...headerClients, ...bodyClients];

    // A bystander's requests are answered while the slow clients hold their sockets.
    let allClosed = false;
    const closing = Promise.all(everyone.map((client) => client.closed)).then(() => {
      allClosed = true;
    });
    let answered = 0;
    while (!allClosed) {
      const response = await svc.call("/healthz");
      expect(response.status).toBe(200);
      await response.text();
      answered++;
    }
    await closing;
    expect(answered).toBeGreaterThan(0);
    // The timeouts are 1 s and 2 s: all were cut before Node's own 30 s check would have (the fault
    // this guards against kept them 22 s and more).
    expect(Date.now() - opened).toBeLessThan(28_000);

    for (const client of everyone) {
      expect(client.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(client.received).toContain('"code":"REQUEST_TIMEOUT"');
      // One line per client, at debug level.
      const lines = linesOf(svc, client);
      expect(lines, `log lines of client ${client.port}`).toHaveLength(1);
      expect(lines[0]!.level).toBe(20);
    }
    expect(linesOf(svc, headerClients[0]!)[0]!.msg).toContain("headers");
    expect(linesOf(svc, bodyClients[0]!)[0]!.msg).toContain("body");
    // Nothing at warn level or above about any of it.
    expect(svc.logs().filter((line) => Number(line.level) >= 40)).toEqual([]);

    const text = await metrics.text();
    expect(text).toContain('deckhand_slow_clients_closed_total{phase="headers"} 150');
    expect(text).toContain('deckhand_slow_clients_closed_total{phase="body"} 150');
  }, 90_000);

  it("a connection that sends nothing, and a kept-alive one left idle, are closed", async () => {
    svc = await startService({ headersTimeoutMs: 500, requestTimeoutMs: 500, connectionIdleTimeoutMs: 500 });
    const { port } = new URL(svc.url);
    const silent = net.connect(Number(port), "127.0.0.1");
    sockets.push(silent);
    silent.on("error", () => undefined);
    let silentAnswer = "";
    silent.on("data", (chunk) => {
      silentAnswer += chunk.toString();
    });
    const idle = net.connect(Number(port), "127.0.0.1");
    sockets.push(idle);
    idle.on("error", () => undefined);
    let idleAnswer = "";
    idle.on("data", (chunk) => {
      idleAnswer += chunk.toString();
    });
    idle.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    // Both stay open for as long as the service lets them: the test waits for the service to close them.
    await Promise.all([
      new Promise((resolve) => silent.once("close", resolve)),
      new Promise((resolve) => idle.once("close", resolve)),
    ]);
    expect(silentAnswer).toMatch(/^HTTP\/1\.1 408 /);
    // The kept-alive one got its answer whole, then was closed without another.
    expect(idleAnswer).toMatch(/^HTTP\/1\.1 200 /);
    expect(idleAnswer.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(svc.logs().filter((line) => Number(line.level) >= 40)).toEqual([]);
  });

  it("a streamed response outlives the request and idle timeouts: only the request is bound by them", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    svc = await startService({
      headersTimeoutMs: 300,
      requestTimeoutMs: 300,
      connectionIdleTimeoutMs: 300,
      handlers: {
        sessionAct: async (context) => {
          context.log("working");
          await gate;
          return {
            result: { success: true, message: "done", actionDescription: "click", actions: [] },
            actionId: "a1",
          } as never;
        },
      },
    });
    const session = await svc.session();
    const response = await svc.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      json: { input: "click" },
      headers: { "x-stream-response": "true" },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes("working")) text += new TextDecoder().decode((await reader.read()).value);
    // Ten times every timeout passes while the answer streams; the stream is not cut.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += new TextDecoder().decode(chunk.value);
    expect(text).toContain('"status":"finished"');
    expect(text).toContain('"message":"done"');
    expect(svc.logs().filter((line) => line.code === "ERR_HTTP_REQUEST_TIMEOUT")).toEqual([]);
  });
});

describe("slow clients beside another project's session", () => {
  it("delay none of its requests by seconds, end nothing of it, and leave no memory held", async () => {
    const fx = await startFixtures();
    const live = await startLiveService({
      maxSessions: 2,
      headersTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
      maxConnectionsPerAddress: 0,
    });
    try {
      // The bystander: another project's session, with a page and a replay.
      const other = { key: live.otherKey.key };
      const theirs = await live.start({}, other);
      await ok(await live.op(theirs, "navigate", { url: fx.site.url("index.html") }, other));
      const replay = () => live.call(`/v1/sessions/${theirs}/replay`, other);
      await ok(await replay());
      // The attacker's own session, whose act its trickling bodies aim at.
      const mine = await live.start();
      const before = await settled();

      // A thousand sockets trickling their headers and a thousand trickling a 100 KB body, opened
      // 200 at a time (the listen backlog), while the bystander asks for its replay every 200 ms.
      const everyone: SlowClient[] = [];
      const opening = (async () => {
        for (let batch = 0; batch < 10; batch++) {
          everyone.push(
            ...(await Promise.all(
              Array.from({ length: 200 }, (_, i) =>
                (batch * 200 + i) % 2 === 0
                  ? slowClient(live.url, "GET /v1/sessions/", "x", 250)
                  : slowClient(
                      live.url,
                      `POST /v1/sessions/${mine}/act HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
                        `x-platform-api-key: ${live.key.key}\r\nx-stream-response: true\r\ncontent-length: 100000\r\n\r\n{"input":"`,
                      "a",
                      250,
                    ),
              ),
            )),
          );
        }
      })();
      let allClosed = false;
      const closing = opening
        .then(() => Promise.all(everyone.map((client) => client.closed)))
        .then(() => {
          allClosed = true;
        });
      const latencies = await pollLatencies(replay, () => allClosed);
      await closing;
      expect(everyone).toHaveLength(2_000);
      for (const client of everyone) expect(client.received).toMatch(/^HTTP\/1\.1 408 /);
      // An answer takes milliseconds; a bound that a loaded machine stays under but a stall of
      // seconds (the slow clients were held 22 s) does not.
      const p99 = percentile(latencies, 99);
      expect(p99, `replay latencies: ${latencies.map((l) => l.toFixed(0)).join(", ")}`).toBeLessThan(3_000);

      // Nothing of either session ended; the bystander's goes on.
      expect(live.service.sessions.get(theirs)?.ended).toBe(false);
      expect(live.service.sessions.get(mine)?.ended).toBe(false);
      await ok(await live.op(theirs, "navigate", { url: fx.site.url("list.html") }, other));
      await ok(await replay());
      // The sockets' memory is let go.
      await expectMemoryBack(before);
      await ok(await live.op(mine, "end"));
      await ok(await live.op(theirs, "end", {}, other));
    } finally {
      await live.close();
      await fx.close();
    }
  }, 120_000);
});

describe("connections per address", () => {
  it("counts IPv4 by address (IPv4-mapped IPv6 included) and IPv6 by /64", () => {
    expect(addressKey("::ffff:127.0.0.1")).toBe(addressKey("127.0.0.1"));
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:db8:1:2:ffff:ffff:ffff:ffff"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("10.0.0.1")).not.toBe(addressKey("10.0.0.2"));
  });

  it("refuses the connection past the limit with 429; another address and a freed place are served", async () => {
    const metrics = new ServiceMetrics();
    svc = await startService({
      maxConnectionsPerAddress: 20,
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      metrics,
    });
    const { port } = new URL(svc.url);
    // 20 idle connections from 127.0.0.1, each proven admitted by an answer on it (kept alive).
    const held: net.Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const socket = net.connect(Number(port), "127.0.0.1");
      sockets.push(socket);
      held.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.once("data", (chunk) => {
          expect(chunk.toString()).toMatch(/^HTTP\/1\.1 200 /);
          resolve();
        });
        socket.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      });
    }

    const refused = await rawRequest(svc.url, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, code: "TOO_MANY_CONNECTIONS" });
    expect(JSON.parse(refused.body).error).toContain("--max-connections-per-address");
    // fetch's own connections count too: refused as well.
    await expect(fetch(`${svc.url}/healthz`)).resolves.toHaveProperty("status", 429);

    // Another address (127.0.0.2 is loopback too) has its own count.
    const other = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress: "127.0.0.2" });
      sockets.push(socket);
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
        if (text.includes("\r\n\r\n")) resolve(text);
      });
      socket.once("error", reject);
      socket.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
    });
    expect(other).toMatch(/^HTTP\/1\.1 200 /);

    // One place freed: the next connection from 127.0.0.1 is served.
    const gone = new Promise((resolve) => held[0]!.once("close", resolve));
    held[0]!.end();
    await gone;
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      status = (
        await rawRequest(svc.url, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
      ).status;
    }
    expect(status).toBe(200);

    expect(await metrics.text()).toMatch(
      /deckhand_connections_refused_total\{reason="per_address_limit"\} [1-9]/,
    );
    expect(svc.logs().filter((line) => Number(line.level) >= 40)).toEqual([]);
    const refusals = svc
      .logs()
      .filter((line) => line.msg === "connection refused: too many from this address");
    expect(refusals.length).toBeGreaterThan(0);
    for (const line of refusals) expect(line.level).toBe(20);
  });
});

describe("WebSocket upgrades", () => {
  it("count against the per-address limit while open, and are not cut by the HTTP timeouts", async () => {
    const live = await startLiveService({
      maxConnectionsPerAddress: 2,
      headersTimeoutMs: 300,
      requestTimeoutMs: 300,
      connectionIdleTimeoutMs: 300,
    });
    const open: WebSocket[] = [];
    try {
      const id = await live.start();
      const url = `${live.url.replace("http:", "ws:")}/v1/sessions/${id}/cdp`;
      // From 127.0.0.2, so that the test's own HTTP calls (from 127.0.0.1) do not count here.
      const connect = () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(url, {
            headers: { "x-platform-api-key": live.key.key },
            localAddress: "127.0.0.2",
          });
          ws.once("open", () => {
            open.push(ws);
            resolve(ws);
          });
          ws.once("unexpected-response", (_request, response) =>
            reject(new Error(`status ${response.statusCode}`)),
          );
          ws.once("error", reject);
        });
      const call = (ws: WebSocket, id: number) =>
        new Promise<Record<string, unknown>>((resolve) => {
          const onMessage = (data: WebSocket.RawData) => {
            const message = JSON.parse(String(data));
            if (message.id !== id) return;
            ws.off("message", onMessage);
            resolve(message);
          };
          ws.on("message", onMessage);
          ws.send(JSON.stringify({ id, method: "Browser.getVersion" }));
        });
      const first = await connect();
      await connect();
      await expect(connect()).rejects.toThrow("status 429");

      // Ten times every HTTP timeout passes: the upgraded sockets are not HTTP requests any more.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(open.map((ws) => ws.readyState)).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
      expect((await call(first, 1)).result).toMatchObject({ product: expect.stringContaining("Chrome") });

      // One closed: its place is free again.
      const closed = new Promise((resolve) => first.once("close", resolve));
      first.close();
      await closed;
      let again: WebSocket | undefined;
      await eventually(
        async () => {
          again = await connect().catch(() => undefined);
          return again !== undefined;
        },
        10_000,
        "a place freed by a closed WebSocket",
      );
      expect((await call(again!, 2)).result).toMatchObject({ product: expect.stringContaining("Chrome") });
    } finally {
      for (const ws of open) ws.terminate();
      await live.close();
    }
  }, 90_000);
});
