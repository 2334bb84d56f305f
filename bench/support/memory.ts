// Node's memory as the benchmarks report it: heap used and RSS now, and heap used after a full GC
// (what is really retained). `gc` is reached without a command-line flag, since `npm run bench`
// fixes the node arguments.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A full garbage collection, so that what follows is measured without earlier garbage. */
export function collectGarbage(): void {
  gc();
}

export interface MemoryFigures {
  heapUsed: number;
  rss: number;
  /** heapUsed after a full collection. */
  heapRetained: number;
}

export function memoryNow(): MemoryFigures {
  const { heapUsed, rss } = process.memoryUsage();
  gc();
  return { heapUsed, rss, heapRetained: process.memoryUsage().heapUsed };
}
