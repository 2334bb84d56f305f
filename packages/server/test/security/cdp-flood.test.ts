// A CDP flood (issue 18): one tenant's client sends messages just under the size limit back to
// back on its session's CDP socket. The proxy reads it only as fast as the browser takes what it
// passes on and as the session's byte budget allows, passes each message on unparsed, and lets go
// of everything when the socket closes: another project's requests are answered as usual, the
// event loop does not stall, and the memory comes back.
//
// The service runs in this process, so that its event loop and its memory are this process's; the
// attacker writes its frames straight to its socket (masked with a zero key, one shared payload),
// so that the attacker's own side costs this process nothing.

import type { Socket } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CDP_MAX_MESSAGE_BYTES } from "../../src/defaults.ts";
import {
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";
import { expectMemoryBack, percentile, pollLatencies, settled } from "./bystander.ts";
import { type RawCdpClient, rawCdpClient } from "./cdp-attacker.ts";

let fx: Fixtures;
let svc: LiveService;

beforeAll(async () => {
  fx = await startFixtures();
  svc = await startLiveService({ maxSessions: 4 });
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

/** A WebSocket text frame's header for a payload of `length` bytes, masked with a zero key (the payload goes as it is). */
function frameHeader(length: number): Buffer {
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  header.writeUInt32BE(0, 10);
  return header;
}

/**
 * Writes `count` Runtime.evaluate messages of `size` bytes each (a long string literal) to the
 * client's socket, back to back, all sharing one payload buffer. Returns the ids used.
 */
function flood(
  client: RawCdpClient,
  sessionId: string,
  count: number,
  size: number,
  firstId: number,
): number[] {
  const socket = (client.socket as unknown as { _socket: Socket })._socket;
  const suffix = Buffer.from(`'.length","returnByValue":true},"sessionId":${JSON.stringify(sessionId)}}`);
  const ids: number[] = [];
  const head = (id: number) =>
    Buffer.from(`{"id":${id},"method":"Runtime.evaluate","params":{"expression":"'`);
  const bodyLength = size - head(firstId + count).length - suffix.length;
  const body = Buffer.alloc(bodyLength, 0x78);
  for (let i = 0; i < count; i++) {
    const id = firstId + i;
    const prefix = head(id);
    const length = prefix.length + body.length + suffix.length;
    socket.write(Buffer.concat([frameHeader(length), prefix]));
    socket.write(body);
    socket.write(suffix);
    ids.push(id);
  }
  return ids;
}

describe("a CDP flood from one tenant", () => {
  it("does not stall another project, nor the event loop, and the memory comes back", async () => {
    // The bystander: another project's session, with a page and a replay.
    const theirs = await svc.start({}, { key: svc.otherKey.key });
    await ok(await svc.op(theirs, "navigate", { url: fx.site.url("index.html") }, { key: svc.otherKey.key }));
    const replay = () => svc.call(`/v1/sessions/${theirs}/replay`, { key: svc.otherKey.key });
    await ok(await replay());

    // The attacker: its own session, a page session on its proxy socket.
    const mine = await svc.start();
    const client = await rawCdpClient(svc, mine, svc.key.key);
    const [tab] = await client.pages();
    const pageSession = await client.attach(tab!.targetId);
    // A message of the kind the flood sends works (and warms up both sides).
    const size = DEFAULT_CDP_MAX_MESSAGE_BYTES - 64;
    const answers = new Map<number, unknown>();
    client.socket.on("message", (data) => {
      const message = JSON.parse(data.toString()) as {
        id?: number;
        result?: { result?: { value?: unknown } };
      };
      if (typeof message.id === "number") answers.set(message.id, message.result?.result?.value);
    });
    const warmUp = 256 * 1024;
    flood(client, pageSession, 1, warmUp, 1_000_000);
    const deadline = Date.now() + 60_000;
    while (!answers.has(1_000_000) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(answers.get(1_000_000)).toBeGreaterThan(warmUp - 200);

    const before = await settled();
    const rssBefore = before.rss;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    // 100 messages of 8 MiB: 800 MiB, written at once.
    flood(client, pageSession, 100, size, 2_000_000);
    // The bystander asks for its replay every 200 ms, for 8 s.
    const attackEnds = Date.now() + 8_000;
    const latencies = await pollLatencies(replay, () => Date.now() >= attackEnds);
    // The attacker goes away with most of its flood unsent.
    const proxied = [...answers.keys()].filter((id) => id >= 2_000_000).length;
    client.socket.terminate();
    await client.closed;
    lag.disable();
    clearInterval(sampler);

    const p99 = percentile(latencies, 99);
    const maxLagMs = lag.max / 1e6;
    // The flood used to hold the replay for many seconds (12.5 s in the issue) and the event loop
    // for 4.6 s, growing with the flood. Now one message at a time is read and passed on, in a few
    // copies of 8 MiB: little on an idle machine, but it took up to 4 s between two turns of the
    // event loop on this 2-core machine at a load of 50 (other test runs). The bounds leave room for
    // that and still catch a stall that grows with the flood; what tells the old proxy from this one
    // on any machine is the memory it keeps (below).
    expect(p99, `replay latencies: ${latencies.map((l) => l.toFixed(0)).join(", ")}`).toBeLessThan(6_000);
    expect(maxLagMs).toBeLessThan(5_000);
    // The proxy read it as the browser and the budget allowed, not all of it at once: what the
    // service held at any time was a few messages, not the 800 MiB written.
    expect(proxied).toBeLessThan(100);
    // (Its peak: a few 8 MiB messages in several copies each, plus what the allocator keeps; 234 MiB
    // was seen in a full suite run. The old proxy held the flood itself, 800 MiB and more.)
    expect((peakRss - rssBefore) / 2 ** 20).toBeLessThan(400);

    // The bystander's session goes on.
    await ok(await svc.op(theirs, "navigate", { url: fx.site.url("list.html") }, { key: svc.otherKey.key }));
    await ok(await replay());
    // The memory comes back once the socket is gone (nothing holds the queued frames).
    const live = svc.service.sessions.get(mine)!;
    await eventually(
      () => (live.cdp.browser.connection.backlog ?? 0) === 0,
      60_000,
      "the browser to read what was sent",
    );
    // Nothing holds the flood's messages.
    await expectMemoryBack(before);
    expect(live.ended).toBe(false);
    await ok(await svc.op(mine, "end"));
    await ok(await svc.op(theirs, "end", {}, { key: svc.otherKey.key }));
  }, 120_000);
});
