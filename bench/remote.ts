// remote: what REMOTE mode costs over LOCAL, and how many sessions the service holds at once.
//
// Overhead: the same operations (page.goto, a locator click, observe, extract, act) on the same
// small page, in turns: LOCAL (the library drives its own Chromium) and REMOTE (the client talks to
// `deckhand-server`, a child process on 127.0.0.1, whose pool Chromium does the work; the page API
// goes through its CDP proxy). The scripted model answers at once and the server cache is off, so
// both modes do the same work; the figure is median(REMOTE wall) - median(LOCAL wall).
// Where the difference goes: the service's own record of each AI operation (replay: its start and
// end inside the service) splits REMOTE wall time into transport (HTTP, SSE, routing) and the
// work in the service; one CDP round trip through the proxy and direct, and a bare HTTP request,
// give the unit costs.
//
// Sessions: packages/server/bench/load.ts, in a child process: N sessions at once, each doing
// navigate, observe, act and extract over HTTP, all held open, then ended; sessions held, latency,
// memory per session (PSS) and what was left behind.

import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FixtureServer,
  match,
  type ScriptedModel,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { Deckhand } from "deckhand";
import { z } from "zod";
import { QUIET_ARGS, startDeckhand } from "./support/browser.ts";
import { connectionClassOf, traceCdp } from "./support/cdp-trace.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { type ServiceProcess, startServiceProcess } from "./support/service.ts";
import { median, type Summary, sleep, summarize, timed } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PAGE = "login-small.html";
const ACT = "click the sign in button";
const OBSERVE = "find the sign in button";
const EXTRACT = "the page's main heading and the label of its most important button";
const extractSchema = z.object({ heading: z.string(), button: z.string() });

const OPS = ["page.goto", "locator click", "observe", "extract", "act"] as const;
type Op = (typeof OPS)[number];
/** The operations the service records (the page API goes through the proxy, unrecorded). */
const RECORDED: Partial<Record<Op, string>> = { observe: "observe", extract: "extract", act: "act" };

/** REMOTE - LOCAL target per operation, milliseconds (loopback, instant model). */
const OVERHEAD_TARGET_MS = 15;
/** Sessions the machine must hold at once. */
const SESSIONS_TARGET = 50;

type Samples = Record<Op, number[]>;
const emptySamples = (): Samples => Object.fromEntries(OPS.map((op) => [op, []])) as unknown as Samples;

/** One round on a fresh load of the page; the operations are timed on a document over a second old. */
async function round(dh: Deckhand, url: string, samples: Samples | undefined): Promise<void> {
  const record = (op: Op, ms: number) => samples?.[op].push(ms);
  record("page.goto", (await timed(() => dh.page.goto(url))).ms);
  // The settle step treats a change less than a second old as part of a rhythm (see bench/ops.ts).
  await sleep(1_100);
  const observed = await timed(() => dh.observe(OBSERVE));
  if (observed.value.length !== 1) throw new Error(`observe found ${observed.value.length} elements`);
  record("observe", observed.ms);
  record("extract", (await timed(() => dh.extract(EXTRACT, extractSchema))).ms);
  // Focus only: the page does not change, so the act after it starts on a quiet page.
  record("locator click", (await timed(() => dh.page.locator("#email").click())).ms);
  const acted = await timed(() => dh.act(ACT));
  if (!acted.value.success) throw new Error(`act failed: ${acted.value.message}`);
  record("act", acted.ms);
}

interface ReplayAction {
  method: string;
  timestamp: number;
  endTime?: number;
}

async function recordedDurations(
  service: ServiceProcess,
  sessionId: string,
): Promise<Record<string, number[]>> {
  const response = await fetch(`${service.url}/v1/sessions/${sessionId}/replay`, {
    headers: { "x-platform-api-key": service.apiKey },
  });
  if (!response.ok) throw new Error(`replay answered ${response.status}`);
  const { data } = (await response.json()) as { data: { pages: { actions: ReplayAction[] }[] } };
  const out: Record<string, number[]> = {};
  for (const action of data.pages.flatMap((p) => p.actions)) {
    const list = out[action.method] ?? [];
    list.push((action.endTime ?? action.timestamp) - action.timestamp);
    out[action.method] = list;
  }
  return out;
}

