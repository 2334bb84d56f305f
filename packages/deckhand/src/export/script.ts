// Exporting a run as a script: the record of its operations (RecordedRow, the replay record's shape)
// -> the steps a script performs (steps.ts) -> the text of one format. LOCAL (`dh.exportScript`)
// and the service (`GET /v1/sessions/{id}/script`) both call exportScript on their record, so the
// two give the same script for the same run.

import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ServiceInvalidArgumentError } from "../errors.ts";
import { deckhandScript } from "./deckhand-script.ts";
import { playwrightTest } from "./playwright-test.ts";
import { planScript, type RecordedRow } from "./steps.ts";

export const SCRIPT_FORMATS = ["playwright-test", "deckhand"] as const;
export type ScriptFormat = (typeof SCRIPT_FORMATS)[number];

export interface ExportScriptOptions {
  /** `playwright-test` (default): a @playwright/test spec; `deckhand`: act(action) steps. */
  format?: ScriptFormat;
  /** playwright-test: each extract becomes an expect that the page shows what was extracted. */
  assertExtracts?: boolean;
  /** Where the run was recorded, for the header ("a LOCAL run", "session 0f3c…"). */
  recordedIn?: string;
}

export function isScriptFormat(value: unknown): value is ScriptFormat {
  return typeof value === "string" && (SCRIPT_FORMATS as readonly string[]).includes(value);
}

/** The script of a recorded run, formatted. */
export function exportScript(rows: readonly RecordedRow[], options: ExportScriptOptions = {}): string {
  const format = options.format ?? "playwright-test";
  const plan = planScript(rows);
  const header = [
    `Recorded by Deckhand${options.recordedIn ? ` in ${options.recordedIn}` : ""}${
      plan.startedAt !== undefined ? ` on ${new Date(plan.startedAt).toISOString()}` : ""
    }, starting at ${plan.startUrl ?? "(no page)"}.`,
    `Exported as ${format}: ${plan.steps.filter((s) => s.kind === "act").length} step(s).`,
  ];
  const text =
    format === "deckhand"
      ? deckhandScript(plan, header)
      : playwrightTest(plan, header, { assertExtracts: options.assertExtracts });
  return formatted(text);
}

/**
 * The record a saved LOCAL report keeps (report/session-report.ts writes it as a JSON data block),
 * for exporting a run after the fact. `file` names the report in the error when there is none.
 */
export function recordFromReport(html: string, file: string): RecordedRow[] {
  const block = /<script type="application\/json" id="deckhand-record">([\s\S]*?)<\/script>/.exec(html);
  const none = (why: string) =>
    new ServiceInvalidArgumentError(
      `${file} has no run to export (${why}): give a report written by Deckhand's \`report\` option (a LOCAL run).`,
    );
  if (!block) throw none("no Deckhand record in it");
  let rows: unknown;
  try {
    rows = JSON.parse(block[1]!);
  } catch {
    throw none("its record is not JSON");
  }
  const ok = (row: unknown): row is RecordedRow => {
    const r = row as RecordedRow | null;
    return (
      typeof r === "object" &&
      r !== null &&
      typeof r.method === "string" &&
      typeof r.parameters === "object" &&
      r.parameters !== null &&
      typeof r.result === "object" &&
      r.result !== null &&
      typeof r.timestamp === "number"
    );
  };
  if (!Array.isArray(rows) || !rows.every(ok)) throw none("its record is not a list of operations");
  return rows;
}

let biome: string | null | undefined;

/** Biome's command, when it is installed beside Deckhand (a devDependency of most projects that lint). */
function biomeBin(): string | null {
  if (biome !== undefined) return biome;
  try {
    const require = createRequire(import.meta.url);
    biome = join(dirname(require.resolve("@biomejs/biome/package.json")), "bin", "biome");
  } catch {
    biome = null;
  }
  return biome;
}

/**
 * The text as biome's formatter writes it (its defaults: two spaces, double quotes, 80 columns),
 * when biome can be found; otherwise as written, one statement per line.
 */
function formatted(text: string): string {
  const bin = biomeBin();
  if (!bin) return text;
  // Run outside any project, so that no biome.json around it changes the result.
  const out = spawnSync(
    process.execPath,
    [
      bin,
      "format",
      "--stdin-file-path=script.ts",
      "--indent-style=space",
      "--indent-width=2",
      "--line-width=80",
    ],
    { input: text, encoding: "utf8", timeout: 10_000, cwd: tmpdir() },
  );
  return out.status === 0 && out.stdout ? out.stdout : text;
}
