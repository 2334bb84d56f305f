// explicit: the labelled set of explicit instructions run with no model, each half on its own
// (testkit's EXPLICIT_CASES, the development half; EXPLICIT_HELD_OUT, written before the grammar
// was widened and not tuned against): the share of the instructions labelled explicit that are
// carried out without a model, wrong resolutions (acting on an element, or in a way, the label does
// not allow), outcomes equal to their label; and what the zero-token path costs on a page of 5,000
// elements: the median time of an explicit act, and of a refusal (the time act() spends before it
// would call a model). The test explicit-set.test.ts asserts the development half case by case.

import {
  EXPLICIT_CASES,
  EXPLICIT_HELD_OUT,
  type ExplicitCase,
  judgeExplicit,
  labelledExplicit,
  match,
  runExplicitCase,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { Deckhand, MissingLLMConfigurationError } from "deckhand";
import { startDeckhand } from "./support/browser.ts";
import { type CdpCall, connectionClassOf, traceCdp } from "./support/cdp-trace.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const isModelError = (error: unknown) => error instanceof MissingLLMConfigurationError;

interface HalfFigures {
  total: number;
  explicit: number;
  carriedOut: number;
  asLabelled: number;
  wrong: string[];
  /** Labelled explicit, but left to the model. */
  refused: string[];
  pages: number;
}

async function runHalf(
  dh: Deckhand,
  url: (path: string) => string,
  cases: readonly ExplicitCase[],
): Promise<HalfFigures> {
  const figures: HalfFigures = {
    total: cases.length,
    explicit: 0,
    carriedOut: 0,
    asLabelled: 0,
    wrong: [],
    refused: [],
    pages: new Set(cases.map((c) => c.page)).size,
  };
  for (const c of cases) {
    const seen = await runExplicitCase(dh, url, c, isModelError);
    const verdict = judgeExplicit(c, seen);
    if (labelledExplicit(c)) {
      figures.explicit++;
      if (verdict === "as-labelled") figures.carriedOut++;
    }
    if (verdict === "as-labelled") figures.asLabelled++;
    if (verdict === "wrong") figures.wrong.push(`${c.page}: ${c.instruction}`);
    if (verdict !== "as-labelled" && labelledExplicit(c)) figures.refused.push(`${c.page}: ${c.instruction}`);
  }
  return figures;
}

const pct = (n: number, of: number) => `${n} of ${of} (${((100 * n) / Math.max(1, of)).toFixed(1)}%)`;

/**
 * Times on the generated 5,000-element page: an explicit act carried out (act() from call to
 * result), and refusals measured up to the moment the explicit attempt gives the instruction to
 * the model (the debug log line "not carried out without a model", written synchronously by the
 * driver): that is what the zero-token path adds before a model call.
 */
async function largePage(
  dh: Deckhand,
  marks: { since: number; refusedAt: number },
  url: string,
  reps: number,
) {
  const acts: number[] = [];
  const absent: number[] = [];
  const read: number[] = [];
  const grammar: number[] = [];
  const roundTrip: number[] = [];
  const refusals: [string, number[]][] = [
    // no element is named so, and the words appear nowhere on the page
    ["click the Checkout button", absent],
    // the word appears (in "Target button"), so the page's outline is read: no element fits exactly
    ["click Target", read],
    // not an explicit instruction: refused by the grammar
    ["summarise the records table", grammar],
  ];
  for (let i = 0; i < reps; i++) {
    await dh.page.goto(url);
    // For scale: one bare call into the page and back, on the same machine at the same moment.
    const before = performance.now();
    await dh.page.evaluate(() => 0);
    roundTrip.push(performance.now() - before);
    for (const [instruction, times] of refusals) {
      marks.refusedAt = 0;
      marks.since = performance.now();
      const error = await dh.act(instruction).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!isModelError(error) || !marks.refusedAt)
        throw new Error(`${instruction}: expected a refusal, got ${String(error)}`);
      times.push(marks.refusedAt - marks.since);
    }
    const started = performance.now();
    const result = await dh.act("click the Target button");
    if (!result.success) throw new Error(`click the Target button: ${result.message}`);
    acts.push(performance.now() - started);
  }
  return {
    acts: summarize(acts),
    absent: summarize(absent),
    read: summarize(read),
    grammar: summarize(grammar),
    roundTrip: summarize(roundTrip),
  };
}

/**
 * What the zero-token path adds to an instruction that needs the model, on the same page: the
 * time from act() to the model's request with explicit instructions on and with them off
 * (`explicitInstructions: false`), both on one browser, alternating (on first in even rounds, off
 * first in odd ones), and the difference within each round; and, since a count does not depend on
 * the machine's load, the DevTools commands each path sent before the model was asked, with the
 * injected methods they called (the in-page work). "click Target" reads the page's outline and
 * refuses (the word appears, no element is named so); the model then answers that nothing fits.
 */
