// The CDP proxy's traffic hooks (onTraffic, onThrottled), which the metrics endpoint counts: the
// proxy is installed on an app of its own beside a real service, with the service's sessions and
// keys, so that the hooks can be watched.

import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { installCdpProxy } from "../src/cdp-proxy/cdp-proxy.ts";
import { type LiveService, ok, startLiveService } from "./live-helpers.ts";

let svc: LiveService;
let app: FastifyInstance;
let url: string;
const traffic = { in: 0, out: 0, inMessages: 0, outMessages: 0 };
let throttled = 0;
const BUDGET = 64 * 1024;

beforeAll(async () => {
  svc = await startLiveService({ maxSessions: 2 });
  app = Fastify();
  const deckhand = svc.service.app.deckhand;
  installCdpProxy(app, {
    store: deckhand.store,
    verifier: deckhand.verifier,
    revocations: deckhand.revocations,
    links: deckhand.links,
    sessions: svc.service.sessions,
    maxMessageBytes: 16 * 1024,
    bytesPerSecond: BUDGET,
    onTraffic: (direction, bytes) => {
      traffic[direction] += bytes;
      if (direction === "in") traffic.inMessages++;
      else traffic.outMessages++;
    },
    onThrottled: () => throttled++,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  url = `ws://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  await app?.close();
  await svc?.close();
});

describe("the CDP proxy's hooks", () => {
  it("count every byte each way, and each time a client goes over its budget", async () => {
    const id = await svc.start();
    const socket = new WebSocket(`${url}/v1/sessions/${id}/cdp`, {
      headers: { "x-platform-api-key": svc.key.key },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    let received = 0;
    let answers = 0;
    socket.on("message", (data: Buffer) => {
      received += data.length;
      answers++;
    });
    // Within the budget: nothing is throttled, and the bytes are counted exactly.
    const small = JSON.stringify({ id: 1, method: "Browser.getVersion" });
    socket.send(small);
    await waitFor(() => answers === 1);
    expect(traffic).toMatchObject({
      in: Buffer.byteLength(small),
      out: received,
      inMessages: 1,
      outMessages: 1,
    });
    expect(throttled).toBe(0);

    // Ten messages of 14 KiB: twice the budget's burst (64 KiB) over.
    const sent: number[] = [];
    for (let i = 0; i < 10; i++) {
      const text = JSON.stringify({
        id: 10 + i,
        method: "Browser.getVersion",
        params: { pad: "x".repeat(14 * 1024) },
      });
      sent.push(Buffer.byteLength(text));
      socket.send(text);
    }
    await waitFor(() => answers === 11);
    expect(traffic.in).toBe(Buffer.byteLength(small) + sent.reduce((a, b) => a + b, 0));
    expect(traffic.out).toBe(received);
    expect(throttled).toBeGreaterThan(0);
    socket.close();
    await ok(await svc.op(id, "end"));
  }, 60_000);
});

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
