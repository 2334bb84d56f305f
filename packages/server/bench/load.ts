// Load test of the service (not part of `npm test`): N sessions at once, each doing navigate,
// observe, act and extract over HTTP against the scripted model on a fixture page, all held open
// together, then ended. Prints sessions held, throughput, p50/p95 latency per operation, memory per
// session (this process plus the browsers' process trees, from /proc), and checks that nothing was
// lost or leaked: every operation answered, every session ended, no Chrome process left.
//
//   node --conditions=deckhand-source packages/server/bench/load.ts
//   node --conditions=deckhand-source packages/server/bench/load.ts --sessions=20 --browsers=2 --per-browser=10
//   node --conditions=deckhand-source packages/server/bench/load.ts --sessions=50 --projects=10 --isolation=session
//
// Flags: --sessions=N (50), --projects=N (1: one API key; sessions are spread over N keys of N
// projects), --isolation=project|session (project), --browsers=N (4, at least one per project;
// with --isolation=session, one per session), --per-browser=N (sessions / browsers),
// --model-latency-ms=N (0: the figures are the service's own), --server-cache (off: every
// operation asks the model), --json (a last line `LOAD_RESULT {json}` with the figures, for
// bench/remote.ts and bench/isolation.ts).

import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  liveChromeProcesses,
  match,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { createLogger } from "../src/logger.ts";
import { createService } from "../src/service.ts";
import { SqliteStore } from "../src/store/sqlite-store.ts";

// ---------- options ----------

function flag(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return fallback;
  const value = Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 0) {
    console.error(`--${name} must be a whole number; got ${JSON.stringify(arg)}.`);
    process.exit(2);
  }
  return value;
}

const SESSIONS = flag("sessions", 50);
const PROJECTS = Math.max(1, flag("projects", 1));
const ISOLATION =
  process.argv.find((a) => a.startsWith("--isolation="))?.slice("--isolation=".length) ?? "project";
if (ISOLATION !== "project" && ISOLATION !== "session") {
  console.error(`--isolation must be project or session; got ${JSON.stringify(ISOLATION)}.`);
  process.exit(2);
}
const BROWSERS = flag("browsers", ISOLATION === "session" ? SESSIONS : Math.max(4, PROJECTS));
const PER_BROWSER = flag("per-browser", Math.ceil(SESSIONS / BROWSERS));
const MODEL_LATENCY_MS = flag("model-latency-ms", 0);
const SERVER_CACHE = process.argv.includes("--server-cache");
const JSON_SUMMARY = process.argv.includes("--json");

// ---------- /proc ----------

function children(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = map.get(ppid) ?? [];
      list.push(Number(entry));
      map.set(ppid, list);
    } catch {
      // gone
    }
  }
  return map;
}

function tree(root: number, map: Map<number, number[]>): number[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(map.get(out[i]!) ?? []));
  return out;
}

