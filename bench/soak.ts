// `npm run bench -- --only=soak [--soak-minutes=N]`: does one node stay flat under a steady mixed
// load, and do its tenants stay served while one of them floods its CDP socket?
//
// One real service (deckhand-server as a child process, its defaults but --max-sessions) and the
// scripted model. 20 sessions of 4 projects (5 each) loop, until the run's end: navigate, observe,
// act and extract (the model answers at once, so an operation's latency is the service's own
// overhead), a CDP command on the session's proxy socket, and a load of the session page
// (sessionUrl). Every interval (30 s over 15 minutes; scaled down with the duration, so a run has
// about 30 samples) the service process and its Chromium processes are sampled: memory (the
// service's RSS, the browsers' PSS), the service's open file descriptors, the number of Chromium
// processes, and the event-loop lag the service reports on its metrics port.
//
// Sampling starts after one untimed round of every session (its page loaded, its sockets open).
//
// Then the same run again, with a fifth project's session flooding its CDP socket with messages
// just under --cdp-max-message-bytes, back to back (Runtime.evaluate of a string literal on its
// page's session: the page evaluates each, and the string comes back). Reported: whether each resource stayed flat
// (the mean of the last third within 5 % of the first's), failed operations (goal 0), p99 operation
// latency per third, and the bystanders' p99 under the flood against the quiet run's (goal within 2x).
//
// Each run lasts --soak-minutes (default 15), so the suite takes twice that and a minute more. It
// runs only when named (--only=soak).

import { DEFAULT_CDP_MAX_MESSAGE_BYTES } from "@deckhand/server";
import { match, processTree, startFixtureServer, startScriptedModel } from "@deckhand/testkit";
import { isChromium, kbField, openFds } from "./support/processes.ts";
import { checkTarget, emptyOutput, fmtMs, type SuiteOutput } from "./support/report.ts";
import { startServiceProcess } from "./support/service.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PROJECTS = 4;
const PER_PROJECT = 5;
const SESSIONS = PROJECTS * PER_PROJECT;
const DEFAULT_MINUTES = 15;
/** Mean of the last third within this fraction of the first third's: flat. */
const FLAT = 0.05;
const OPS = ["navigate", "observe", "act", "extract", "cdp", "viewer"] as const;
type Op = (typeof OPS)[number];

interface Sample {
  atS: number;
  serviceRssMb: number;
  /** The part of the RSS that is the process's own memory (RssAnon: heap, malloc), not mapped files. */
  serviceAnonMb: number;
  /** V8's heap as the service's metrics report it (prom-client's process.memoryUsage() gauges). */
  heapUsedMb: number;
  heapTotalMb: number;
  /** Memory of C++ objects bound to JavaScript ones (Buffers among them). */
  externalMb: number;
  browsersPssMb: number;
  fds: number;
  chromium: number;
  lagMs: number;
}

async function sample(pid: number, metricsUrl: string, startedAt: number): Promise<Sample> {
  const browsers = processTree(pid).filter(isChromium);
  let text = "";
  try {
    text = await (await fetch(metricsUrl)).text();
  } catch {
    // reported as missing
  }
  const metric = (name: string) => {
    const found = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    return found ? Number(found[1]) : Number.NaN;
  };
  return {
    atS: Math.round((performance.now() - startedAt) / 1000),
    serviceRssMb: kbField(`/proc/${pid}/status`, "VmRSS") / 2 ** 20,
    serviceAnonMb: kbField(`/proc/${pid}/status`, "RssAnon") / 2 ** 20,
    heapUsedMb: metric("nodejs_heap_size_used_bytes") / 2 ** 20,
    heapTotalMb: metric("nodejs_heap_size_total_bytes") / 2 ** 20,
    externalMb: metric("nodejs_external_memory_bytes") / 2 ** 20,
    browsersPssMb: browsers.reduce((sum, p) => sum + kbField(`/proc/${p}/smaps_rollup`, "Pss"), 0) / 2 ** 20,
    fds: openFds(pid),
    chromium: browsers.length,
    lagMs: metric("deckhand_event_loop_lag_seconds") * 1000,
  };
}

