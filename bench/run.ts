// `npm run bench`: runs the benchmark suites, prints a table per suite, and writes the same figures
// to bench/results/latest.json.
//
//   npm run bench                        every suite
//   npm run bench -- --only=init,snapshot
//   npm run bench -- --only=cdp-count   DevTools commands of one act(action)
//   npm run bench -- --only=cdp-frame   the event loop's time per 8 MiB CDP proxy message
//   npm run bench -- --quick             fewer repetitions (a smoke run, noisier figures)
//   npm run bench -- --only=soak --soak-minutes=2   a shorter soak (default 15 minutes a run)
//
// Figures are medians over repeated runs (p95 / min / max beside them where the spread matters),
// each printed next to its target from the issues. On a shared or busy machine they are noisy:
// compare runs made on an idle one.

import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentSuite } from "./agent.ts";
import { cdpCountSuite } from "./cdp-count.ts";
import { cdpFrameSuite } from "./cdp-frame.ts";
import { clusterSuite } from "./cluster.ts";
import { cuaSuite } from "./cua.ts";
import { dashboardSuite } from "./dashboard.ts";
import { explicitSuite } from "./explicit.ts";
import { exportSuite } from "./export.ts";
import { initSuite } from "./init.ts";
import { isolationSuite } from "./isolation.ts";
import { opsSuite } from "./ops.ts";
import { remoteSuite } from "./remote.ts";
import { schemaSuite } from "./schema.ts";
import { sessionStartSuite } from "./session-start.ts";
import { sloppySuite } from "./sloppy.ts";
import { slowPathsSuite } from "./slow-paths.ts";
import { snapshotSuite } from "./snapshot.ts";
import { soakSuite } from "./soak.ts";
import { browserProcessCount, leftBehind, profileDirCount } from "./support/browser.ts";
import { renderTable, renderTargets, type SuiteOutput, type TargetCheck } from "./support/report.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";
import { viewerSuite } from "./viewer.ts";

/**
 * Every suite, in the order they run. A new suite is a file in bench/ exporting a `Suite`, listed
 * here; `--only=<name>` then selects it. Browsers a suite starts come from support/browser.ts
 * (startDeckhand, or rememberDir for a profile it makes itself), so that the check at the end of
 * the run covers them; targets go through checkTarget() so they are printed and summed up.
 */
const SUITES: Suite[] = [
  initSuite,
  snapshotSuite,
  opsSuite,
  cdpCountSuite,
  cdpFrameSuite,
  remoteSuite,
  isolationSuite,
  clusterSuite,
  sessionStartSuite,
  schemaSuite,
  cuaSuite,
  viewerSuite,
  dashboardSuite,
  explicitSuite,
  agentSuite,
  soakSuite,
  sloppySuite,
  exportSuite,
  slowPathsSuite,
];

interface Args {
  only: string[] | undefined;
  quick: boolean;
  soakMinutes: number | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { only: undefined, quick: false, soakMinutes: undefined };
  for (const arg of argv) {
    if (arg === "--quick") args.quick = true;
    else if (arg.startsWith("--soak-minutes=")) {
      const minutes = Number(arg.slice("--soak-minutes=".length));
      if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) {
        console.error(`--soak-minutes must be a number of minutes above 0; got ${JSON.stringify(arg)}.`);
        process.exit(2);
      }
      args.soakMinutes = minutes;
    } else if (arg.startsWith("--only=")) {
      args.only = arg
        .slice("--only=".length)
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    } else if (arg === "--help" || arg === "-h") {
      console.log(
        `Usage: npm run bench -- [--only=${SUITES.map((s) => s.name).join(",")}] [--quick] [--soak-minutes=N]\n\n` +
          SUITES.map((s) => `  ${s.name.padEnd(10)} ${s.title}`).join("\n"),
      );
      process.exit(0);
    } else {
      console.error(`Unknown option ${JSON.stringify(arg)}. Try --help.`);
      process.exit(2);
    }
  }
  return args;
}

function selectSuites(only: string[] | undefined): Suite[] {
  if (!only) return SUITES.filter((s) => !s.onlyWhenNamed);
  const unknown = only.filter((name) => !SUITES.some((s) => s.name === name));
  if (unknown.length) {
    console.error(
      `No suite named ${unknown.map((n) => JSON.stringify(n)).join(", ")}. ` +
        `Suites: ${SUITES.map((s) => s.name).join(", ")}.`,
    );
    process.exit(2);
  }
  return SUITES.filter((s) => only.includes(s.name));
}