/** kB of a field of /proc/<pid>/status or smaps_rollup (0 when unreadable). */
function kb(pid: number, file: "status" | "smaps_rollup", field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/${file}`, "utf8"),
    );
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

function memory(browserRoots: number[]): { rssMb: number; pssMb: number; processes: number } {
  const map = children();
  const pids = [process.pid, ...browserRoots.flatMap((root) => tree(root, map))];
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    rss += kb(pid, "status", "VmRSS");
    pss += kb(pid, "smaps_rollup", "Pss");
  }
  return { rssMb: rss / 1024, pssMb: pss / 1024, processes: pids.length };
}

// ---------- figures ----------

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const latencies = new Map<string, number[]>();
function record(op: string, ms: number): void {
  const list = latencies.get(op) ?? [];
  list.push(ms);
  latencies.set(op, list);
}

// ---------- run ----------

const marker = `--deckhand-load-test=${randomBytes(6).toString("hex")}`;
const dir = mkdtempSync(path.join(tmpdir(), "deckhand-load-"));
const store = new SqliteStore(dir);
const [site, model] = await Promise.all([
  startFixtureServer(),
  startScriptedModel({ latencyMs: MODEL_LATENCY_MS }),
]);
const idOf = (text: string, line: RegExp) => Number(new RegExp(`\\[(\\d+)\\] ${line.source}`).exec(text)![1]);
model.on(match.schemaName("observe"), (r) => ({
  elements: [
    { elementId: idOf(r.text, /button: Sign in/), description: "the sign-in button", method: "click" },
  ],
}));
model.on(match.schemaName("act"), (r) => ({
  elementId: idOf(r.text, /textbox: Username/),
  method: "fill",
  arguments: ["%user%"],
  description: "type the user name",
  completed: true,
}));
model.on(match.schemaName("extract"), { extraction: "a sign-in form" });

const { app, sessions } = await createService({
  store,
  logger: createLogger({ level: "warn" }),
  maxSessions: SESSIONS,
  // The load test measures the sessions the service holds, not the quota of one project.
  maxSessionsPerProject: SESSIONS,
  serverCache: SERVER_CACHE,
  browsers: {
    isolation: ISOLATION,
    maxBrowsers: BROWSERS,
    sessionsPerBrowser: PER_BROWSER,
    args: ["--disable-background-networking", "--disable-component-update", "--no-first-run", marker],
  },
});
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
const keys = await Promise.all(
  Array.from({ length: PROJECTS }, (_, i) => store.createKey({ name: `load test project ${i}` })),
);
const headersOf = (n: number) => ({
  "x-platform-api-key": keys[n % PROJECTS]!.key,
  "content-type": "application/json",
  "x-model-api-key": "sk-load",
});
const modelConfig = { modelName: "openai/gpt-4.1-mini", baseURL: model.baseURL };

async function call(n: number, op: string, url: string, body: unknown): Promise<Record<string, unknown>> {
  const started = performance.now();
  const response = await fetch(`${base}${url}`, {
    method: "POST",
    headers: headersOf(n),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  record(op, performance.now() - started);
  if (response.status !== 200) throw new Error(`${op} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text).data;
}

const failures: string[] = [];
let held = 0;
let maxHeld = 0;
let peak = { rssMb: 0, pssMb: 0, processes: 0 };
/** Browser processes while every session was held. */
let browsersUsed = 0;
let release!: () => void;
const allHeld = new Promise<void>((resolve) => {
  release = resolve;
});
let arrived = 0;
const idle = memory([]);

async function client(n: number): Promise<number> {
  let id: string | undefined;
  let ops = 0;
  try {
    id = String((await call(n, "start", "/v1/sessions/start", {})).sessionId);
    held++;
    maxHeld = Math.max(maxHeld, held);
    const path = (op: string) => `/v1/sessions/${id}/${op}`;
    await call(n, "navigate", path("navigate"), { url: site.url("form.html") });
    const observed = (await call(n, "observe", path("observe"), {
      instruction: "find the sign-in button",
      options: { model: modelConfig },
    })) as { result: unknown[] };
    if (observed.result.length !== 1) throw new Error("observe found nothing");
    const acted = (await call(n, "act", path("act"), {
      input: "type the user name",
      options: { model: modelConfig, variables: { user: `user-${n}` } },
    })) as { result: { success: boolean } };
    if (!acted.result.success) throw new Error("act did not succeed");
    await call(n, "extract", path("extract"), {
      instruction: "what is this page",
      options: { model: modelConfig },
    });
    ops = 4;
  } catch (error) {
    failures.push(`session ${n}: ${(error as Error).message}`);
  }
  // Hold every session until all have done their work: the memory figure is for N live sessions.
  if (++arrived === SESSIONS) {
    peak = memory(sessions.pool.browserPids());
    browsersUsed = sessions.pool.size;
    release();
  }
  await allHeld;
  if (id) {
    try {
      await call(n, "end", `/v1/sessions/${id}/end`, undefined);
      held--;
    } catch (error) {
      failures.push(`end ${n}: ${(error as Error).message}`);
    }
  }
  return ops;
}

console.log(
  `Load test: ${SESSIONS} sessions at once of ${PROJECTS} project(s), --isolation ${ISOLATION}, at most ` +
    `${BROWSERS} browser(s) x ${PER_BROWSER} session(s), model latency ` +
    `${MODEL_LATENCY_MS} ms, server cache ${SERVER_CACHE ? "on" : "off"}, on ${readFileSync("/proc/cpuinfo", "utf8").match(/^processor/gm)?.length ?? "?"} CPU(s).`,
);
const started = performance.now();
const done = await Promise.all(Array.from({ length: SESSIONS }, (_, n) => client(n)));
const wallMs = performance.now() - started;
browsersUsed = Math.max(browsersUsed, sessions.pool.size);

