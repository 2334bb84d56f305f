// snapshot: how long a page takes to become an outline, how many tokens the outline costs (counted
// with o200k, a real tokenizer), whether a budgeted outline of a huge page still holds the element
// the instruction is about, and what it leaves in Node's memory. For orientation: the protocol's
// own full accessibility tree and DOM of the same pages, which an outline is built instead of.

import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { DEFAULT_TOKEN_BUDGET, type Deckhand, type Page, type Snapshot, takeSnapshot } from "deckhand";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startDeckhand } from "./support/browser.ts";
import { busyMs, byMethod, connectionClassOf, traceCdp } from "./support/cdp-trace.ts";
import { collectGarbage, memoryNow } from "./support/memory.ts";
import {
  checkTarget,
  emptyOutput,
  fmtInt,
  fmtMB,
  fmtMs,
  type SuiteOutput,
  type TargetCheck,
  verdict,
} from "./support/report.ts";
import { type Summary, sleep, summarize, timed } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";
import { type TokenBreakdown, tokenBreakdown } from "./support/tokens.ts";

const INSTRUCTION = "click the target button";

interface PageCase {
  key: string;
  label: string;
  path: string;
  /** Timed repetitions per mode (full, capture only, budgeted). */
  reps: [full: number, quick: number];
  /** Cold runs: reload, then the first snapshot. */
  coldReps: [full: number, quick: number];
  /** Runs of the protocol's full trees (seconds each on the large pages). */
  rawReps: number;
  /** A line the outline must contain (the element an instruction would be about). */
  expect: string;
  targets: { fullMs?: number; fullTokens?: number; budgetMs?: number; budgetTokens?: number };
}

export const SNAPSHOT_PAGES: PageCase[] = [
  {
    key: "login",
    rawReps: 5,
    label: "login-small.html",
    path: "login-small.html",
    reps: [30, 10],
    coldReps: [5, 2],
    expect: "button: Sign in",
    targets: { fullMs: 5 },
  },
  {
    key: "5k",
    rawReps: 2,
    label: "generated, 5,000 el.",
    path: "/generated/large?elements=5000",
    reps: [15, 5],
    coldReps: [3, 1],
    expect: "button: Target button",
    targets: { fullMs: 100, fullTokens: 22_000 },
  },
  {
    key: "20k",
    rawReps: 1,
    label: "generated, 20,000 el.",
    path: "/generated/large?elements=20000",
    reps: [7, 3],
    coldReps: [1, 1],
    expect: "button: Target button",
    targets: { budgetMs: 400, budgetTokens: DEFAULT_TOKEN_BUDGET },
  },
  {
    key: "frames",
    rawReps: 3,
    label: "frames/mixed.html",
    path: "frames/mixed.html",
    reps: [15, 5],
    coldReps: [3, 1],
    expect: "button: Child button",
    targets: {},
  },
  {
    key: "shadow",
    rawReps: 3,
    label: "shadow/nested.html",
    path: "shadow/nested.html",
    reps: [15, 5],
    coldReps: [3, 1],
    expect: "button: Deep button",
    targets: {},
  },
];

interface Timings {
  full: Summary;
  capture: Summary;
  budgeted: Summary;
  cold: Summary;
  coldCapture: Summary;
}

interface Sizes {
  domElements: number;
  frames: number;
  ids: number;
  lines: number;
  chars: number;
  o200kFull: number;
  estimatedFull: number;
  o200kBudgeted: number;
  estimatedBudgeted: number;
  truncated: boolean;
  expectInFull: boolean;
  expectInBudgeted: boolean;
  breakdown: TokenBreakdown;
}

interface Raw {
  axMs: Summary;
  axNodes: number;
  axBytes: number;
  /** o200k tokens of a plain outline of Chrome's accessibility tree: one `[id] role: name` line per node. */
  axOutlineTokens: number;
  domMs: Summary;
  domNodes: number;
  domBytes: number;
}

interface Profile {
  mode: string;
  wallMs: number;
  /** The first command's time: the settle check (or, with domSettleTimeout 0, the capture). */
  firstCallMs: number;
  cdpBusyMs: number;
  calls: number;
  top: string;
}

function countNodes(node: {
  children?: unknown[];
  shadowRoots?: unknown[];
  contentDocument?: unknown;
}): number {
  let n = 1;
  for (const child of (node.children ?? []) as (typeof node)[]) n += countNodes(child);
  for (const root of (node.shadowRoots ?? []) as (typeof node)[]) n += countNodes(root);
  if (node.contentDocument) n += countNodes(node.contentDocument as typeof node);
  return n;
}

