// `npm run bench -- --only=isolation`: what tenant isolation costs. The same load as the remote
// suite's sessions test (packages/server/bench/load.ts: each session starts, navigates, observes,
// acts, extracts, is held until all are, then ends), with 10 projects x 5 sessions: once under
// `--isolation project` (each project's sessions share a browser, as contexts; projects never
// share one) and once under `--isolation session` (every session has a browser of its own).

import { type LoadResult, leftBehind, runLoad } from "./remote.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PROJECTS = 10;
const PER_PROJECT = 5;
const SESSIONS = PROJECTS * PER_PROJECT;

async function run(ctx: SuiteContext): Promise<SuiteOutput> {
  const out = emptyOutput();
  const loads: LoadResult[] = [];
  for (const isolation of ["project", "session"] as const) {
    ctx.progress(`isolation: ${PROJECTS} projects x ${PER_PROJECT} sessions, --isolation ${isolation}`);
    const load = await runLoad(SESSIONS, [`--projects=${PROJECTS}`, `--isolation=${isolation}`]);
    loads.push(load);
    out.targets.push(
      checkTarget(
        `--isolation ${isolation}: sessions held at once, every operation answered`,
        load.failures === 0 ? load.held : 0,
        "",
        ">=",
        SESSIONS,
      ),
      checkTarget(`--isolation ${isolation}: left behind`, leftBehind(load), "", "==", 0),
    );
  }
  out.tables.push({
    title: `Tenant isolation: ${PROJECTS} projects x ${PER_PROJECT} sessions at once (packages/server/bench/load.ts)`,
    columns: [
      "isolation",
      "held",
      "browsers",
      "ops answered",
      "start p50",
      "start p95",
      "op p50",
      "op p95",
      "PSS/session MB",
      "PSS total MB",
      "left behind",
    ],
    rows: loads.map((l) => [
      l.isolation,
      l.held,
      l.browsers,
      `${l.operations}/${l.expectedOperations}`,
      fmtMs(l.latency.start?.p50),
      fmtMs(l.latency.start?.p95),
      fmtMs(l.operationP50),
      fmtMs(l.operationP95),
      l.pssMbPerSession.toFixed(1),
      fmtInt(l.pssMbTotal),
      leftBehind(l) === 0 ? "nothing" : `${l.activeAfter} sessions, ${l.chromeLeft} Chrome`,
    ]),
    notes: [
      "project: a browser per project (5 contexts each); session: a browser per session. Sessions of different",
      "  projects never share a browser process in either mode. PSS: the service process and its browsers'",
      "  process trees (shared pages shared out), less the process before the run, per session.",
      ...loads
        .filter((l) => l.failures > 0)
        .map(
          (l) =>
            `--isolation ${l.isolation}: ${l.failures} failed, e.g. ${l.firstFailures[0]?.slice(0, 150)}`,
        ),
    ],
  });
  out.figures = { loads };
  return out;
}

export const isolationSuite: Suite = {
  name: "isolation",
  title: "sessions held and memory per session, 10 projects x 5 sessions, --isolation project and session",
  run,
};