// ---------- load ----------

function p99(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]!;
}

interface Timed {
  op: Op;
  atMs: number;
  ms: number;
}

interface RunResult {
  attack: boolean;
  durationMs: number;
  samples: Sample[];
  timings: Timed[];
  failures: string[];
  attackerMessages: number;
  attackerReconnects: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const thirds = <T>(values: T[]): [T[], T[], T[]] => {
  const n = values.length;
  return [
    values.slice(0, Math.ceil(n / 3)),
    values.slice(Math.ceil(n / 3), Math.ceil((2 * n) / 3)),
    values.slice(Math.ceil((2 * n) / 3)),
  ];
};

/** A CDP client on the session's proxy socket that sends one command and waits for its answer. */
class CdpClient {
  private next = 1;
  private readonly waiting = new Map<number, (message: unknown) => void>();
  readonly socket: WebSocket;
  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message);
      if (message.id !== undefined) this.waiting.delete(message.id);
    });
  }

  static open(url: string): Promise<CdpClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener("open", () => resolve(new CdpClient(socket)), { once: true });
      socket.addEventListener("error", () => reject(new Error("CDP socket failed to open")), { once: true });
    });
  }

  send(
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve(message as Record<string, unknown>);
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}

async function runOnce(attack: boolean, durationMs: number, ctx: SuiteContext): Promise<RunResult> {
  const service = await startServiceProcess({
    keys: PROJECTS + 1,
    args: ["--max-sessions=24", "--max-sessions-per-project=6", "--metrics-port=0"],
  });
  const [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  const idOf = (text: string, line: RegExp) =>
    Number(new RegExp(`\\[(\\d+)\\] ${line.source}`).exec(text)![1]);
  model.on(match.schemaName("observe"), (r) => ({
    elements: [
      { elementId: idOf(r.text, /button: Sign in/), description: "the sign-in button", method: "click" },
    ],
  }));
  model.on(match.schemaName("act"), (r) => ({
    elementId: idOf(r.text, /textbox: Username/),
    method: "fill",
    arguments: ["soak"],
    description: "type the user name",
    completed: true,
  }));
  model.on(match.schemaName("extract"), { extraction: "a sign-in form" });
  const modelConfig = { modelName: "openai/gpt-4.1-mini", baseURL: model.baseURL };
  // Printed right after the service's own address.
  const metricsAt = () => /metrics on (http:\/\/\S+)/.exec(service.stdout())?.[1];
  for (let i = 0; i < 100 && !metricsAt(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  const metricsUrl = metricsAt();
  const timings: Timed[] = [];
  const failures: string[] = [];
  const samples: Sample[] = [];
  let attackerMessages = 0;
  let attackerReconnects = 0;
  const sockets: WebSocket[] = [];
  try {
    if (!metricsUrl) throw new Error(`the service printed no metrics address: ${service.stdout()}`);
    const post = async (key: string, path: string, body: unknown) => {
      const response = await fetch(`${service.url}${path}`, {
        method: "POST",
        headers: {
          "x-platform-api-key": key,
          "content-type": "application/json",
          "x-model-api-key": "sk-soak",
        },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
      return JSON.parse(text).data as Record<string, unknown>;
    };
    const start = async (key: string) => {
      const data = await post(key, "/v1/sessions/start", {});
      const cdp = await CdpClient.open(String(data.cdpUrl));
      sockets.push(cdp.socket);
      return { key, id: String(data.sessionId), sessionUrl: String(data.sessionUrl), cdp };
    };
    ctx.progress(
      `soak${attack ? " (with a CDP flood)" : ""}: starting ${SESSIONS} sessions of ${PROJECTS} projects`,
    );
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, (_, n) => start(service.apiKeys[n % PROJECTS]!)),
    );
    service.trackProfiles();

    // One untimed round first, so that the samples start from sessions that have loaded their page.
    await Promise.all(
      sessions.map(async (session) => {
        const path = (op: string) => `/v1/sessions/${session.id}/${op}`;
        await post(session.key, path("navigate"), { url: site.url("form.html") });
        await post(session.key, path("extract"), {});
        await session.cdp.send("Target.getTargets");
        await (await fetch(session.sessionUrl)).text();
      }),
    );

    const startedAt = performance.now();
    const deadline = startedAt + durationMs;
    const intervalMs = Math.max(1_000, (30_000 * durationMs) / (DEFAULT_MINUTES * 60_000));
    samples.push(await sample(service.pid, metricsUrl, startedAt));
    const sampler = (async () => {
      while (performance.now() < deadline) {
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - performance.now()))),
        );
        samples.push(await sample(service.pid, metricsUrl, startedAt));
        ctx.progress(
          `soak${attack ? " (flood)" : ""}: ${samples.at(-1)!.atS} s, ${timings.length} operations, ${failures.length} failed`,
        );
      }
    })();

    const timed = async <T>(op: Op, work: () => Promise<T>): Promise<T | undefined> => {
      const began = performance.now();
      try {
        const result = await work();
        timings.push({ op, atMs: began - startedAt, ms: performance.now() - began });
        return result;
      } catch (error) {
        failures.push(`${op}: ${(error as Error).message}`);
        return undefined;
      }
    };
    const worker = async (session: (typeof sessions)[number]) => {
      const path = (op: string) => `/v1/sessions/${session.id}/${op}`;
      while (performance.now() < deadline) {
        await timed("navigate", () => post(session.key, path("navigate"), { url: site.url("form.html") }));
        await timed("observe", async () => {
          const data = await post(session.key, path("observe"), {
            instruction: "find the sign-in button",
            options: { model: modelConfig },
          });
          if ((data.result as unknown[]).length !== 1) throw new Error("observe found nothing");
        });
        await timed("act", async () => {
          const data = await post(session.key, path("act"), {
            input: "type the user name",
            options: { model: modelConfig },
          });
          if (!(data.result as { success: boolean }).success) throw new Error("act did not succeed");
        });
        await timed("extract", () =>
          post(session.key, path("extract"), {
            instruction: "what is this page",
            options: { model: modelConfig },
          }),
        );
        await timed("cdp", async () => {
          const answer = await session.cdp.send("Target.getTargets");
          if (!answer.result) throw new Error(`Target.getTargets: ${JSON.stringify(answer).slice(0, 200)}`);
        });
        await timed("viewer", async () => {
          const response = await fetch(session.sessionUrl);
          const text = await response.text();
          if (response.status !== 200 || !text.includes("<html"))
            throw new Error(`session page answered ${response.status}`);
        });
      }
    };

    // The attacker: a fifth project's session, flooding its socket with messages just under the
    // limit, on its page's session: each is evaluated by its page, and its 8 MB string comes back.
    let attacker: Promise<void> = Promise.resolve();
    if (attack) {
      const data = await post(service.apiKeys[PROJECTS]!, "/v1/sessions/start", {});
      const padding = "a".repeat(DEFAULT_CDP_MAX_MESSAGE_BYTES - 1024);
      attacker = (async () => {
        // Ids of their own, above the client's (its commands wait for their answers by id).
        let id = 1_000_000;
        while (performance.now() < deadline) {
          let cdp: CdpClient;
          let page: string;
          try {
            cdp = await CdpClient.open(String(data.cdpUrl));
            const { result } = (await cdp.send("Target.getTargets")) as {
              result: { targetInfos: { targetId: string; type: string }[] };
            };
            const tab = result.targetInfos.find((t) => t.type === "page")!;
            const attached = (await cdp.send("Target.attachToTarget", {
              targetId: tab.targetId,
              flatten: true,
            })) as {
              result: { sessionId: string };
            };
            page = JSON.stringify(attached.result.sessionId);
          } catch {
            break;
          }
          sockets.push(cdp.socket);
          while (performance.now() < deadline && cdp.socket.readyState === WebSocket.OPEN) {
            // Back to back: the next as soon as the previous left this process.
            if (cdp.socket.bufferedAmount < DEFAULT_CDP_MAX_MESSAGE_BYTES) {
              cdp.socket.send(
                `{"id":${id++},"method":"Runtime.evaluate","params":{"expression":"'${padding}'"},"sessionId":${page}}`,
              );
              attackerMessages++;
            }
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          if (performance.now() < deadline) attackerReconnects++;
          cdp.socket.close();
        }
      })();
    }

    await Promise.all([...sessions.map(worker), sampler, attacker]);
    for (const session of sessions) {
      try {
        await post(session.key, `/v1/sessions/${session.id}/end`, undefined);
      } catch (error) {
        failures.push(`end: ${(error as Error).message}`);
      }
    }
    return { attack, durationMs, samples, timings, failures, attackerMessages, attackerReconnects };
  } finally {
    for (const socket of sockets) socket.close();
    await Promise.all([site.close(), model.close()]);
    await service.close();
  }
}

