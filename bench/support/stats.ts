// Summaries of repeated timings: the median is the figure, p95 / min / max show the spread.

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted samples (p in 0..100). */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0)
    return { n, median: Number.NaN, p95: Number.NaN, min: Number.NaN, max: Number.NaN, mean: Number.NaN };
  const mid = n >> 1;
  const median = n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    n,
    median,
    p95: percentile(sorted, 95),
    min: sorted[0]!,
    max: sorted[n - 1]!,
    mean: sorted.reduce((a, b) => a + b, 0) / n,
  };
}

export function median(samples: readonly number[]): number {
  return summarize(samples).median;
}

/** Milliseconds since `started` (from performance.now()). */
export function since(started: number): number {
  return performance.now() - started;
}

/** Times `fn` and returns its result with the milliseconds it took. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: since(started) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
