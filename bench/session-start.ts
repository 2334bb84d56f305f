// `npm run bench -- --only=session-start`: how long POST /v1/sessions/start takes on one node
// (`deckhand-server` as a child process on 127.0.0.1, SQLite, as deployed), timed by the client
// from request to answer:
//
// - a project's first session on this node: with a warm browser waiting (the default
//   --warm-browsers 1; each start waits for the service's own signals, /metrics
//   deckhand_browsers{state="warm"} and deckhand_spare_contexts, that the pool has refilled and the
//   warm browser's spare context is made) and cold (--warm-browsers 0: a browser launches for it);
// - a further session of a project that has one running (its browser is there: the spare context
//   made after the previous start, or a new context and page), started once that spare is ready
//   (/metrics deckhand_spare_contexts), and back to back (each sent when the previous answered);
// - 20 starts at once of one project new to the node (the warm browser, then launches; a running
//   browser of the project takes up to 12 while another of its browsers launches), warm and cold.
//
// Every session is ended after its figure; the service is stopped (SIGTERM) and checked for
// leftovers by the run's final check.

import { checkTarget, emptyOutput, fmtMs, type SuiteOutput } from "./support/report.ts";
import { type ServiceProcess, startServiceProcess } from "./support/service.ts";
import { type Summary, summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

/** Goals of issue 19 (milliseconds). */
const FIRST_WARM_TARGET_MS = 400;
const SAME_PROJECT_TARGET_MS = 150;
const BURST_P50_TARGET_MS = 1000;
const BURST = 20;

interface Started {
  id: string;
  ms: number;
}

async function start(service: ServiceProcess, key: string): Promise<Started> {
  const began = performance.now();
  const response = await fetch(`${service.url}/v1/sessions/start`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-platform-api-key": key },
    body: "{}",
  });
  const text = await response.text();
  const ms = performance.now() - began;
  if (response.status !== 200) throw new Error(`start answered ${response.status}: ${text.slice(0, 300)}`);
  return { id: JSON.parse(text).data.sessionId as string, ms };
}

async function end(service: ServiceProcess, key: string, id: string): Promise<void> {
  const response = await fetch(`${service.url}/v1/sessions/${id}/end`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-platform-api-key": key },
    body: "{}",
  });
  if (response.status !== 200) throw new Error(`end answered ${response.status}: ${await response.text()}`);
}