// ---------- report ----------

interface Flatness {
  what: string;
  first: number;
  last: number;
  change: number;
  flat: boolean;
}

const GOALS: [string, (s: Sample) => number][] = [
  ["service RSS MB", (s) => s.serviceRssMb],
  ["browsers PSS MB", (s) => s.browsersPssMb],
  ["service + browsers MB", (s) => s.serviceRssMb + s.browsersPssMb],
  ["open fds (service)", (s) => s.fds],
  ["Chromium processes", (s) => s.chromium],
];

function flatness(samples: Sample[], fields = GOALS): Flatness[] {
  const [first, , last] = thirds(samples);
  return fields.map(([what, get]) => {
    const a = mean(first.map(get));
    const b = mean(last.map(get));
    const change = a === 0 ? 0 : (b - a) / a;
    return { what, first: a, last: b, change, flat: Math.abs(change) <= FLAT };
  });
}

/**
 * What the service's RSS is made of, by third: not goals (V8's heap is a sawtooth between
 * collections, and how far it lets it grow before one is its own choice), but what says whether a
 * rise is JavaScript objects kept (heap used after collections), the heap's room (total), Buffers
 * (external) or the allocator's (anonymous memory beyond the heap).
 */
function breakdown(samples: Sample[]): Flatness[] {
  return flatness(samples, [
    ["of the RSS: anonymous MB", (s) => s.serviceAnonMb],
    ["V8 heap used MB", (s) => s.heapUsedMb],
    ["V8 heap total MB", (s) => s.heapTotalMb],
    ["external MB", (s) => s.externalMb],
  ]);
}

