// What an operator scrapes: the service's metrics in Prometheus text format (prom-client), one
// registry per service so that two services in one process never mix their numbers.
//
// Counted as things happen: operations by kind and outcome with their latency, model tokens and
// cost, CDP proxy bytes, sessions started, connections refused and slow clients closed. Read at
// scrape time from the parts that know them (`MetricsSources`): sessions by state, the node's
// lease, event-loop lag. Node's process metrics (memory, open file descriptors, CPU, GC) are
// added on the first scrape, so a service nobody scrapes pays nothing for them.
//
// Labels take values from short fixed lists only (never a model name, a URL or a session id): a
// label a tenant can choose would let one tenant grow every scrape without bound.
//
// Who may read it is decided elsewhere (metrics-route.ts): nobody by default.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ConnectionEvents } from "./connections.ts";
import type { EventLoopLag } from "./event-loop.ts";
import type { BrowserPoolStats } from "./sessions/browser-pool.ts";
import type { LeaseStats } from "./sessions/session-manager.ts";

export type OperationKind = "act" | "extract" | "observe" | "navigate" | "agentExecute";
/** success: the operation answered its result; error: it failed; cancelled: its client went away or the session ended. */
export type OperationOutcome = "success" | "error" | "cancelled";
export type SessionState = "busy" | "idle" | "ending";

/** The node's lease renewals, as the session manager reports them (SessionManager.leaseStats). */
export type { LeaseStats } from "./sessions/session-manager.ts";

/** Values read when scraped. Each may be set later than the metrics are made (setSources). */
export interface MetricsSources {
  /** The live sessions of this node, by state. */
  sessionStates?: () => Partial<Record<SessionState, number>>;
  /** The lease's renewals; undefined while there is no lease. */
  leaseStats?: () => LeaseStats | undefined;
  /** The event-loop lag monitor. */
  eventLoop?: EventLoopLag;
  /** The browser pool's browsers, warm and assigned (BrowserPool.stats). */
  browserPool?: () => BrowserPoolStats;
  /** Spare browser contexts waiting for a project's next session (SessionManager.spareContexts). */
  spareContexts?: () => number;
}

/** Seconds; from 10 ms (a navigate to a cached page) to 3 minutes (the default operation timeout). */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 180];

const SESSION_STATES: readonly SessionState[] = ["busy", "idle", "ending"];

export class ServiceMetrics implements ConnectionEvents {
  readonly registry = new Registry();
  private sources: MetricsSources = {};
  private processMetrics = false;