const activeAfter = await store.countActiveSessions();
const liveAfter = sessions.size;
await app.close();
const chromeLeft = await waitForNoChrome(marker, 10_000);
await Promise.all([site.close(), model.close()]);
await store.close();
rmSync(dir, { recursive: true, force: true });

// ---------- report ----------

const totalOps = done.reduce((a, b) => a + b, 0);
const opsMs = ["navigate", "observe", "act", "extract"].flatMap((op) => latencies.get(op) ?? []);
const sum = opsMs.reduce((a, b) => a + b, 0);
console.log("");
console.log(`sessions held at once     ${maxHeld} of ${SESSIONS}, in ${browsersUsed} browser process(es)`);
console.log(
  `operations answered       ${totalOps} of ${SESSIONS * 4} (navigate, observe, act, extract per session)`,
);
console.log(`model calls               ${model.callCount}`);
console.log(`wall time                 ${(wallMs / 1000).toFixed(1)} s (start to last end)`);
console.log(`throughput                ${(totalOps / (wallMs / 1000)).toFixed(1)} operations/s`);
console.log(`mean operation time       ${(sum / Math.max(1, opsMs.length)).toFixed(0)} ms`);
console.log("");
console.log("latency (ms)   count      p50      p95      max");
for (const op of ["start", "navigate", "observe", "act", "extract", "end"]) {
  const sorted = [...(latencies.get(op) ?? [])].sort((a, b) => a - b);
  console.log(
    `${op.padEnd(12)} ${String(sorted.length).padStart(7)} ${percentile(sorted, 50).toFixed(0).padStart(8)} ` +
      `${percentile(sorted, 95).toFixed(0).padStart(8)} ${(sorted.at(-1) ?? Number.NaN).toFixed(0).padStart(8)}`,
  );
}
console.log("");
console.log(
  `memory with ${SESSIONS} sessions   RSS ${peak.rssMb.toFixed(0)} MB, PSS ${peak.pssMb.toFixed(0)} MB over ` +
    `${peak.processes} processes (this process ${idle.rssMb.toFixed(0)} MB RSS before the run)`,
);
console.log(
  `memory per session        RSS ${((peak.rssMb - idle.rssMb) / SESSIONS).toFixed(1)} MB, PSS ` +
    `${((peak.pssMb - idle.pssMb) / SESSIONS).toFixed(1)} MB (RSS counts shared pages in every process; PSS shares them out)`,
);
console.log("");
console.log(`sessions still active     ${activeAfter} in the store, ${liveAfter} running`);
console.log(`Chrome processes left     ${chromeLeft.length} (after the service closed)`);
console.log(`leftover live processes   ${liveChromeProcesses(marker).length}`);
if (failures.length > 0) {
  console.log(`\nFAILURES (${failures.length}):`);
  for (const failure of failures.slice(0, 20)) console.log(`  ${failure}`);
}
const clean = failures.length === 0 && activeAfter === 0 && liveAfter === 0 && chromeLeft.length === 0;
console.log(clean ? "\nOK: nothing lost, nothing leaked." : "\nNOT CLEAN: see above.");
if (JSON_SUMMARY) {
  const latency = Object.fromEntries(
    ["start", "navigate", "observe", "act", "extract", "end"].map((op) => {
      const sorted = [...(latencies.get(op) ?? [])].sort((a, b) => a - b);
      return [op, { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95) }];
    }),
  );
  const all = [...opsMs].sort((a, b) => a - b);
  console.log(
    `LOAD_RESULT ${JSON.stringify({
      sessions: SESSIONS,
      projects: PROJECTS,
      isolation: ISOLATION,
      held: maxHeld,
      browsers: browsersUsed,
      operations: totalOps,
      expectedOperations: SESSIONS * 4,
      wallMs,
      throughput: totalOps / (wallMs / 1000),
      latency,
      operationP50: percentile(all, 50),
      operationP95: percentile(all, 95),
      rssMbPerSession: (peak.rssMb - idle.rssMb) / SESSIONS,
      pssMbPerSession: (peak.pssMb - idle.pssMb) / SESSIONS,
      pssMbTotal: peak.pssMb,
      activeAfter,
      liveAfter,
      chromeLeft: chromeLeft.length,
      failures: failures.length,
      firstFailures: failures.slice(0, 5),
      clean,
    })}`,
  );
}
process.exitCode = clean ? 0 : 1;