function p99ByThird(
  timings: Timed[],
  durationMs: number,
  ops: readonly Op[] = ["navigate", "observe", "act", "extract"],
) {
  const of = (from: number, to: number) =>
    p99(timings.filter((t) => ops.includes(t.op) && t.atMs >= from && t.atMs < to).map((t) => t.ms));
  return [
    of(0, durationMs / 3),
    of(durationMs / 3, (2 * durationMs) / 3),
    of((2 * durationMs) / 3, Number.POSITIVE_INFINITY),
  ];
}

async function run(ctx: SuiteContext): Promise<SuiteOutput> {
  const out = emptyOutput();
  const minutes = ctx.soakMinutes ?? DEFAULT_MINUTES;
  const durationMs = minutes * 60_000;
  const quiet = await runOnce(false, durationMs, ctx);
  const flood = await runOnce(true, durationMs, ctx);
  const short = minutes < DEFAULT_MINUTES ? ` (a short run: --soak-minutes=${minutes})` : "";

  for (const result of [quiet, flood]) {
    const label = result.attack ? "with one project flooding its CDP socket" : "quiet";
    out.tables.push({
      title: `Soak, ${label}: ${SESSIONS} sessions of ${PROJECTS} projects for ${minutes} min${short}, samples`,
      columns: [
        "at s",
        "service RSS MB",
        "of it anonymous MB",
        "V8 heap used / total MB",
        "external MB",
        "browsers PSS MB",
        "open fds",
        "Chromium processes",
        "event-loop lag ms",
      ],
      rows: result.samples.map((s) => [
        s.atS,
        s.serviceRssMb.toFixed(1),
        s.serviceAnonMb.toFixed(1),
        `${s.heapUsedMb.toFixed(1)} / ${s.heapTotalMb.toFixed(1)}`,
        s.externalMb.toFixed(1),
        s.browsersPssMb.toFixed(1),
        s.fds,
        s.chromium,
        fmtMs(s.lagMs),
      ]),
    });
    const flat = flatness(result.samples);
    out.tables.push({
      title: `Soak, ${label}: first third against last third (flat: within ${FLAT * 100} %)`,
      columns: ["what", "first third", "last third", "change", "flat"],
      rows: [
        ...flat.map((f) => [
          f.what,
          f.first.toFixed(1),
          f.last.toFixed(1),
          `${(f.change * 100).toFixed(1)} %`,
          f.flat ? "yes" : "NO",
        ]),
        ...breakdown(result.samples).map((f) => [
          f.what,
          f.first.toFixed(1),
          f.last.toFixed(1),
          `${(f.change * 100).toFixed(1)} %`,
          "(not a goal)",
        ]),
      ],
    });
    const byOp = OPS.map((op) => {
      const values = result.timings.filter((t) => t.op === op).map((t) => t.ms);
      const sorted = [...values].sort((a, b) => a - b);
      return [op, values.length, fmtMs(sorted[Math.floor(sorted.length / 2)]), fmtMs(p99(values))];
    });
    const [t1, t2, t3] = p99ByThird(result.timings, result.durationMs);
    out.tables.push({
      title: `Soak, ${label}: operations`,
      columns: ["operation", "answered", "p50 ms", "p99 ms"],
      rows: [
        ...byOp,
        [
          "p99 of navigate/observe/act/extract, by third",
          "",
          "",
          `${fmtMs(t1)} / ${fmtMs(t2)} / ${fmtMs(t3)}`,
        ],
      ],
      notes: [
        `failed: ${result.failures.length}${result.failures.length ? `, e.g. ${result.failures.slice(0, 3).join(" | ").slice(0, 400)}` : ""}`,
        "the scripted model answers at once: an operation's latency is the service's own overhead",
        ...(result.attack
          ? [
              `attacker: ${result.attackerMessages} messages of ${DEFAULT_CDP_MAX_MESSAGE_BYTES - 1024} bytes sent, ${result.attackerReconnects} reconnects`,
            ]
          : []),
      ],
    });
    for (const f of flat) {
      out.targets.push(
        checkTarget(
          `${label}: ${f.what}, last third against first`,
          Math.abs(f.change) * 100,
          "%",
          "<=",
          FLAT * 100,
        ),
      );
    }
    out.targets.push(checkTarget(`${label}: failed operations`, result.failures.length, "", "==", 0));
  }
  const ops: Op[] = ["navigate", "observe", "act", "extract"];
  const quietP99 = p99(quiet.timings.filter((t) => ops.includes(t.op)).map((t) => t.ms));
  const floodP99 = p99(flood.timings.filter((t) => ops.includes(t.op)).map((t) => t.ms));
  out.targets.push(
    checkTarget("bystanders' p99 under a CDP flood / quiet p99", floodP99 / quietP99, "x", "<=", 2),
  );
  out.notes.push(
    `bystanders' p99 (navigate, observe, act, extract): quiet ${fmtMs(quietP99)} ms, under the flood ${fmtMs(floodP99)} ms ` +
      `(${(floodP99 / quietP99).toFixed(2)}x)${short}`,
  );
  out.figures = {
    minutes,
    runs: [quiet, flood].map((r) => ({
      attack: r.attack,
      samples: r.samples,
      failures: r.failures,
      operations: r.timings.length,
      p99ByThird: p99ByThird(r.timings, r.durationMs),
      attackerMessages: r.attackerMessages,
    })),
    quietP99,
    floodP99,
  };
  return out;
}

export const soakSuite: Suite = {
  name: "soak",
  title:
    "20 sessions of 4 projects for 15 minutes (--soak-minutes): flat memory, fds, processes, lag; a CDP flood",
  onlyWhenNamed: true,
  run,
};