  private readonly operations = new Counter({
    name: "deckhand_operations_total",
    help: "Session operations run on this node, by kind and outcome.",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: "deckhand_operation_duration_seconds",
    help: "Time from an operation's turn in its session to its end, by kind and outcome.",
    labelNames: ["kind", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: "deckhand_model_tokens_total",
    help: "Model tokens used by operations, by direction (input, output).",
    labelNames: ["direction"] as const,
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: "deckhand_model_cost_dollars_total",
    help: "Estimated model cost of operations in US dollars (models whose price is known).",
    registers: [this.registry],
  });
  private readonly cdp = new Counter({
    name: "deckhand_cdp_bytes_total",
    help: "Bytes through the CDP proxy: in from clients, out to clients.",
    labelNames: ["direction"] as const,
    registers: [this.registry],
  });
  private readonly cdpThrottle = new Counter({
    name: "deckhand_cdp_throttled_total",
    help: "Times the CDP proxy stopped reading a client because its session's byte budget ran out.",
    registers: [this.registry],
  });
  private readonly started = new Counter({
    name: "deckhand_sessions_started_total",
    help: "Sessions started on this node (resumes not counted).",
    registers: [this.registry],
  });
  private readonly refusedConnections = new Counter({
    name: "deckhand_connections_refused_total",
    help: "Connections refused before any request was read, by reason.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  private readonly slowClients = new Counter({
    name: "deckhand_slow_clients_closed_total",
    help: "Connections closed because their request headers or body did not arrive in time.",
    labelNames: ["phase"] as const,
    registers: [this.registry],
  });

  constructor() {
    const metrics = this;
    new Gauge({
      name: "deckhand_sessions",
      help: "Live sessions of this node by state: busy (an operation queued or running), idle, ending.",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const states = metrics.sources.sessionStates?.() ?? {};
        for (const state of SESSION_STATES) this.set({ state }, states[state] ?? 0);
      },
    });
    new Gauge({
      name: "deckhand_event_loop_lag_seconds",
      help: "The largest event-loop lag of the last 10 seconds (what /readyz compares with its threshold).",
      registers: [this.registry],
      collect() {
        this.set((metrics.sources.eventLoop?.recentMaxMs() ?? 0) / 1000);
      },
    });
    new Counter({
      name: "deckhand_lease_renewals_total",
      help: "Renewals of this node's lease in the database.",
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.leaseStats?.();
        this.reset();
        if (stats) this.inc(stats.renewals);
      },
    });
    new Counter({
      name: "deckhand_lease_renewal_failures_total",
      help: "Renewals of this node's lease that failed (the database did not answer).",
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.leaseStats?.();
        this.reset();
        if (stats) this.inc(stats.failures);
      },
    });
    new Gauge({
      name: "deckhand_browsers",
      help:
        "Chromium processes of this node's pool: warm (launched, waiting for the next project), warming " +
        "(warm ones starting) and assigned (a project's or a session's, lingering ones included).",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.browserPool?.();
        this.reset();
        if (!stats) return;
        this.set({ state: "warm" }, stats.warm);
        this.set({ state: "warming" }, stats.warming);
        this.set({ state: "assigned" }, stats.assigned);
      },
    });
    new Counter({
      name: "deckhand_browser_assignments_total",
      help:
        "Browsers given to a project (or a session, --isolation session): from the warm ones (warm) or " +
        "launched on demand because none was warm (cold).",
      labelNames: ["source"] as const,
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.browserPool?.();
        this.reset();
        if (!stats) return;
        this.inc({ source: "warm" }, stats.warmTaken);
        this.inc({ source: "cold" }, stats.coldLaunches);
      },
    });
    new Gauge({
      name: "deckhand_spare_contexts",
      help:
        "Browser contexts made ahead, each with its page open, in projects' browsers for their next session " +
        "there (one per browser at most).",
      registers: [this.registry],
      collect() {
        this.set(metrics.sources.spareContexts?.() ?? 0);
      },
    });
    new Counter({
      name: "deckhand_warm_browsers_lost_total",
      help: "Warm browsers that failed to start or died before a project took them (each is replaced).",
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.browserPool?.();
        this.reset();
        if (stats) this.inc(stats.warmLost);
      },
    });
    new Gauge({
      name: "deckhand_lease_renewal_lag_seconds",
      help: "How late lease renewals ran: the latest (last) and the largest so far (max).",
      labelNames: ["stat"] as const,
      registers: [this.registry],
      collect() {
        const stats = metrics.sources.leaseStats?.();
        this.reset();
        if (!stats) return;
        this.set({ stat: "last" }, stats.lastLagMs / 1000);
        this.set({ stat: "max" }, stats.maxLagMs / 1000);
      },
    });
  }

  /** Adds (or replaces) the sources read at scrape time. */
  setSources(sources: MetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** One operation ended. */
  operation(kind: OperationKind, outcome: OperationOutcome, seconds: number): void {
    this.operations.inc({ kind, outcome });
    this.latency.observe({ kind, outcome }, seconds);
  }

  /** Tokens (and the cost, when known) an operation used. */
  modelUsage(usage: { inputTokens?: number; outputTokens?: number; cost?: number }): void {
    if (usage.inputTokens) this.tokens.inc({ direction: "input" }, usage.inputTokens);
    if (usage.outputTokens) this.tokens.inc({ direction: "output" }, usage.outputTokens);
    if (usage.cost) this.cost.inc(usage.cost);
  }

  /** Bytes through the CDP proxy: "in" from a client, "out" to a client. */
  cdpBytes(direction: "in" | "out", bytes: number): void {
    if (bytes > 0) this.cdp.inc({ direction }, bytes);
  }

  /** The CDP proxy paused a client over its session's byte budget (--cdp-bytes-per-second). */
  cdpThrottled(): void {
    this.cdpThrottle.inc();
  }

  sessionStarted(): void {
    this.started.inc();
  }

  refused(reason: "per_address_limit"): void {
    this.refusedConnections.inc({ reason });
  }

  slowClientClosed(phase: "headers" | "body"): void {
    this.slowClients.inc({ phase });
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  async text(): Promise<string> {
    if (!this.processMetrics) {
      this.processMetrics = true;
      collectDefaultMetrics({ register: this.registry });
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