async function beforeTheModel(dh: Deckhand, url: string, reps: number) {
  const model = await startScriptedModel();
  let askedAt = 0;
  model.on(match.schemaName("act"), () => {
    // The first question (a look again may ask once more).
    if (!askedAt) askedAt = performance.now();
    return { elementId: -1, method: "click", arguments: [], description: "nothing fits", completed: true };
  });
  const config = { modelName: "openai/gpt-4.1-mini", apiKey: "sk-bench-0123456789", baseURL: model.baseURL };
  const make = async (explicitInstructions: boolean) => {
    const one = Deckhand.inContext(await dh.context.browser.newContext(), {
      model: config,
      explicitInstructions,
      verbose: 0,
      disablePino: true,
    });
    await one.init();
    return one;
  };
  const [on, off] = [await make(true), await make(false)];
  const times = { on: [] as number[], off: [] as number[], added: [] as number[] };
  const sent = { on: [] as number[], off: [] as number[], added: [] as number[] };
  const last: { on: CdpCall[]; off: CdpCall[] } = { on: [], off: [] };
  const tracer = traceCdp(connectionClassOf(dh));
  try {
    for (let i = 0; i < reps; i++) {
      const round = { on: 0, off: 0 };
      const count = { on: 0, off: 0 };
      const order = i % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const path of order) {
        const one = path === "on" ? on : off;
        await one.page.goto(url);
        askedAt = 0;
        const from = tracer.calls.length;
        const started = performance.now();
        await one.act("click Target");
        if (!askedAt) throw new Error("click Target: the model was not asked");
        round[path] = askedAt - started;
        times[path].push(round[path]);
        last[path] = tracer.calls.slice(from).filter((c) => c.sent < askedAt);
        count[path] = last[path].length;
        sent[path].push(count[path]);
      }
      times.added.push(round.on - round.off);
      sent.added.push(count.on - count.off);
    }
  } finally {
    tracer.stop();
    await Promise.all([on.close(), off.close()]);
    await model.close();
  }
  return {
    on: summarize(times.on),
    off: summarize(times.off),
    added: summarize(times.added),
    commands: { on: summarize(sent.on), off: summarize(sent.off), added: summarize(sent.added) },
    calls: { on: tallyCalls(last.on), off: tallyCalls(last.off) },
  };
}

/** "Runtime.callFunctionOn capture, DOM.describeNode ×2": the commands sent, by method (and injected method). */
function tallyCalls(calls: CdpCall[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const key = c.injected ? `${c.method} ${c.injected}` : c.method;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => (n > 1 ? `${key} ×${n}` : key)).join(", ") || "none";
}