interface AXNode {
  nodeId: string;
  ignored: boolean;
  role?: { value?: unknown };
  name?: { value?: unknown };
  childIds?: string[];
  backendDOMNodeId?: number;
}

/**
 * A reference for Deckhand's outline: the kind of outline built straight from Chrome's
 * accessibility tree (one line per node that is not ignored, indented by depth, with an id, role
 * and name), as tools that ship the whole tree to a model do.
 */
function axOutline(nodes: AXNode[]): string {
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  const childIds = new Set(nodes.flatMap((n) => n.childIds ?? []));
  const lines: string[] = [];
  const walk = (node: AXNode, depth: number) => {
    const role = String(node.role?.value ?? "");
    let next = depth;
    if (!node.ignored && role !== "InlineTextBox" && role !== "none") {
      const name = String(node.name?.value ?? "").trim();
      lines.push(
        `${"  ".repeat(depth)}[${node.backendDOMNodeId ?? node.nodeId}] ${role}${name ? `: ${name}` : ""}`,
      );
      next = depth + 1;
    }
    for (const id of node.childIds ?? []) {
      const child = byId.get(id);
      if (child) walk(child, next);
    }
  };
  for (const root of nodes.filter((n) => !childIds.has(n.nodeId))) walk(root, 0);
  return lines.join("\n");
}

/** The protocol's whole accessibility tree and DOM of the main frame's session, for comparison. */
async function rawTrees(page: Page, reps: number): Promise<Raw> {
  const ax: number[] = [];
  const dom: number[] = [];
  let axNodes = 0;
  let axBytes = 0;
  let axOutlineTokens = 0;
  let domNodes = 0;
  let domBytes = 0;
  try {
    for (let i = 0; i < reps; i++) {
      const a = await timed(() => page.session.send("Accessibility.getFullAXTree", {}));
      ax.push(a.ms);
      axNodes = a.value.nodes.length;
      axBytes = JSON.stringify(a.value).length;
      if (i === 0) axOutlineTokens = countTokens(axOutline(a.value.nodes));
      const d = await timed(() => page.session.send("DOM.getDocument", { depth: -1, pierce: true }));
      dom.push(d.ms);
      domNodes = countNodes(d.value.root);
      domBytes = JSON.stringify(d.value).length;
    }
  } finally {
    // Both calls switch their agents on; left on, they would report every later DOM change.
    await page.session.send("DOM.disable").catch(() => undefined);
    await page.session.send("Accessibility.disable").catch(() => undefined);
  }
  return {
    axMs: summarize(ax),
    axNodes,
    axBytes,
    axOutlineTokens,
    domMs: summarize(dom),
    domNodes,
    domBytes,
  };
}

async function traced(connectionClass: object, mode: string, fn: () => Promise<unknown>): Promise<Profile> {
  const tracer = traceCdp(connectionClass);
  let wallMs: number;
  try {
    wallMs = (await timed(fn)).ms;
  } finally {
    tracer.stop();
  }
  const methods = byMethod(tracer.calls);
  const first = tracer.calls[0];
  return {
    mode,
    wallMs,
    firstCallMs: first ? first.answered - first.sent : Number.NaN,
    cdpBusyMs: busyMs(tracer.calls),
    calls: tracer.calls.length,
    top: methods
      .slice(0, 2)
      .map((m) => `${m.method} ×${m.count} ${fmtMs(m.totalMs)} ms`)
      .join(", "),
  };
}