interface Probes {
  /** page.evaluate(() => 1): one CDP round trip (Runtime.callFunctionOn), LOCAL and REMOTE. */
  evaluateLocal: number;
  evaluateRemote: number;
  /** A request the service answers after auth and a session lookup (GET .../cdp without upgrade: 426). */
  httpFloor: number;
  /** extract() of the page text sent straight over HTTP: as JSON, and as Server-Sent Events. */
  pageTextJson: number;
  pageTextSse: number;
  /** CDP commands the client sends for one locator click, and for one page.goto. */
  clickCommands: number;
  gotoCommands: number;
}

async function probes(
  ctx: SuiteContext,
  local: Deckhand,
  remote: Deckhand,
  service: ServiceProcess,
  url: string,
): Promise<Probes> {
  const reps = ctx.reps(40, 10);
  const evaluateLocal: number[] = [];
  const evaluateRemote: number[] = [];
  for (let i = 0; i < reps; i++) {
    evaluateLocal.push((await timed(() => local.page.evaluate(() => 1))).ms);
    evaluateRemote.push((await timed(() => remote.page.evaluate(() => 1))).ms);
  }
  const base = `${service.url}/v1/sessions/${remote.sessionId}`;
  const key = { "x-platform-api-key": service.apiKey };
  const httpFloor: number[] = [];
  for (let i = 0; i < reps; i++) {
    httpFloor.push((await timed(async () => (await fetch(`${base}/cdp`, { headers: key })).text())).ms);
  }
  const pageText = (stream: boolean) =>
    timed(async () => {
      const response = await fetch(`${base}/extract`, {
        method: "POST",
        headers: {
          ...key,
          "content-type": "application/json",
          "x-platform-cache-bypass": "true",
          ...(stream ? { "x-stream-response": "true" } : {}),
        },
        body: JSON.stringify({ frameId: remote.page.targetId }),
      });
      const text = await response.text();
      if (!response.ok || !text.includes("pageText")) throw new Error(`extract answered ${response.status}`);
    });
  const pageTextJson: number[] = [];
  const pageTextSse: number[] = [];
  for (let i = 0; i < Math.ceil(reps / 2); i++) {
    pageTextJson.push((await pageText(false)).ms);
    pageTextSse.push((await pageText(true)).ms);
  }
  const count = async (work: () => Promise<unknown>) => {
    const tracer = traceCdp(connectionClassOf(remote));
    try {
      await work();
    } finally {
      tracer.stop();
    }
    return tracer.calls.length;
  };
  const clickCommands = await count(() => remote.page.locator("#email").click());
  const gotoCommands = await count(() => remote.page.goto(url));
  return {
    evaluateLocal: median(evaluateLocal),
    evaluateRemote: median(evaluateRemote),
    httpFloor: median(httpFloor),
    pageTextJson: median(pageTextJson),
    pageTextSse: median(pageTextSse),
    clickCommands,
    gotoCommands,
  };
}

export interface LoadResult {
  sessions: number;
  projects?: number;
  isolation?: string;
  held: number;
  browsers: number;
  operations: number;
  expectedOperations: number;
  wallMs: number;
  throughput: number;
  latency: Record<string, { n: number; p50: number; p95: number }>;
  operationP50: number;
  operationP95: number;
  pssMbPerSession: number;
  rssMbPerSession: number;
  pssMbTotal: number;
  activeAfter: number;
  liveAfter: number;
  chromeLeft: number;
  failures: number;
  firstFailures: string[];
  clean: boolean;
}

/** Sessions still active and Chrome processes still running after a load test's service closed. */
export function leftBehind(load: LoadResult): number {
  return load.activeAfter + load.liveAfter + load.chromeLeft;
}

const LOAD_SCRIPT = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "packages",
  "server",
  "bench",
  "load.ts",
);

/**
 * packages/server/bench/load.ts with `sessions` at once (and its other flags in `extra`); its
 * figures from its LOAD_RESULT line.
 */
