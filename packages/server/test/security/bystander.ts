// What the load and abuse tests (issue 18) check of the tenants an attack is not aimed at: the
// latency of another project's simple request while the attack goes on, and this process's memory
// before and after (the service runs in the test's process, so its memory is the process's).

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect } from "vitest";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The process's memory after a full GC: its RSS, and what JavaScript holds (heap and buffers). */
export async function settled(): Promise<{ rss: number; held: number }> {
  // Buffers' memory is freed by a sweeper after the GC that found them dead: let it run.
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, held: usage.heapUsed + usage.external + usage.arrayBuffers };
}

/**
 * What glibc may keep of freed memory without giving it back: after large buffers are freed its
 * mmap threshold rises to their size (up to 32 MiB), and the free space it trims off a heap only
 * beyond twice that, per arena; the main thread and the threads that free buffers (V8's, libuv's)
 * have arenas of their own. Memory nobody holds, that the process will reuse. CI saw 99 MiB of it
 * once; the old proxy kept 2 GB and more, which this bound still fails. What JavaScript itself
 * holds (`held`) is the exact measure and has the issue's 20% bound with no slack.
 */
const ALLOCATOR_SLACK = 192 * 1024 * 1024;

/**
 * Checks that the memory came back to `before` (a settled() taken before the attack): what
 * JavaScript holds (the heap and buffers, after a GC) within 20%, with no slack, and the RSS too
 * but for what the allocator keeps for reuse.
 */
export async function expectMemoryBack(before: { rss: number; held: number }): Promise<void> {
  const after = await settled();
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  expect(after.held, `held ${mib(before.held)} before, ${mib(after.held)} after`).toBeLessThan(
    before.held * 1.2,
  );
  expect(after.rss, `RSS ${mib(before.rss)} before, ${mib(after.rss)} after`).toBeLessThan(
    before.rss * 1.2 + ALLOCATOR_SLACK,
  );
}

/**
 * Calls `request` every 200 ms until `until()` says stop (checked after each answer), each answer
 * to be a 200. Returns the latencies, each counted from when the request was due: a stalled event
 * loop delays the asking as much as the answering.
 */
export async function pollLatencies(
  request: () => Promise<Response>,
  until: () => boolean,
): Promise<number[]> {
  const latencies: number[] = [];
  let due = performance.now();
  do {
    const response = await request();
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const done = performance.now();
    latencies.push(done - due);
    due = done + 200;
    await new Promise((resolve) => setTimeout(resolve, 200));
  } while (!until());
  return latencies;
}