async function measurePage(
  ctx: SuiteContext,
  dh: Deckhand,
  site: FixtureServer,
  pc: PageCase,
): Promise<{
  timings: Timings;
  sizes: Sizes;
  raw: Raw;
  memory: ReturnType<typeof memoryNow>;
  profile: Profile[];
}> {
  const page = dh.page;
  const reps = ctx.reps(...pc.reps);
  const coldReps = ctx.reps(...pc.coldReps);
  ctx.progress(`snapshot ${pc.label}: ${coldReps} cold, ${reps} × 3 timed`);
  await page.goto(site.url(pc.path));

  // Cold: the first snapshot of a freshly loaded document (its outline script is injected then,
  // and a document under a second old must stay quiet longer before it counts as settled).
  const cold: number[] = [];
  const coldCapture: number[] = [];
  for (let i = 0; i < coldReps; i++) {
    if (i > 0) await page.reload();
    cold.push((await timed(() => takeSnapshot(page, { tokenBudget: false }))).ms);
    await page.reload();
    coldCapture.push((await timed(() => takeSnapshot(page, { tokenBudget: false, domSettleTimeout: 0 }))).ms);
  }
  // Warm figures are taken on a document over a second old, as most operations see it, and
  // without the garbage of the pages before.
  await sleep(1_100);
  collectGarbage();

  // The three modes take turns, so that load from elsewhere on the machine hits them alike.
  const full: number[] = [];
  const capture: number[] = [];
  const budgeted: number[] = [];
  for (let i = 0; i < reps; i++) {
    full.push((await timed(() => takeSnapshot(page, { tokenBudget: false }))).ms);
    capture.push((await timed(() => takeSnapshot(page, { tokenBudget: false, domSettleTimeout: 0 }))).ms);
    budgeted.push((await timed(() => takeSnapshot(page, { instruction: INSTRUCTION }))).ms);
  }
  const memory = memoryNow();

  const fullSnap: Snapshot = await takeSnapshot(page, { tokenBudget: false });
  const budgetSnap: Snapshot = await takeSnapshot(page, { instruction: INSTRUCTION });
  const domElements = (await page.evaluate("document.getElementsByTagName('*').length")) as number;
  const sizes: Sizes = {
    domElements,
    frames: page.frames().length,
    ids: fullSnap.elementCount,
    lines: fullSnap.text.split("\n").length,
    chars: fullSnap.text.length,
    o200kFull: countTokens(fullSnap.text),
    estimatedFull: fullSnap.estimatedTokens,
    o200kBudgeted: countTokens(budgetSnap.text),
    estimatedBudgeted: budgetSnap.estimatedTokens,
    truncated: budgetSnap.truncated,
    expectInFull: fullSnap.text.includes(pc.expect),
    expectInBudgeted: budgetSnap.text.includes(pc.expect),
    breakdown: tokenBreakdown(fullSnap.text),
  };

  // Profile, apart from the timed runs: where one snapshot's time goes.
  const connectionClass = connectionClassOf(dh);
  const profile = [
    await traced(connectionClass, "full", () => takeSnapshot(page, { tokenBudget: false })),
    await traced(connectionClass, "capture only", () =>
      takeSnapshot(page, { tokenBudget: false, domSettleTimeout: 0 }),
    ),
    await traced(connectionClass, "budgeted", () => takeSnapshot(page, { instruction: INSTRUCTION })),
  ];

  const raw = await rawTrees(page, ctx.quick ? 1 : pc.rawReps);
  return {
    timings: {
      full: summarize(full),
      capture: summarize(capture),
      budgeted: summarize(budgeted),
      cold: summarize(cold),
      coldCapture: summarize(coldCapture),
    },
    sizes,
    raw,
    memory,
    profile,
  };
}

