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
  runExplicitCase,
  startFixtureServer,
} from "@deckhand/testkit";
import { type Deckhand, MissingLLMConfigurationError } from "deckhand";
import { startDeckhand } from "./support/browser.ts";
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
  }
  return figures;
}

const pct = (n: number, of: number) => `${n} of ${of} (${((100 * n) / Math.max(1, of)).toFixed(1)}%)`;

/** Median times of an explicit act and of refusals on the generated 5,000-element page. */
async function largePage(dh: Deckhand, url: string, reps: number) {
  const acts: number[] = [];
  const refusals: number[] = [];
  const unparsed: number[] = [];
  // Refused after reading the page: the name is on no element, or on many.
  const refused = ["click the Checkout button", "click Target"];
  for (let i = 0; i < reps; i++) {
    await dh.page.goto(url);
    for (const instruction of [...refused, "summarise the records table"]) {
      const started = performance.now();
      const error = await dh.act(instruction).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!isModelError(error)) throw new Error(`${instruction}: expected a refusal, got ${String(error)}`);
      (refused.includes(instruction) ? refusals : unparsed).push(performance.now() - started);
    }
    const started = performance.now();
    const result = await dh.act("click the Target button");
    if (!result.success) throw new Error(`click the Target button: ${result.message}`);
    acts.push(performance.now() - started);
  }
  return { acts: summarize(acts), refusals: summarize(refusals), unparsed: summarize(unparsed) };
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
    const [dh, site] = await Promise.all([startDeckhand(), startFixtureServer()]);
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
          "Tokens used: 0 (there is no model; anything not explicit throws MissingLLMConfigurationError).",
        ],
      });
      ctx.progress("explicit: a page of 5,000 elements");
      const large = await largePage(dh, site.url("generated/large?elements=5000"), ctx.reps(15, 5));
      output.tables.push({
        title: "On a page of 5,000 elements (generated/large): time in act() with no model",
        columns: ["", "n", "median ms", "p95 ms"],
        rows: [
          [
            "explicit act carried out (page read, element found, click, check)",
            large.acts.n,
            fmtMs(large.acts.median),
            fmtMs(large.acts.p95),
          ],
          [
            "refusal after reading the page (a name no element has)",
            large.refusals.n,
            fmtMs(large.refusals.median),
            fmtMs(large.refusals.p95),
          ],
          [
            "refusal by the grammar (not an explicit instruction)",
            large.unparsed.n,
            fmtMs(large.unparsed.median),
            fmtMs(large.unparsed.p95),
          ],
        ].map((r) => r.map((v) => (typeof v === "number" ? fmtInt(v) : v))),
        notes: [],
      });
      output.figures["development: share carried out"] = dev.carriedOut / dev.explicit;
      output.figures["held out: share carried out"] = held.carriedOut / held.explicit;
      output.figures["wrong resolutions"] = dev.wrong.length + held.wrong.length;
      output.figures["explicit act, 5,000 elements"] = large.acts;
      output.figures["refusal, 5,000 elements"] = large.refusals;
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
        checkTarget("refusal before the model call, median", large.refusals.median, "ms", "<=", 10),
      );
    } finally {
      await Promise.all([dh.close(), site.close()]);
      if (key !== undefined) process.env.OPENAI_API_KEY = key;
    }
    return output;
  },
};