function machine(): Record<string, unknown> {
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    totalMemMB: Math.round(totalmem() / 1024 / 1024),
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const suites = selectSuites(args.only);
  const started = new Date();
  const before = {
    machine: machine(),
    profileDirs: profileDirCount(),
    browserProcesses: browserProcessCount(),
  };
  console.log(
    `Deckhand benchmarks${args.quick ? " (--quick)" : ""}: ${suites.map((s) => s.name).join(", ")}\n` +
      `node ${process.version}, ${before.machine.cpus} CPUs, load average ${(before.machine.loadavg as number[]).join(" ")}` +
      ` (on a busy machine the figures are noisy)\n`,
  );

  const ctx: SuiteContext = {
    quick: args.quick,
    soakMinutes: args.soakMinutes,
    reps: (full, quick) => (args.quick ? (quick ?? Math.max(2, Math.ceil(full / 3))) : full),
    progress: (message) => process.stderr.write(`  · ${message}\n`),
  };

  const results: Record<string, unknown> = {};
  const allTargets: (TargetCheck & { suite: string })[] = [];
  let failed = false;
  for (const suite of suites) {
    console.log(`== ${suite.name}: ${suite.title}\n`);
    const suiteStarted = performance.now();
    let output: SuiteOutput | undefined;
    try {
      output = await suite.run(ctx);
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.log(`  The ${suite.name} suite failed: ${message}\n`);
      results[suite.name] = { error: message, durationMs: Math.round(performance.now() - suiteStarted) };
      continue;
    }
    for (const table of output.tables) console.log(`${renderTable(table)}\n`);
    if (output.targets.length) console.log(`${renderTargets(output.targets)}\n`);
    for (const note of output.notes) console.log(`  ${note}`);
    if (output.notes.length) console.log("");
    const durationMs = Math.round(performance.now() - suiteStarted);
    console.log(`  (${suite.name} took ${(durationMs / 1000).toFixed(1)} s)\n`);
    results[suite.name] = { durationMs, ...output };
    allTargets.push(...output.targets.map((t) => ({ suite: suite.name, ...t })));
  }

  // Nothing of ours may outlive the run: no browser process, no profile or scratch directory.
  const leaks = leftBehind();
  const after = {
    machine: machine(),
    profileDirs: profileDirCount(),
    browserProcesses: browserProcessCount(),
  };
  const clean = leaks.processes.length === 0 && leaks.dirs.length === 0;
  console.log(
    `== Left behind by this run: ${leaks.processes.length} browser processes, ${leaks.dirs.length} directories ` +
      `(of ${leaks.tracked} profiles and scratch directories used): ${clean ? "clean" : "NOT CLEAN"}`,
  );
  for (const p of leaks.processes) console.log(`  process ${p.pid}: ${p.args.slice(0, 3).join(" ")}`);
  for (const d of leaks.dirs) console.log(`  directory ${d}`);
  console.log(
    `  Machine-wide (anyone's, for context): deckhand-profile-* dirs ${before.profileDirs} -> ${after.profileDirs}, ` +
      `browser processes ${before.browserProcesses} -> ${after.browserProcesses}; load average now ` +
      `${(after.machine.loadavg as number[]).join(" ")}`,
  );
  const missed = allTargets.filter((t) => !t.met);
  console.log(
    `== Targets: ${allTargets.length - missed.length} of ${allTargets.length} met` +
      (missed.length ? `; missed: ${missed.map((t) => `${t.suite}/${t.figure}`).join("; ")}` : ""),
  );

  const file = join(dirname(fileURLToPath(import.meta.url)), "results", "latest.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: started.toISOString(),
        finishedAt: new Date().toISOString(),
        options: args,
        before,
        after,
        suites: results,
        targets: allTargets,
        leftBehind: { clean, ...leaks },
      },
      null,
      2,
    )}\n`,
  );
  console.log(`== Figures written to ${file}`);
  process.exitCode = failed || !clean ? 1 : 0;
  // A handle someone forgot would keep the process alive; say so instead of hanging.
  setTimeout(() => {
    console.error("bench: something is still open after the run; exiting anyway.");
    process.exit(process.exitCode ?? 1);
  }, 3_000).unref();
}

await main();
