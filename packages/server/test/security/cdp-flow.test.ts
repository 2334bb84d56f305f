// The CDP proxy's flow control, from a client's side: a client that does not read what the browser
// sends it is not read either (the service holds a bounded amount for it, and nothing is lost), and
// a client over its session's byte budget (--cdp-bytes-per-second) is slowed, not disconnected,
// with every command answered in order.

import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LiveService, ok, startLiveService } from "../live-helpers.ts";
import { rawCdpClient } from "./cdp-attacker.ts";

const BUDGET = 256 * 1024;
const MAX_MESSAGE = 64 * 1024;

let svc: LiveService;

beforeAll(async () => {
  svc = await startLiveService({
    maxSessions: 4,
    cdpBytesPerSecond: BUDGET,
    cdpMaxMessageBytes: MAX_MESSAGE,
  });
});
afterAll(async () => {
  await svc?.close();
});

/** A client on a session's page; `answers` gets every answer's id and value, in arrival order. */
async function pageClient(sessionId: string) {
  const client = await rawCdpClient(svc, sessionId, svc.key.key);
  const [tab] = await client.pages();
  const page = await client.attach(tab!.targetId);
  const answers: { id: number; value: unknown; at: number }[] = [];
  client.socket.on("message", (data) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: { result?: { value?: unknown } } };
    if (typeof message.id === "number" && message.id >= 1000)
      answers.push({ id: message.id, value: message.result?.result?.value, at: performance.now() });
  });
  let closeCode: number | undefined;
  void client.closed.then((code) => (closeCode = code));
  const evaluate = (id: number, expression: string) =>
    client.socket.send(
      JSON.stringify({
        id,
        method: "Runtime.evaluate",
        params: { expression, returnByValue: true },
        sessionId: page,
      }),
    );
  return { client, answers, evaluate, closeCode: () => closeCode };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a client that does not read", () => {
  it("is not read either, and gets every answer in order once it reads", async () => {
    const id = await svc.start();
    const { client, answers, evaluate, closeCode } = await pageClient(id);
    const socket = (client.socket as unknown as { _socket: Socket })._socket;
    socket.pause();
    // 200 answers of 256 KiB asked for at once (small commands): 50 MiB if the proxy read them all.
    // Each run counts itself in the page.
    const count = 200;
    const answerSize = 256 * 1024;
    for (let i = 0; i < count; i++)
      evaluate(
        1000 + i,
        `(globalThis.__runs = (globalThis.__runs || 0) + 1, '${i % 10}'.repeat(${answerSize}))`,
      );
    // Another client of the session (one that reads) watches the page until the runs stop.
    const watcher = await pageClient(id);
    const runs = async () => {
      const reply = await watcher.client.call<{ result: { value?: number } }>(
        "Runtime.evaluate",
        { expression: "globalThis.__runs || 0", returnByValue: true },
        await watcher.client.attach((await watcher.client.pages())[0]!.targetId),
      );
      return reply.result.value ?? 0;
    };
    let seen = -1;
    let still = 0;
    while (still < 3) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const now = await runs();
      still = now === seen ? still + 1 : 0;
      seen = now;
    }
    // The proxy stopped passing commands on: at most MAX_IN_FLIGHT (64) unanswered plus what the
    // kernel's socket buffers and 8 MiB of unread answers hold, far from all 200.
    expect(seen, `commands run while the client did not read: ${seen}`).toBeLessThan(170);
    expect(answers.length).toBe(0);
    // Now the client reads: every answer comes, in order, on the same connection.
    socket.resume();
    await until(() => answers.length === count || closeCode() !== undefined, 150_000, "every answer");
    expect(closeCode()).toBeUndefined();
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: count }, (_, i) => 1000 + i));
    for (const [i, answer] of answers.entries()) {
      expect(answer.value).toHaveLength(answerSize);
      expect((answer.value as string)[0]).toBe(String(i % 10));
    }
    expect(await runs()).toBe(count);
    watcher.client.close();
    client.close();
    await ok(await svc.op(id, "end"));
  }, 240_000);
});

describe("a session's byte budget (--cdp-bytes-per-second)", () => {
  it("slows a client that sends more, without disconnecting it, and answers every command in order", async () => {
    const id = await svc.start();
    const { client, answers, evaluate, closeCode } = await pageClient(id);
    // 48 messages of 32 KiB back to back: 1.5 MiB, six times the budget of 256 KiB a second.
    const size = 32 * 1024;
    const count = 48;
    const filler = "x".repeat(size - 150);
    const started = performance.now();
    for (let i = 0; i < count; i++) evaluate(1000 + i, `'${filler}'.length + ${i}`);
    await until(() => answers.length === count || closeCode() !== undefined, 60_000, "every answer");
    expect(closeCode()).toBeUndefined();
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: count }, (_, i) => 1000 + i));
    for (const [i, answer] of answers.entries()) expect(answer.value).toBe(filler.length + i);
    // No answer came before the budget allowed its command to be read: the k-th message is read
    // once at most a burst (one second's worth) plus the budget's rate times the time elapsed was,
    // give or take a few messages (a message is let through whole once the budget covers
    // its start; the socket may hold one read before the pause takes effect).
    for (const [k, answer] of answers.entries()) {
      const sent = (k + 1) * size;
      const allowed = BUDGET + (BUDGET * (answer.at - started)) / 1000 + 4 * size;
      expect(sent, `answer ${k} at ${(answer.at - started).toFixed(0)} ms`).toBeLessThanOrEqual(allowed);
    }
    // So the whole took at least the time the excess takes at that rate.
    expect(answers.at(-1)!.at - started).toBeGreaterThan(
      ((count * size - BUDGET - 4 * size) / BUDGET) * 1000,
    );
    // And the client is still connected and served.
    expect((await client.pages()).length).toBe(1);
    client.close();
    await ok(await svc.op(id, "end"));
  }, 120_000);
});