async function run(ctx: SuiteContext): Promise<SuiteOutput> {
  const out = emptyOutput();
  const [dh, site] = await Promise.all([startDeckhand(), startFixtureServer()]);
  const results: Record<string, Awaited<ReturnType<typeof measurePage>>> = {};
  try {
    for (const pc of SNAPSHOT_PAGES) results[pc.key] = await measurePage(ctx, dh, site, pc);
  } finally {
    await Promise.all([dh.close(), site.close()]);
  }

  const timeRows: (string | number)[][] = [];
  const sizeRows: (string | number | boolean)[][] = [];
  const memRows: string[][] = [];
  const rawRows: string[][] = [];
  const profileRows: string[][] = [];
  const misses: string[] = [];
  for (const pc of SNAPSHOT_PAGES) {
    const r = results[pc.key]!;
    const t = r.timings;
    const s = r.sizes;
    const checks: TargetCheck[] = [];
    if (pc.targets.fullMs !== undefined)
      checks.push(
        checkTarget(`${pc.key}: full outline median`, t.full.median, "ms", "<=", pc.targets.fullMs),
      );
    if (pc.targets.budgetMs !== undefined)
      checks.push(
        checkTarget(`${pc.key}: budgeted outline median`, t.budgeted.median, "ms", "<=", pc.targets.budgetMs),
      );
    const timeVerdicts = checks.map(verdict).join("; ");
    const sizeChecks: TargetCheck[] = [];
    if (pc.targets.fullTokens !== undefined)
      sizeChecks.push(
        checkTarget(`${pc.key}: full outline o200k tokens`, s.o200kFull, "", "<=", pc.targets.fullTokens),
      );
    if (pc.targets.budgetTokens !== undefined) {
      sizeChecks.push(
        checkTarget(
          `${pc.key}: budgeted outline o200k tokens`,
          s.o200kBudgeted,
          "",
          "<=",
          pc.targets.budgetTokens,
        ),
      );
      sizeChecks.push(
        checkTarget(
          `${pc.key}: target in budgeted outline (1 = yes)`,
          s.expectInBudgeted ? 1 : 0,
          "",
          "==",
          1,
        ),
      );
    }
    timeRows.push([
      pc.label,
      fmtMs(t.full.median),
      fmtMs(t.full.p95),
      fmtMs(t.full.min),
      fmtMs(t.capture.median),
      fmtMs(t.budgeted.median),
      fmtMs(t.budgeted.p95),
      fmtMs(t.cold.median),
      fmtMs(t.coldCapture.median),
      t.full.n,
      timeVerdicts || "-",
    ]);
    sizeRows.push([
      pc.label,
      fmtInt(s.domElements),
      s.frames,
      fmtInt(s.ids),
      fmtInt(s.lines),
      fmtInt(s.o200kFull),
      fmtInt(s.estimatedFull),
      fmtInt(s.o200kBudgeted),
      s.truncated,
      `${s.expectInFull ? "yes" : "NO"} / ${s.expectInBudgeted ? "yes" : "NO"}`,
      sizeChecks.map(verdict).join("; ") || "-",
    ]);
    memRows.push([pc.label, fmtMB(r.memory.heapUsed), fmtMB(r.memory.heapRetained), fmtMB(r.memory.rss)]);
    rawRows.push([
      pc.label,
      fmtMs(r.raw.axMs.median),
      fmtInt(r.raw.axNodes),
      fmtInt(r.raw.axBytes / 1024),
      fmtInt(r.raw.axOutlineTokens),
      fmtMs(r.raw.domMs.median),
      fmtInt(r.raw.domNodes),
      fmtInt(r.raw.domBytes / 1024),
    ]);
    for (const p of r.profile)
      profileRows.push([
        pc.label,
        p.mode,
        fmtMs(p.wallMs),
        fmtMs(p.firstCallMs),
        fmtMs(p.cdpBusyMs),
        fmtMs(p.wallMs - p.cdpBusyMs),
        String(p.calls),
        p.top,
      ]);

    for (const check of sizeChecks) {
      if (!check.met) {
        const b = s.breakdown;
        check.comment =
          `of ${fmtInt(b.total)} o200k tokens, ` +
          b.kinds
            .slice(0, 4)
            .map((k) => `${k.kind} ${fmtInt(k.tokens)} (${fmtInt(k.lines)} lines)`)
            .join(", ") +
          `; indentation costs ${fmtInt(b.indentation)} and the [id] markers ${fmtInt(b.ids)}.`;
        misses.push(`${check.figure}: ${check.comment}`);
      }
      out.targets.push(check);
    }
    for (const check of checks) {
      if (!check.met) {
        const budgetedMode = check.figure.includes("budgeted");
        const traced = r.profile.find((p) => p.mode === (budgetedMode ? "budgeted" : "full"))!;
        const measured = budgetedMode ? t.budgeted : t.full;
        check.comment =
          `median ${fmtMs(measured.median)} ms; the capture alone (domSettleTimeout 0) takes ${fmtMs(t.capture.median)} ms, ` +
          `so the settle check costs about ${fmtMs(Math.max(0, t.full.median - t.capture.median))} ms` +
          (budgetedMode
            ? ` and the budget cut about ${fmtMs(Math.max(0, t.budgeted.median - t.full.median))} ms`
            : "") +
          `. In the traced ${traced.mode} snapshot (${fmtMs(traced.wallMs)} ms) the settle check took ` +
          `${fmtMs(traced.firstCallMs)} ms, protocol calls were in flight ${fmtMs(traced.cdpBusyMs)} ms in all ` +
          `(in-page work and transfer) and Node-side work ${fmtMs(traced.wallMs - traced.cdpBusyMs)} ms.`;
        misses.push(`${check.figure}: ${check.comment}`);
      }
      out.targets.push(check);
    }
  }

  out.tables.push({
    title: "Snapshot time (ms): takeSnapshot(page, ...) on a loaded, quiet page",
    columns: [
      "page",
      "full",
      "p95",
      "min",
      "capture only",
      "budgeted",
      "p95",
      "first after load",
      "(capture only)",
      "n",
      "target",
    ],
    rows: timeRows,
    notes: [
      "full: { tokenBudget: false } (settle + capture); capture only: the same with domSettleTimeout 0;",
      `budgeted: the default budget (${fmtInt(DEFAULT_TOKEN_BUDGET)} tokens) with instruction "${INSTRUCTION}";`,
      "first after load: the first snapshot after page.reload() (script injection; a young document must stay quiet",
      "  100 ms); (capture only): the same after another reload with domSettleTimeout 0.",
    ],
  });
  out.tables.push({
    title: "Outline size (tokens counted with o200k, gpt-tokenizer)",
    columns: [
      "page",
      "DOM el.",
      "frames",
      "ids",
      "lines",
      "full o200k",
      "full est.",
      "budgeted o200k",
      "cut",
      "target el. full / budgeted",
      "target",
    ],
    rows: sizeRows,
    notes: [
      "DOM el.: elements of the main document (frames and shadow trees not counted); est.: the library's own estimate.",
      "target el.: whether the outline holds the line the instruction is about (Sign in / Target / Child / Deep button).",
    ],
  });
  out.tables.push({
    title: "Where the full outline's o200k tokens go (large pages)",
    columns: ["page", "kind of line", "lines", "tokens", "share"],
    rows: SNAPSHOT_PAGES.filter((pc) => results[pc.key]!.sizes.breakdown.total > 5_000).flatMap((pc) => {
      const b = results[pc.key]!.sizes.breakdown;
      const share = (n: number) => `${((100 * n) / b.total).toFixed(0)}%`;
      return [
        ...b.kinds
          .slice(0, 5)
          .map((k) => [pc.label, k.kind, fmtInt(k.lines), fmtInt(k.tokens), share(k.tokens)]),
        [pc.label, "(of which: indentation)", "", fmtInt(b.indentation), share(b.indentation)],
        [pc.label, "(of which: [id] markers)", "", fmtInt(b.ids), share(b.ids)],
      ];
    }),
    notes: [
      "Each kind counted on its own lines joined; indentation / ids: the tokens saved by removing them.",
    ],
  });
  out.tables.push({
    title: "Node memory after each page's timed snapshots (MB)",
    columns: ["page", "heap used", "heap after GC", "RSS"],
    rows: memRows,
  });
  out.tables.push({
    title: "Orientation: the protocol's full trees, main frame session (median ms, nodes, JSON KB)",
    notes: [
      "AX-tree outline: one `[id] role: name` line per accessibility node (not ignored), the way tools that send",
      "Chrome's whole accessibility tree to a model write it; Deckhand's own outline is in the tokens table above.",
    ],
    columns: [
      "page",
      "getFullAXTree",
      "AX nodes",
      "AX KB",
      "AX-tree outline o200k",
      "DOM.getDocument(-1, pierce)",
      "DOM nodes",
      "DOM KB",
    ],
    rows: rawRows,
  });
  out.tables.push({
    title: "Profile: one traced snapshot per mode (ms; protocol busy = time with a command in flight)",
    notes: [
      "first call: the settle check of the main frame (full, budgeted) or the capture itself (capture only);",
      "Node-side: wall - protocol busy (splicing frames, the token budget cut, bookkeeping).",
    ],
    columns: [
      "page",
      "mode",
      "wall",
      "first call",
      "protocol busy",
      "Node-side",
      "calls",
      "top calls (count, summed ms)",
    ],
    rows: profileRows,
  });
  for (const pc of SNAPSHOT_PAGES) {
    const t = results[pc.key]!.timings;
    if (t.coldCapture.median > 3 * t.capture.median && t.coldCapture.median > 50)
      out.notes.push(
        `${pc.label}: the first capture of a freshly loaded document takes ${fmtMs(t.coldCapture.median)} ms, ` +
          `${(t.coldCapture.median / t.capture.median).toFixed(0)}× a later one (${fmtMs(t.capture.median)} ms); ` +
          "an operation right after goto() pays it.",
      );
  }
  for (const miss of misses) out.notes.push(`Missed: ${miss}`);
  out.figures = results;
  return out;
}

export const snapshotSuite: Suite = {
  name: "snapshot",
  title: "outline time, o200k tokens and memory on small, 5k, 20k, frame and shadow pages",
  run,
};
