// Event-loop lag: how late a timer fires. Everything of the service runs on one loop, so a lag is
// a stall every client feels (a huge synchronous parse, a blocked disk write). Sampled by a timer
// that asks to run every `intervalMs` and notes how late it ran; the recent maximum (over
// `windowMs`) feeds /readyz and the metrics, so a stall is still seen after it ended, for a while.

import { performance } from "node:perf_hooks";

export interface EventLoopLagOptions {
  /** How often to sample. Default 100 ms. */
  intervalMs?: number;
  /** How far back the recent maximum looks. Default 10 s. */
  windowMs?: number;
}

export class EventLoopLag {
  private readonly intervalMs: number;
  private readonly windowMs: number;
  private readonly samples: { at: number; lagMs: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private expected = 0;
  private last = 0;

  constructor(options: EventLoopLagOptions = {}) {
    this.intervalMs = options.intervalMs ?? 100;
    this.windowMs = options.windowMs ?? 10_000;
  }

  start(): this {
    if (this.timer) return this;
    const tick = () => {
      const now = performance.now();
      this.record(now, Math.max(0, now - this.expected));
      this.expected = now + this.intervalMs;
      this.timer = setTimeout(tick, this.intervalMs);
      this.timer.unref();
    };
    this.expected = performance.now() + this.intervalMs;
    this.timer = setTimeout(tick, this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private record(now: number, lagMs: number): void {
    this.last = lagMs;
    this.samples.push({ at: now, lagMs });
    while (this.samples.length > 0 && this.samples[0]!.at < now - this.windowMs) this.samples.shift();
  }

  /** The lag of the latest sample, in milliseconds. */
  get lastMs(): number {
    return this.last;
  }

  /**
   * The largest lag of the last `windowMs`, in milliseconds, counting a stall still going on: a
   * timer that is late right now (its sample has not run yet, the loop being blocked until this
   * call) counts for what it is late so far.
   */
  recentMaxMs(): number {
    const now = performance.now();
    let max = this.timer ? Math.max(0, now - this.expected) : 0;
    for (const sample of this.samples)
      if (sample.at >= now - this.windowMs && sample.lagMs > max) max = sample.lagMs;
    return max;
  }
}
