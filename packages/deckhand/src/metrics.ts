// Token and time accounting per operation kind: the `metrics` record of spec section 2.12.
// Every model call adds to its operation's group; the `total` group is always the sum of the four.

import type { DeckhandMetrics } from "./types.ts";

export type MetricsOperation = "act" | "extract" | "observe" | "agent";

export const METRICS_OPERATIONS: readonly MetricsOperation[] = ["act", "extract", "observe", "agent"];

/** The five numbers of one group. */
export interface UsageAmounts {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
  inferenceTimeMs: number;
}

const FIELDS = [
  "PromptTokens",
  "CompletionTokens",
  "ReasoningTokens",
  "CachedInputTokens",
  "InferenceTimeMs",
] as const;
type Field = (typeof FIELDS)[number];

const AMOUNT_OF: Record<Field, keyof UsageAmounts> = {
  PromptTokens: "promptTokens",
  CompletionTokens: "completionTokens",
  ReasoningTokens: "reasoningTokens",
  CachedInputTokens: "cachedInputTokens",
  InferenceTimeMs: "inferenceTimeMs",
};

function zero(): UsageAmounts {
  return {
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedInputTokens: 0,
    inferenceTimeMs: 0,
  };
}

/** A count that can be added: finite and not negative, else 0. */
function amount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A metrics record with every field 0. */
export function emptyMetrics(): DeckhandMetrics {
  const record: Record<string, number> = {};
  for (const prefix of [...METRICS_OPERATIONS, "total"])
    for (const field of FIELDS) record[`${prefix}${field}`] = 0;
  return record as DeckhandMetrics;
}

/** Collects usage from model calls (and from the service in REMOTE mode) and reports section 2.12. */
export class MetricsRecorder {
  private readonly groups: Record<MetricsOperation, UsageAmounts> = {
    act: zero(),
    extract: zero(),
    observe: zero(),
    agent: zero(),
  };

  /** Adds one model call: its reported usage and how long it took. */
  record(
    operation: MetricsOperation,
    usage: Partial<Omit<UsageAmounts, "inferenceTimeMs">>,
    inferenceTimeMs: number,
  ): void {
    this.add(operation, { ...usage, inferenceTimeMs });
  }

  /** Adds usage measured elsewhere (a REMOTE operation, an agent step); missing numbers count as 0. */
  add(operation: MetricsOperation, usage: Partial<UsageAmounts>): void {
    const group = this.groups[operation];
    if (!group)
      throw new TypeError(
        `Unknown metrics operation "${String(operation)}"; use act, extract, observe or agent.`,
      );
    const added: UsageAmounts = {
      promptTokens: amount(usage.promptTokens),
      completionTokens: amount(usage.completionTokens),
      reasoningTokens: amount(usage.reasoningTokens),
      cachedInputTokens: amount(usage.cachedInputTokens),
      inferenceTimeMs: amount(usage.inferenceTimeMs),
    };
    for (const key of Object.keys(added) as (keyof UsageAmounts)[]) group[key] += added[key];
  }

  /** Adds a whole metrics record (for example the service's, per operation). Its `total` fields
   * are ignored: totals are always recomputed from the groups. */
  addMetrics(metrics: Partial<DeckhandMetrics>): void {
    const source = metrics as Partial<Record<string, number>>;
    for (const operation of METRICS_OPERATIONS) {
      const usage: Partial<UsageAmounts> = {};
      for (const field of FIELDS) usage[AMOUNT_OF[field]] = source[`${operation}${field}`] ?? 0;
      this.add(operation, usage);
    }
  }

  /** The section 2.12 record as of now (a copy). */
  snapshot(): DeckhandMetrics {
    const record = emptyMetrics() as unknown as Record<string, number>;
    const total = zero();
    for (const operation of METRICS_OPERATIONS) {
      const group = this.groups[operation];
      for (const field of FIELDS) {
        const key = AMOUNT_OF[field];
        record[`${operation}${field}`] = group[key];
        total[key] += group[key];
      }
    }
    for (const field of FIELDS) record[`total${field}`] = total[AMOUNT_OF[field]];
    return record as unknown as DeckhandMetrics;
  }

  reset(): void {
    for (const operation of METRICS_OPERATIONS) this.groups[operation] = zero();
  }
}
