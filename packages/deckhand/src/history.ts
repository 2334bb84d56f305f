// The record of what a Deckhand instance did, in call order (section 2.13).

import type { HistoryEntry, ReplayAction } from "./types.ts";

/**
 * A deep, frozen copy of plain data. The history keeps copies: the caller still holds the very
 * objects an operation returned (its ActResult, its extracted data) and may change them, which
 * must not rewrite what was recorded. Functions are left out; other objects are kept as they are.
 */
function frozenCopy(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > 32) return value;
  if (Array.isArray(value)) return Object.freeze(value.map((v) => frozenCopy(v, depth + 1)));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value))
    if (typeof v !== "function") out[key] = frozenCopy(v, depth + 1);
  return Object.freeze(out);
}

/** An operation as the replay record keeps it (what the script exports read): no end time, no usage. */
export type RecordedRow = Pick<ReplayAction, "method" | "parameters" | "result" | "timestamp">;

export class HistoryRecorder {
  private readonly entries: HistoryEntry[] = [];
  /** The same operations in the replay record's shape (secrets already masked by the caller). */
  private readonly rows: RecordedRow[] = [];
  /**
   * False: nothing is kept (Deckhand.inContext's `history: false`). An instance that lives for
   * hours and whose caller keeps its own record (the service's replay) would otherwise hold a copy
   * of every operation until it closes.
   */
  private keep = true;

  /** Keeps nothing from now on (and lets go of what was kept). */
  stopKeeping(): void {
    this.keep = false;
    this.entries.length = 0;
    this.rows.length = 0;
  }

  recordRow(row: RecordedRow): void {
    if (!this.keep) return;
    this.rows.push(Object.freeze({ ...row, result: frozenCopy(row.result) as Record<string, unknown> }));
  }

  /** The operations so far, in the replay record's shape. */
  recordedRows(): readonly RecordedRow[] {
    return Object.freeze([...this.rows]);
  }

  record(
    method: HistoryEntry["method"],
    parameters: unknown,
    result: unknown,
    callLog?: readonly string[],
  ): void {
    if (!this.keep) return;
    this.entries.push(
      Object.freeze({
        method,
        parameters: frozenCopy(parameters),
        result: frozenCopy(result),
        timestamp: new Date().toISOString(),
        ...(callLog && callLog.length > 0 ? { callLog: Object.freeze([...callLog]) } : {}),
      }),
    );
  }

  /** A frozen copy: callers cannot change the record. */
  list(): readonly HistoryEntry[] {
    return Object.freeze([...this.entries]);
  }
}