export const explicitSuite: Suite = {
  name: "explicit",
  title: "Explicit instructions without a model: share carried out per half, wrong resolutions, time",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    // No key anywhere: whatever is not explicit fails with MissingLLMConfigurationError. (The
    // key, if any, is put back for the suites that run after this one.)
    const key = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    const marks = { since: 0, refusedAt: 0 };
    const [dh, site] = await Promise.all([
      startDeckhand({
        verbose: 2,
        logger: (line) => {
          const { message } = line as { message?: string };
          if (message?.startsWith("not carried out without a model")) marks.refusedAt = performance.now();
        },
      }),
      startFixtureServer(),
    ]);
    try {
      const url = (p: string) => site.url(p);
      ctx.progress(
        `explicit: ${EXPLICIT_CASES.length} development and ${EXPLICIT_HELD_OUT.length} held-out instructions`,
      );
      const dev = await runHalf(dh, url, EXPLICIT_CASES);
      const held = await runHalf(dh, url, EXPLICIT_HELD_OUT);
      const row = (name: string, f: HalfFigures) => [
        name,
        fmtInt(f.total),
        fmtInt(f.pages),
        pct(f.carriedOut, f.explicit),
        `${f.asLabelled} of ${f.total}`,
        fmtInt(f.wrong.length),
      ];
      output.tables.push({
        title: "The labelled set, no model",
        columns: [
          "half",
          "instructions",
          "pages",
          "labelled explicit: carried out without a model",
          "outcome equal to label",
          "wrong resolutions",
        ],
        rows: [row("development", dev), row("held out", held)],
        notes: [
          "Labelled explicit: one element (or several steps, a key, a scroll, back, an address) a person would act on; the rest need judgement (the model) or fail on a disabled element.",
          ...[...dev.wrong, ...held.wrong].map((w) => `Wrong: ${w}`),
          ...held.refused.map((r) => `Held out, labelled explicit, left to the model: ${r}`),
          "Tokens used: 0 (there is no model; anything not explicit throws MissingLLMConfigurationError).",
        ],
      });
      ctx.progress("explicit: a page of 5,000 elements");
      const large = await largePage(dh, marks, site.url("generated/large?elements=5000"), ctx.reps(15, 5));
      // Many alternating rounds: the difference sought is small beside what a busy machine adds.
      const withModel = await beforeTheModel(dh, site.url("generated/large?elements=5000"), ctx.reps(40, 15));
      const timeRow = (label: string, t: ReturnType<typeof summarize>) => [
        label,
        fmtInt(t.n),
        fmtMs(t.median),
        fmtMs(t.p95),
      ];
      output.tables.push({
        title: "On a page of 5,000 elements (generated/large), no model",
        columns: ["", "n", "median ms", "p95 ms"],
        rows: [
          timeRow(
            "explicit act carried out: act() from call to result (page read, element found, click, check)",
            large.acts,
          ),
          timeRow(
            "refusal, the name appears nowhere on the page: act() until handed to the model",
            large.absent,
          ),
          timeRow("refusal after reading the page's outline (the word appears, no element fits)", large.read),
          timeRow("refusal by the grammar (not an explicit instruction)", large.grammar),
          timeRow(
            "for scale: one bare call into the page and back (page.evaluate(() => 0))",
            large.roundTrip,
          ),
          timeRow(
            "with a model, 'click Target': act() until the model is asked, explicit instructions on",
            withModel.on,
          ),
          timeRow("the same with explicitInstructions: false (no zero-token attempt)", withModel.off),
          timeRow(
            "on minus off, within each alternating round (what the zero-token path adds)",
            withModel.added,
          ),
        ],
        notes: [
          "With explicit instructions on, the model's first look reuses the outline the refusal read, so what the zero-token path adds is the on row minus the off row.",
        ],
      });
      output.tables.push({
        title: "DevTools commands sent before the model is asked, 'click Target' on 5,000 elements",
        columns: ["", "median", "min", "max", "the commands (last round)"],
        rows: (["on", "off"] as const).map((path) => [
          path === "on" ? "explicit instructions on" : "explicitInstructions: false",
          fmtInt(withModel.commands[path].median),
          fmtInt(withModel.commands[path].min),
          fmtInt(withModel.commands[path].max),
          withModel.calls[path],
        ]),
        notes: [
          "Counted in this process on Deckhand's connection; a Runtime.callFunctionOn is named by the injected method it calls (the in-page work). A count does not depend on the machine's load.",
        ],
      });
      output.figures["development: share carried out"] = dev.carriedOut / dev.explicit;
      output.figures["held out: share carried out"] = held.carriedOut / held.explicit;
      output.figures["wrong resolutions"] = dev.wrong.length + held.wrong.length;
      output.figures["explicit act, 5,000 elements"] = large.acts;
      output.figures["refusal, name nowhere, 5,000 elements"] = large.absent;
      output.figures["refusal after the outline, 5,000 elements"] = large.read;
      output.figures["refusal by the grammar, 5,000 elements"] = large.grammar;
      output.figures["until the model is asked, explicit on, 5,000 elements"] = withModel.on;
      output.figures["until the model is asked, explicit off, 5,000 elements"] = withModel.off;
      output.figures["until the model is asked, on minus off per round, 5,000 elements"] = withModel.added;
      output.figures["DevTools commands before the model is asked, explicit on"] =
        withModel.commands.on.median;
      output.figures["DevTools commands before the model is asked, explicit off"] =
        withModel.commands.off.median;
      output.targets.push(
        checkTarget("wrong resolutions", dev.wrong.length + held.wrong.length, "", "==", 0),
      );
      output.targets.push(
        checkTarget("development outcomes equal to their label", dev.asLabelled, "", "==", dev.total),
      );
      output.targets.push(
        checkTarget(
          "held out: share carried out (%)",
          Math.round((1000 * held.carriedOut) / held.explicit) / 10,
          "",
          ">=",
          60,
        ),
      );
      output.targets.push(
        checkTarget(
          "refusal before the model call (name nowhere), median",
          large.absent.median,
          "ms",
          "<=",
          10,
        ),
      );
      output.targets.push(
        checkTarget("refusal before the model call (grammar), median", large.grammar.median, "ms", "<=", 10),
      );
      output.targets.push(
        checkTarget(
          "what a refusal after reading the outline adds before the model call, median of rounds",
          Math.round(withModel.added.median),
          "ms",
          "<=",
          10,
        ),
      );
      output.targets.push(
        checkTarget(
          "DevTools commands the zero-token path adds before the model call, median of rounds",
          withModel.commands.added.median,
          "",
          "<=",
          0,
        ),
      );
    } finally {
      await Promise.all([dh.close(), site.close()]);
      if (key !== undefined) process.env.OPENAI_API_KEY = key;
    }
    return output;
  },
};