export function runLoad(sessions: number, extra: string[] = []): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=deckhand-source",
        "--no-warnings",
        LOAD_SCRIPT,
        `--sessions=${sessions}`,
        "--json",
        ...extra,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", () => {
      const line = output.split("\n").find((l) => l.startsWith("LOAD_RESULT "));
      if (!line) reject(new Error(`load.ts printed no result:\n${output.slice(-1500)}`));
      else resolve(JSON.parse(line.slice("LOAD_RESULT ".length)) as LoadResult);
    });
  });
}

interface CachedActRow {
  page: string;
  miss: number;
  firstStatus: string;
  hit: Summary;
  hits: number;
  modelCalls: number;
}

/** The same act again and again with the server cache on: the first asks the model, the rest are HITs. */
async function cachedActs(
  ctx: SuiteContext,
  service: ServiceProcess,
  modelConfig: { modelName: string; apiKey: string; baseURL: string },
  site: FixtureServer,
  model: ScriptedModel,
): Promise<CachedActRow[]> {
  const pages = [
    { page: PAGE, path: PAGE, instruction: ACT },
    {
      page: "generated, 20,000 el.",
      path: "/generated/large?elements=20000",
      instruction: "click the target button",
    },
  ];
  const rows: CachedActRow[] = [];
  const dh = new Deckhand({
    env: "REMOTE",
    apiKey: service.apiKey,
    apiUrl: service.url,
    model: modelConfig,
    serverCache: true,
    verbose: 0,
    disablePino: true,
  });
  await dh.init();
  try {
    for (const p of pages) {
      const reps = ctx.reps(15, 5);
      ctx.progress(`remote: server cache, ${p.page}: 1 + ${reps} acts`);
      const load = async () => {
        await dh.page.goto(site.url(p.path));
        await sleep(1_100);
      };
      const calls = model.callCount;
      await load();
      const first = await timed(() => dh.act(p.instruction));
      if (!first.value.success) throw new Error(`act on ${p.page} failed: ${first.value.message}`);
      const samples: number[] = [];
      let hits = 0;
      for (let i = 0; i < reps; i++) {
        await load();
        const again = await timed(() => dh.act(p.instruction));
        if (again.value.cacheStatus === "HIT") hits++;
        samples.push(again.ms);
      }
      rows.push({
        page: p.page,
        miss: first.ms,
        firstStatus: first.value.cacheStatus ?? "-",
        hit: summarize(samples),
        hits,
        modelCalls: model.callCount - calls,
      });
    }
  } finally {
    await dh.close();
  }
  return rows;
}