/** A sample of the service's /metrics (served on --metrics-port), e.g. `deckhand_browsers{state="warm"}`. */
async function metric(service: ServiceProcess, sample: string): Promise<number> {
  // Printed just after the "listening on" line startServiceProcess waits for.
  const deadline = Date.now() + 30_000;
  const address = () => /metrics on (http:\/\/\S+)/.exec(service.stdout())?.[1];
  while (!address()) {
    if (Date.now() > deadline) throw new Error("the service printed no metrics address");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const url = address()!;
  const text = await (await fetch(url)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? Number.NaN : Number(line.slice(sample.length + 1));
}

/** Until the sample reaches `count`: the service's own signal, polled. */
async function until(service: ServiceProcess, sample: string, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await metric(service, sample)) < count) {
    if (Date.now() > deadline) throw new Error(`${sample} did not reach ${count} in 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Until what the service makes ahead is ready: a warm browser, and a spare context in it and in
 * every project browser (lingering ones of earlier projects included). Its own gauges, polled.
 */
async function untilReady(service: ServiceProcess): Promise<void> {
  await until(service, 'deckhand_browsers{state="warm"}', 1);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [warm, assigned, spares] = await Promise.all([
      metric(service, 'deckhand_browsers{state="warm"}'),
      metric(service, 'deckhand_browsers{state="assigned"}'),
      metric(service, "deckhand_spare_contexts"),
    ]);
    if (warm >= 1 && spares >= warm + assigned) return;
    if (Date.now() > deadline)
      throw new Error("the service's warm browser and spare contexts were not ready in 120 s");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface Mode {
  warm: boolean;
  first: Summary;
  /** Same project, each start once the previous one's spare context is ready (warm) or 300 ms after it (cold). */
  same: Summary;
  /** Same project, each start sent as soon as the previous one answered. */
  backToBack: Summary;
  burst: Summary;
  burstWallMs: number;
  /** deckhand_browser_assignments_total by source at the end. */
  fromWarm: number;
  cold: number;
}

async function runMode(ctx: SuiteContext, warm: boolean): Promise<Mode> {
  const firsts = ctx.reps(8, 3);
  const sames = ctx.reps(15, 5);
  // One key (project) per first session, one for the same-project series, one for the burst.
  const service = await startServiceProcess({
    keys: firsts + 2,
    args: [
      `--warm-browsers=${warm ? 1 : 0}`,
      "--metrics-port=0",
      `--max-sessions=${BURST + 5}`,
      `--max-sessions-per-project=${BURST}`,
      "--max-browsers=10",
    ],
  });
  try {
    service.trackProfiles();
    const keys = service.apiKeys;
    const firstMs: number[] = [];
    for (let i = 0; i < firsts; i++) {
      if (warm) await untilReady(service);
      const started = await start(service, keys[i]!);
      service.trackProfiles();
      firstMs.push(started.ms);
      await end(service, keys[i]!, started.id);
    }

    const project = keys[firsts]!;
    if (warm) await untilReady(service);
    const held = await start(service, project);
    const sameMs: number[] = [];
    for (let i = 0; i < sames; i++) {
      // A client that starts sessions as it needs them: the spare made after the previous start is
      // ready (the service's gauge). Without warm browsers there is none to wait for: a pause alike.
      if (warm) await untilReady(service);
      else await new Promise((resolve) => setTimeout(resolve, 300));
      const started = await start(service, project);
      sameMs.push(started.ms);
      // Ended at once: the project keeps one session, in one browser (8 sessions fit).
      await end(service, project, started.id);
    }
    const backToBackMs: number[] = [];
    for (let i = 0; i < sames; i++) {
      const started = await start(service, project);
      backToBackMs.push(started.ms);
      await end(service, project, started.id);
    }
    await end(service, project, held.id);

    const burstKey = keys[firsts + 1]!;
    if (warm) await untilReady(service);
    const began = performance.now();
    const burst = await Promise.all(Array.from({ length: BURST }, () => start(service, burstKey)));
    const burstWallMs = performance.now() - began;
    service.trackProfiles();
    for (const s of burst) await end(service, burstKey, s.id);

    return {
      warm,
      first: summarize(firstMs),
      same: summarize(sameMs),
      backToBack: summarize(backToBackMs),
      burst: summarize(burst.map((s) => s.ms)),
      burstWallMs,
      fromWarm: await metric(service, 'deckhand_browser_assignments_total{source="warm"}'),
      cold: await metric(service, 'deckhand_browser_assignments_total{source="cold"}'),
    };
  } finally {
    service.trackProfiles();
    await service.close();
  }
}

async function run(ctx: SuiteContext): Promise<SuiteOutput> {
  const out = emptyOutput();
  const modes: Mode[] = [];
  for (const warm of [true, false]) {
    ctx.progress(`session-start: --warm-browsers ${warm ? 1 : 0}`);
    modes.push(await runMode(ctx, warm));
  }
  const [warm, cold] = modes as [Mode, Mode];
  out.targets.push(
    checkTarget(
      "a project's first session, warm browser, median",
      warm.first.median,
      "ms",
      "<=",
      FIRST_WARM_TARGET_MS,
    ),
    checkTarget("a same-project session, median", warm.same.median, "ms", "<=", SAME_PROJECT_TARGET_MS),
    checkTarget(
      `${BURST} starts at once (one new project), p50`,
      warm.burst.median,
      "ms",
      "<=",
      BURST_P50_TARGET_MS,
    ),
  );
  out.tables.push({
    title: "POST /v1/sessions/start on one node (client-side, request to answer; median / p95 / max)",
    columns: [
      "--warm-browsers",
      "first of a project",
      "same project",
      "same, back to back",
      `${BURST} at once p50`,
      `${BURST} at once p95`,
      `${BURST} at once wall`,
      "browsers warm / cold",
    ],
    rows: modes.map((m) => [
      m.warm ? "1 (default)" : "0",
      `${fmtMs(m.first.median)} / ${fmtMs(m.first.p95)} / ${fmtMs(m.first.max)}`,
      `${fmtMs(m.same.median)} / ${fmtMs(m.same.p95)} / ${fmtMs(m.same.max)}`,
      `${fmtMs(m.backToBack.median)} / ${fmtMs(m.backToBack.p95)} / ${fmtMs(m.backToBack.max)}`,
      fmtMs(m.burst.median),
      fmtMs(m.burst.p95),
      fmtMs(m.burstWallMs),
      `${m.fromWarm} / ${m.cold}`,
    ]),
    notes: [
      `first: ${warm.first.n} projects, each new to the node (with warm browsers, started once the pool has refilled);`,
      `  same: ${warm.same.n} starts of a project with a session running, each once the spare context made after the`,
      "  previous start is ready (deckhand_spare_contexts; 300 ms apart without warm browsers), each ended after it;",
      `  back to back: as many, each sent when the previous answered (its spare still being made); at once: ${BURST} of`,
      "  one new project sent together (8 a browser, 12 while another launches). --warm-browsers 0 also turns the spare contexts off.",
      `  A warm browser saves ${fmtMs(cold.first.median - warm.first.median)} ms on a project's first session here.`,
    ],
  });
  out.figures = { modes };
  return out;
}

export const sessionStartSuite: Suite = {
  name: "session-start",
  title: "session start on one node: a project's first (warm and cold), same project, 20 at once",
  run,
};
