// What a suite hands back (tables as printed, targets with their verdicts, raw figures for the
// JSON file) and how it is printed.

export type Cell = string | number | boolean | null | undefined;

export interface Table {
  title: string;
  columns: string[];
  rows: Cell[][];
  /** Lines printed under the table (what a column means, how it was measured). */
  notes?: string[];
}

export interface TargetCheck {
  /** What was measured, e.g. "init() median". */
  figure: string;
  measured: number | null;
  unit: string;
  /** E.g. "<= 200". */
  target: string;
  met: boolean;
  /** For a missed target: what dominates (filled in by the suite's profile). */
  comment?: string;
}

export interface SuiteOutput {
  tables: Table[];
  targets: TargetCheck[];
  notes: string[];
  /** Raw numbers (samples, summaries) for bench/results/latest.json. */
  figures: Record<string, unknown>;
}

export function emptyOutput(): SuiteOutput {
  return { tables: [], targets: [], notes: [], figures: {} };
}

// ---------- formatting ----------

/** Milliseconds with the precision that matters at their size. */
export function fmtMs(value: number | undefined | null): string {
  if (value === undefined || value === null || Number.isNaN(value)) return "-";
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

export function fmtInt(value: number | undefined | null): string {
  if (value === undefined || value === null || Number.isNaN(value)) return "-";
  return Math.round(value).toLocaleString("en-US");
}

export function fmtMB(bytes: number | undefined | null): string {
  if (bytes === undefined || bytes === null || Number.isNaN(bytes)) return "-";
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** A target check: `measured op limit`. */
export function checkTarget(
  figure: string,
  measured: number | null,
  unit: string,
  op: "<=" | ">=" | "==",
  limit: number,
): TargetCheck {
  const met =
    measured !== null &&
    !Number.isNaN(measured) &&
    (op === "<=" ? measured <= limit : op === ">=" ? measured >= limit : measured === limit);
  const shown = unit === "ms" ? String(limit) : fmtInt(limit);
  return {
    figure,
    measured,
    unit,
    target: `${op === "<=" ? "≤" : op === ">=" ? "≥" : "="} ${shown}${unit ? ` ${unit}` : ""}`,
    met,
  };
}

/** "≤ 100 ms: yes" for a table cell. */
export function verdict(check: TargetCheck): string {
  return `${check.target}: ${check.met ? "yes" : "NO"}`;
}

// ---------- printing ----------

function cellText(cell: Cell): string {
  if (cell === undefined || cell === null) return "-";
  if (typeof cell === "boolean") return cell ? "yes" : "no";
  if (typeof cell === "number") return Number.isInteger(cell) ? fmtInt(cell) : fmtMs(cell);
  return cell;
}

/** Numbers (and "-") are right-aligned; text is left-aligned. */
function isNumeric(text: string): boolean {
  return /^[-+]?[\d,.]+( ?[%x])?$|^-$/.test(text);
}

export function renderTable(table: Table): string {
  const rows = table.rows.map((r) => r.map(cellText));
  const widths = table.columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[], header = false) =>
    cells
      .map((c, i) => (i > 0 && !header && isNumeric(c) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const out = [
    `  ${table.title}`,
    `  ${line(table.columns, true)}`,
    `  ${widths.map((w) => "-".repeat(w)).join("  ")}`,
    ...rows.map((r) => `  ${line(r)}`),
  ];
  for (const note of table.notes ?? []) out.push(`    ${note}`);
  return out.join("\n");
}

export function renderTargets(targets: TargetCheck[]): string {
  if (targets.length === 0) return "";
  return renderTable({
    title: "Targets",
    columns: ["figure", "measured", "target", "met"],
    rows: targets.map((t) => [
      t.figure,
      t.measured === null
        ? "-"
        : `${t.unit === "ms" ? fmtMs(t.measured) : fmtInt(t.measured)}${t.unit ? ` ${t.unit}` : ""}`,
      t.target,
      t.met ? "yes" : "NO",
    ]),
  });
}