async function run(ctx: SuiteContext): Promise<SuiteOutput> {
  const out = emptyOutput();
  const [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  const pick = (text: string) =>
    Number(
      (/\[(\d+)\] button: Sign in/.exec(text) ?? /\[(\d+)\] button: Target button/.exec(text))?.[1] ?? -1,
    );
  model.on(match.schemaName("act"), (r) => ({
    elementId: pick(r.text),
    method: "click",
    arguments: [],
    description: "click Sign in",
    completed: true,
  }));
  model.on(match.schemaName("observe"), (r) => ({
    elements: [
      { elementId: pick(r.text), description: "the Sign in button", method: "click", arguments: [] },
    ],
  }));
  model.on(match.schemaName("extract"), { heading: "Sign in to your account", button: "Sign in" });
  const modelConfig = {
    modelName: "openai/gpt-4.1-mini",
    apiKey: "sk-bench-0123456789",
    baseURL: model.baseURL,
  };
  const url = site.url(PAGE);

  const samples = { LOCAL: emptySamples(), REMOTE: emptySamples() };
  let recorded: Record<string, number[]> = {};
  let probe: Probes | undefined;
  let cached: CachedActRow[] = [];
  let warmup = 0;
  let service: ServiceProcess | undefined;
  let local: Deckhand | undefined;
  let remote: Deckhand | undefined;
  try {
    service = await startServiceProcess();
    local = await startDeckhand({ model: modelConfig });
    remote = new Deckhand({
      env: "REMOTE",
      apiKey: service.apiKey,
      apiUrl: service.url,
      model: modelConfig,
      serverCache: false,
      verbose: 0,
      disablePino: true,
    });
    await remote.init();
    service.trackProfiles();
    const reps = ctx.reps(20, 6);
    warmup = 2;
    ctx.progress(`remote: ${warmup} warm-up and ${reps} timed rounds of ${OPS.join(", ")} in each mode`);
    for (let i = 0; i < warmup; i++) {
      await round(local, url, undefined);
      await round(remote, url, undefined);
    }
    // Turns, alternating who goes first, so that both modes see the same machine.
    for (let i = 0; i < reps; i++) {
      const order: ["LOCAL" | "REMOTE", Deckhand][] = [
        ["LOCAL", local],
        ["REMOTE", remote],
      ];
      if (i % 2) order.reverse();
      for (const [mode, dh] of order) await round(dh, url, samples[mode]);
    }
    ctx.progress("remote: profile (service's own times, CDP and HTTP round trips)");
    recorded = await recordedDurations(service, remote.sessionId!);
    probe = await probes(ctx, local, remote, service, url);
    cached = await cachedActs(ctx, service, modelConfig, site, model);
  } finally {
    await remote?.close().catch(() => undefined);
    await local?.close().catch(() => undefined);
    await service?.close();
    await Promise.all([site.close(), model.close()]);
  }

  // ---------- overhead ----------
  const rows: (string | number)[][] = [];
  const misses: string[] = [];
  const overhead: Record<string, number> = {};
  for (const op of OPS) {
    const l = summarize(samples.LOCAL[op]);
    const r = summarize(samples.REMOTE[op]);
    const diff = r.median - l.median;
    overhead[op] = diff;
    const method = RECORDED[op];
    // The service's own time for the REMOTE calls (warm-up ones left out), and what is left: transport.
    const inService = method ? median((recorded[method] ?? []).slice(warmup)) : Number.NaN;
    const check = checkTarget(`${op}: REMOTE - LOCAL, small page`, diff, "ms", "<=", OVERHEAD_TARGET_MS);
    if (!check.met && probe) {
      check.comment = method
        ? `in the service ${fmtMs(inService)} ms (LOCAL whole: ${fmtMs(l.median)}), transport ${fmtMs(r.median - inService)} ms`
        : `${op === "page.goto" ? probe.gotoCommands : probe.clickCommands} CDP commands x ` +
          `${fmtMs(probe.evaluateRemote - probe.evaluateLocal)} ms proxy cost each`;
      misses.push(`${check.figure}: ${fmtMs(diff)} ms; ${check.comment}`);
    }
    out.targets.push(check);
    rows.push([
      op,
      fmtMs(l.median),
      fmtMs(r.median),
      fmtMs(diff),
      fmtMs(l.p95),
      fmtMs(r.p95),
      method ? fmtMs(inService) : "-",
      method ? fmtMs(r.median - inService) : "-",
      `${check.target}: ${check.met ? "yes" : "NO"}`,
    ]);
  }
  out.tables.push({
    title: `REMOTE over LOCAL per operation (ms, medians of ${samples.LOCAL.act.length} turns; ${PAGE}, instant scripted model)`,
    columns: [
      "operation",
      "LOCAL",
      "REMOTE",
      "REMOTE - LOCAL",
      "LOCAL p95",
      "REMOTE p95",
      "in the service",
      "transport",
      "target",
    ],
    rows,
    notes: [
      "REMOTE: the client over HTTP (operations streamed as Server-Sent Events) to deckhand-server in a child",
      "  process on 127.0.0.1; page.goto and the locator click go through the service's CDP proxy.",
      "in the service: end - start of the operation in the service's replay record (its Deckhand work and",
      "  metrics); transport: REMOTE wall - that (HTTP, SSE, auth and session look-up, the client's own work).",
    ],
  });
  if (probe) {
    out.tables.push({
      title: "Profile: unit costs on loopback (medians, ms)",
      columns: ["what", "ms", "note"],
      rows: [
        ["page.evaluate, LOCAL", fmtMs(probe.evaluateLocal), "one CDP round trip to Chromium"],
        ["page.evaluate, REMOTE", fmtMs(probe.evaluateRemote), "the same through the CDP proxy"],
        ["proxy cost per CDP command", fmtMs(probe.evaluateRemote - probe.evaluateLocal), ""],
        ["CDP commands of a locator click", fmtInt(probe.clickCommands), "sent by the client, REMOTE"],
        ["CDP commands of a page.goto", fmtInt(probe.gotoCommands), "sent by the client, REMOTE"],
        [
          "HTTP request with auth + session look-up",
          fmtMs(probe.httpFloor),
          "GET .../cdp without upgrade (426)",
        ],
        ["extract() page text over HTTP, JSON", fmtMs(probe.pageTextJson), "fetch, no client library"],
        ["extract() page text over HTTP, SSE", fmtMs(probe.pageTextSse), "the same, x-stream-response: true"],
      ],
    });
  }

  if (cached.length) {
    out.tables.push({
      title:
        "act through the server cache, REMOTE (ms, medians; the same instruction on a fresh load of the page)",
      columns: ["page", "first act (MISS)", "cached act (HIT)", "HIT p95", "HITs", "model calls in all"],
      rows: cached.map((c) => [
        c.page,
        `${fmtMs(c.miss)} (${c.firstStatus})`,
        fmtMs(c.hit.median),
        fmtMs(c.hit.p95),
        `${c.hits}/${c.hit.n}`,
        fmtInt(c.modelCalls),
      ]),
      notes: [
        "A HIT checks each cached step's element (role and name at its XPath), then replays it with real input",
        "  events: no model call, and no listing of the whole page.",
      ],
    });
    for (const c of cached) {
      out.targets.push(
        checkTarget(`server cache: every repeated act a HIT, ${c.page}`, c.hits, "", "==", c.hit.n),
      );
    }
  }

  // ---------- sessions ----------
  const steps = ctx.quick ? [SESSIONS_TARGET] : [SESSIONS_TARGET, 2 * SESSIONS_TARGET];
  const loads: LoadResult[] = [];
  for (const sessions of steps) {
    ctx.progress(`remote: load test, ${sessions} sessions at once (packages/server/bench/load.ts)`);
    const load = await runLoad(sessions);
    loads.push(load);
    if (load.failures > 0 || leftBehind(load) > 0) break;
  }
  out.tables.push({
    title:
      "Sessions at once (packages/server/bench/load.ts: start, navigate, observe, act, extract, hold, end)",
    columns: [
      "sessions",
      "held",
      "browsers",
      "ops answered",
      "op p50",
      "op p95",
      "start p50",
      "start p95",
      "PSS/session MB",
      "PSS total MB",
      "left behind",
    ],
    rows: loads.map((l) => [
      l.sessions,
      l.held,
      l.browsers,
      `${l.operations}/${l.expectedOperations}`,
      fmtMs(l.operationP50),
      fmtMs(l.operationP95),
      fmtMs(l.latency.start?.p50),
      fmtMs(l.latency.start?.p95),
      l.pssMbPerSession.toFixed(1),
      fmtInt(l.pssMbTotal),
      leftBehind(l) === 0 ? "nothing" : `${l.activeAfter} sessions, ${l.chromeLeft} Chrome`,
    ]),
    notes: [
      "All sessions start at once and each runs its four operations while the others do: latency is what a",
      "  client sees under that load on this machine. PSS: the service process and its browsers' process trees",
      "  (shared pages shared out), less the process before the run, per session.",
      ...loads
        .filter((l) => l.failures > 0)
        .map(
          (l) =>
            `${l.sessions} sessions: ${l.failures} had an operation fail, e.g. ${l.firstFailures[0]?.slice(0, 150)}`,
        ),
    ],
  });
  // Held means: every session started, did its four operations, and was ended with nothing left.
  const first = loads[0]!;
  out.targets.push(
    checkTarget(
      "sessions held at once, every operation answered",
      first.failures === 0 ? first.held : 0,
      "",
      ">=",
      SESSIONS_TARGET,
    ),
  );
  out.targets.push(
    checkTarget(`load: left behind after ${first.sessions} sessions`, leftBehind(first), "", "==", 0),
  );

  for (const miss of misses) out.notes.push(`Missed: ${miss}`);
  out.figures = { samples, overhead, recorded, probe, loads, quietArgs: QUIET_ARGS };
  return out;
}

export const remoteSuite: Suite = {
  name: "remote",
  title: "REMOTE overhead over LOCAL per operation, and sessions the service holds at once",
  run,
};
