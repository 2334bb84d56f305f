// Running an exported script for real: a Playwright spec with the real @playwright/test runner
// (the system's Chromium as executablePath, no browser download), type-checked against
// @playwright/test's own types first; a Deckhand script with the pinned Node. Each run gets a
// temporary directory whose node_modules leads to the workspace's, so the script's imports
// resolve as they would in a project that has the packages installed.

import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The workspace root (packages/testkit/src -> ../../..). */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NODE = join(ROOT, "node_modules", "node", "bin", "node");
export const CHROMIUM_FOR_EXPORTS = process.env.CHROME_PATH ?? "/usr/bin/chromium";

export interface ExportedRun {
  status: number | null;
  output: string;
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<ExportedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      // The run's own temporary directory (removed with it): the Playwright runner keeps a
      // transform cache there, which would otherwise outlive the test.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? cwd, TMPDIR: join(cwd, "tmp"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output }));
  });
}

async function workspace<T>(files: Record<string, string>, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "dh-export-"));
  try {
    await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    await mkdir(join(dir, "tmp"));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    types: ["node"],
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    customConditions: ["deckhand-source"],
  },
  include: ["*.ts"],
});

const PLAYWRIGHT_CONFIG = `export default {
  testDir: ".",
  workers: 1,
  retries: 0,
  reporter: "line",
  timeout: 30000,
  use: { headless: true, launchOptions: { executablePath: ${JSON.stringify(CHROMIUM_FOR_EXPORTS)}, args: ["--site-per-process"] } },
};
`;

/**
 * Type-checks a TypeScript file against the installed packages' types; the compiler's output when
 * it fails. Given several files by name instead, checks them in one run of the compiler.
 */
export function typeCheck(file: string, text: string): Promise<ExportedRun>;
export function typeCheck(files: Record<string, string>): Promise<ExportedRun>;
export function typeCheck(file: string | Record<string, string>, text?: string): Promise<ExportedRun> {
  const files = typeof file === "string" ? { [file]: text ?? "" } : file;
  return workspace({ ...files, "tsconfig.json": TSCONFIG, "package.json": '{ "type": "module" }' }, (dir) =>
    run(NODE, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "."], dir, {}),
  );
}

/** Runs a Playwright spec with the real test runner (the one-file case of runPlaywrightSpecs). */
export function runPlaywrightSpec(spec: string, env: Record<string, string> = {}): Promise<ExportedRun> {
  return runPlaywrightSpecs({ "recorded.spec.ts": spec }, env);
}

/** How one test of a spec file ended in a run of several, and when it ran (Date.now() clock). */
export interface SpecResult {
  /** Playwright's verdict: "passed", "failed", "timedOut", "skipped" or "interrupted". */
  status: string;
  /** When the test began, in the runner's worker (before its page existed). */
  startedAt: number;
  /** Its errors' messages, empty when it passed. */
  errors: string[];
}

export interface ExportedSpecsRun extends ExportedRun {
  /** Each spec file's test results, by the file's name as given; a file the runner never ran is absent. */
  results: Map<string, SpecResult[]>;
}

/**
 * Runs several Playwright specs with one runner: one worker, one browser, a new context per test,
 * as a project's suite of recorded specs runs. Tests run one after the other, so whatever a test's
 * pages sent a server arrived after its `startedAt` and, once it is over, before the next test's:
 * the results' start times tell which test sent which request. `env` is the whole run's.
 */
export function runPlaywrightSpecs(
  specs: Record<string, string>,
  env: Record<string, string> = {},
): Promise<ExportedSpecsRun> {
  for (const name of Object.keys(specs))
    if (!/^[\w.-]+\.spec\.ts$/.test(name))
      throw new Error(`a spec's file name must end in .spec.ts: ${name}`);
  return workspace(
    { ...specs, "playwright.config.mjs": PLAYWRIGHT_CONFIG, "package.json": '{ "type": "module" }' },
    async (dir) => {
      const report = join(dir, "report.json");
      const ran = await run(
        NODE,
        [
          join(ROOT, "node_modules", "@playwright", "test", "cli.js"),
          "test",
          "--config",
          "playwright.config.mjs",
          "--reporter=line,json",
        ],
        dir,
        { ...env, PLAYWRIGHT_JSON_OUTPUT_NAME: report },
      );
      const results = new Map<string, SpecResult[]>();
      let parsed: JsonReport | undefined;
      try {
        parsed = JSON.parse(await readFile(report, "utf8")) as JsonReport;
      } catch {
        // No report (the runner did not get that far): the output says why.
      }
      const visit = (suite: JsonSuite): void => {
        for (const spec of suite.specs ?? [])
          for (const test of spec.tests ?? [])
            for (const result of test.results ?? []) {
              const list = results.get(spec.file) ?? [];
              list.push({
                status: result.status,
                startedAt: Date.parse(result.startTime),
                errors: (result.errors ?? []).map((e) => e.message ?? ""),
              });
              results.set(spec.file, list);
            }
        for (const child of suite.suites ?? []) visit(child);
      };
      for (const suite of parsed?.suites ?? []) visit(suite);
      return { ...ran, results };
    },
  );
}

/** The parts of Playwright's JSON report read above. */
interface JsonSuite {
  suites?: JsonSuite[];
  specs?: {
    file: string;
    tests?: { results?: { status: string; startTime: string; errors?: { message?: string }[] }[] }[];
  }[];
}
interface JsonReport {
  suites?: JsonSuite[];
}

/** Runs a Deckhand script (TypeScript, with the library's sources) with the pinned Node. */
export function runDeckhandScript(script: string, env: Record<string, string> = {}): Promise<ExportedRun> {
  return workspace({ "script.ts": script, "package.json": '{ "type": "module" }' }, (dir) =>
    // The test's own temporary directory: Chromium's socket path under a deeper one can pass the
    // length Unix sockets allow (Deckhand removes the profile it makes there when the script ends).
    run(NODE, ["--conditions=deckhand-source", "--no-warnings", "script.ts"], dir, {
      TMPDIR: tmpdir(),
      CHROME_PATH: CHROMIUM_FOR_EXPORTS,
      ...env,
    }),
  );
}
