// A profiling aid: records every DevTools protocol command Deckhand sends (method, target type,
// when it was sent, when it was answered) by wrapping the connection's send on its prototype.
// Used only in separate profiling passes, never while figures are being timed.

import type { Deckhand } from "deckhand";

export interface CdpCall {
  method: string;
  target: string;
  /** ms, performance.now() */
  sent: number;
  answered: number;
  /** For a call of an injected script's method (Frame.invoke): the method's name, the in-page work. */
  injected?: string;
}

type RawSend = (session: { targetType?: string }, method: string, params: unknown) => Promise<unknown>;

/** The injected method a Runtime.callFunctionOn calls, if it is a Frame.invoke (its first argument names it). */
function injectedMethod(method: string, params: unknown): string | undefined {
  if (method !== "Runtime.callFunctionOn") return undefined;
  const { functionDeclaration, arguments: args } = params as {
    functionDeclaration?: string;
    arguments?: { value?: unknown }[];
  };
  if (!functionDeclaration?.startsWith("function(method,")) return undefined;
  const name = args?.[0]?.value;
  return typeof name === "string" ? name : undefined;
}

export interface CdpTracer {
  calls: CdpCall[];
  stop(): void;
}

/** The class every Deckhand connection in this process shares, reached through a ready instance. */
export function connectionClassOf(dh: Deckhand): object {
  return Object.getPrototypeOf(dh.context.browser.connection) as object;
}

/** Starts recording the commands of every Deckhand connection in this process. */
export function traceCdp(connectionClass: object): CdpTracer {
  const proto = connectionClass as { rawSend: RawSend };
  const original = proto.rawSend;
  const calls: CdpCall[] = [];
  proto.rawSend = function (this: unknown, session, method, params) {
    const call: CdpCall = {
      method,
      target: session.targetType ?? "?",
      sent: performance.now(),
      answered: Number.NaN,
    };
    const injected = injectedMethod(method, params);
    if (injected) call.injected = injected;
    calls.push(call);
    const done = () => {
      call.answered = performance.now();
    };
    const pending = original.call(this, session, method, params);
    pending.then(done, done);
    return pending;
  };
  return {
    calls,
    stop: () => {
      proto.rawSend = original;
    },
  };
}

export interface MethodTotal {
  method: string;
  count: number;
  totalMs: number;
  maxMs: number;
}

/** Per method: how many calls and how long they took in sum (calls overlap, so sums exceed wall time). */
export function byMethod(calls: CdpCall[]): MethodTotal[] {
  const map = new Map<string, MethodTotal>();
  for (const c of calls) {
    const ms = c.answered - c.sent;
    const entry = map.get(c.method) ?? { method: c.method, count: 0, totalMs: 0, maxMs: 0 };
    entry.count++;
    entry.totalMs += ms;
    entry.maxMs = Math.max(entry.maxMs, ms);
    map.set(c.method, entry);
  }
  return [...map.values()].sort((a, b) => b.totalMs - a.totalMs);
}

/** Milliseconds during which at least one command was in flight (the union of the intervals). */
export function busyMs(calls: CdpCall[]): number {
  const spans = calls
    .filter((c) => !Number.isNaN(c.answered))
    .map((c) => [c.sent, c.answered] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let start = Number.NaN;
  let end = Number.NaN;
  for (const [s, e] of spans) {
    if (Number.isNaN(start) || s > end) {
      if (!Number.isNaN(start)) total += end - start;
      start = s;
      end = e;
    } else end = Math.max(end, e);
  }
  if (!Number.isNaN(start)) total += end - start;
  return total;
}
