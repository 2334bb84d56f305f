// A session that lives for hours keeps nothing in memory per operation: the soak's sessions (bench
// soak.ts) ran thousands of operations each, and the service kept a record of every one of them
// twice (its Deckhand's history, beside the replay record in the store), and one more of every
// operation's cancellation signal, for as long as the session lived.

import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { linkedSignal } from "../src/sessions/live-session.ts";
import { type Fixtures, type LiveService, ok, startFixtures, startLiveService } from "./live-helpers.ts";

// The collector, to read what memory is still held rather than what was allocated since the last
// collection (V8's own flag, turned on for this process).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The heap still in use once everything that can be collected was (finalizers included). */
async function heapInUse(): Promise<number> {
  for (let round = 0; round < 3; round++) {
    gc();
    // FinalizationRegistry callbacks (Node's AbortSignal bookkeeping) run as tasks after a collection.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

let svc: LiveService;
let fx: Fixtures;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

describe("a long-lived session's memory", () => {
  it("keeps its operations in the replay record only, not in its Deckhand as well", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html#again") }));

    const replay = await ok<{ pages: { actions: { method: string }[] }[] }>(
      await svc.call(`/v1/sessions/${id}/replay`),
    );
    const actions = replay.pages.flatMap((page) => page.actions);
    expect(actions.map((action) => action.method)).toEqual(["navigate", "navigate"]);
    expect(await svc.service.sessions.get(id)!.dh.history).toEqual([]);
    await ok(await svc.op(id, "end"));
  });

  it("holds no more after 20,000 operations than before them", async () => {
    const id = await svc.start();
    const live = svc.service.sessions.get(id)!;
    const run = () => live.run(new AbortController().signal, async () => undefined);
    // Warm up (the queue's and the timers' first allocations), then measure.
    for (let n = 0; n < 1000; n++) await run();
    const before = await heapInUse();
    for (let n = 0; n < 20_000; n++) await run();
    const grown = (await heapInUse()) - before;
    // With AbortSignal.any([caller, session lifetime]) each operation left ~175 bytes with the
    // session's lifetime signal until the session was collected: 3.5 MB here.
    expect(grown).toBeLessThan(1024 * 1024);
    await ok(await svc.op(id, "end"));
  });
});

describe("an ended session", () => {
  it("arms no disconnect timer when it closes its CDP clients' sockets", async () => {
    const id = await svc.start();
    const socket = new WebSocket(`${svc.url.replace(/^http/, "ws")}/v1/sessions/${id}/cdp`, {
      headers: { "x-platform-api-key": svc.key.key },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    const session = svc.service.sessions.get(id)!;
    await ok(await svc.op(id, "end"));
    await closed;
    // Ending closed the client's socket. Had that counted as the client going away, the
    // disconnect timer would hold the session (its Deckhand and context) for the grace (30 s).
    expect((session as unknown as { detachTimer?: unknown }).detachTimer).toBeUndefined();
  });
});

describe("linkedSignal", () => {
  it("aborts with the reason of whichever source aborts first, and leaves no listener behind", () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const { signal, unlink } = linkedSignal([a.signal, b.signal]);
    expect(getEventListeners(a.signal, "abort")).toHaveLength(1);
    b.abort(new Error("b went"));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("b went");
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
    unlink();

    const c = new AbortController();
    const second = linkedSignal([c.signal, a.signal]);
    second.unlink();
    expect(getEventListeners(c.signal, "abort")).toHaveLength(0);
    c.abort();
    expect(second.signal.aborted).toBe(false);
  });

  it("is aborted from the start when a source already is", () => {
    const gone = AbortSignal.abort(new Error("already"));
    const other = new AbortController();
    const { signal } = linkedSignal([other.signal, gone]);
    expect((signal.reason as Error).message).toBe("already");
    expect(signal.aborted).toBe(true);
  });
});
