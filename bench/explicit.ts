// explicit: the labelled set of explicit instructions (testkit's EXPLICIT_CASES) run with no
// model: the share carried out without one, the number of wrong resolutions (an element other
// than the label's, or any action where the label says the model must decide), and what an
// explicit act costs in time. The test explicit-set.test.ts asserts the same outcomes case by case.

import { EXPLICIT_CASES, type ExplicitCase, startFixtureServer } from "@deckhand/testkit";
import { type Deckhand, MissingLLMConfigurationError } from "deckhand";
import { startDeckhand } from "./support/browser.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

interface Hit {
  type: string;
  id: string | null;
}

type Outcome = { kind: "acted"; ids: string[]; page: boolean } | { kind: "model" } | { kind: "not-done" };

async function runCase(
  dh: Deckhand,
  url: string,
  c: ExplicitCase,
): Promise<{ outcome: Outcome; ms: number }> {
  await dh.page.goto(url);
  await dh.page.evaluate(() => {
    (window as unknown as { __hits: unknown[] }).__hits.length = 0;
  });
  const started = performance.now();
  let outcome: Outcome;
  try {
    const result = await dh.act(c.instruction, c.variables ? { variables: c.variables } : {});
    const ms = performance.now() - started;
    const hits = await dh.page.evaluate(() => (window as unknown as { __hits: Hit[] }).__hits);
    const kinds = c.instruction.startsWith("hover")
      ? ["mouseover"]
      : ["click", "dblclick", "keydown", "input", "change"];
    const ids = [...new Set(hits.filter((h) => kinds.includes(h.type) && h.id).map((h) => h.id!))];
    outcome = result.success
      ? { kind: "acted", ids, page: hits.some((h) => h.type === "keydown") }
      : ids.length
        ? { kind: "acted", ids, page: false }
        : { kind: "not-done" };
    return { outcome, ms };
  } catch (error) {
    if (!(error instanceof MissingLLMConfigurationError)) throw error;
    return { outcome: { kind: "model" }, ms: performance.now() - started };
  }
}

/** Whether an outcome acted where it must not (the number the issue wants at zero). */
function wrong(c: ExplicitCase, o: Outcome): boolean {
  if (o.kind !== "acted") return false;
  if (c.expect === "page") return o.ids.length > 0;
  if (c.expect === "model" || c.expect === "not-done") return true;
  return o.ids.length !== 1 || o.ids[0] !== c.expect;
}

/** Whether an outcome is exactly what the label says. */
function matchesLabel(c: ExplicitCase, o: Outcome): boolean {
  if (c.expect === "model" || c.expect === "not-done") return o.kind === c.expect;
  if (o.kind !== "acted") return false;
  if (c.expect === "page") return o.ids.length === 0 && o.page;
  return o.ids.length === 1 && o.ids[0] === c.expect;
}

export const explicitSuite: Suite = {
  name: "explicit",
  title: "Explicit instructions without a model: share resolved, wrong resolutions, time per act",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    // No key anywhere: whatever is not explicit fails with MissingLLMConfigurationError. (The
    // key, if any, is put back for the suites that run after this one.)
    const key = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    const [dh, site] = await Promise.all([startDeckhand(), startFixtureServer()]);
    try {
      let resolved = 0;
      let wrongCount = 0;
      let asExpected = 0;
      const times: number[] = [];
      const byPage = new Map<string, { total: number; resolved: number }>();
      const wrongOnes: string[] = [];
      ctx.progress(`explicit: ${EXPLICIT_CASES.length} labelled instructions`);
      for (const c of EXPLICIT_CASES) {
        const { outcome, ms } = await runCase(dh, site.url(`explicit/${c.page}.html`), c);
        const row = byPage.get(c.page) ?? { total: 0, resolved: 0 };
        row.total++;
        if (outcome.kind === "acted") {
          resolved++;
          row.resolved++;
          times.push(ms);
        }
        byPage.set(c.page, row);
        if (wrong(c, outcome)) {
          wrongCount++;
          wrongOnes.push(`${c.page}: ${c.instruction}`);
        }
        if (matchesLabel(c, outcome)) asExpected++;
      }
      const total = EXPLICIT_CASES.length;
      const explicitLabelled = EXPLICIT_CASES.filter(
        (c) => c.expect !== "model" && c.expect !== "not-done",
      ).length;
      const time = summarize(times);
      output.tables.push({
        title: `The labelled set, no model (${total} instructions over 5 fixture pages)`,
        columns: ["page", "instructions", "resolved without a model"],
        rows: [
          ...[...byPage].map(([page, r]) => [page, r.total, r.resolved]),
          ["all", total, `${resolved} (${((100 * resolved) / total).toFixed(1)}%)`],
        ],
        notes: [
          `Labelled as explicit (one element, or a key on the page): ${explicitLabelled}; as needing the model or failing on a disabled/absent option: ${total - explicitLabelled}.`,
          `Outcome equal to the label: ${asExpected} of ${total}. Wrong resolutions: ${wrongCount}${wrongOnes.length ? ` (${wrongOnes.join("; ")})` : ""}.`,
          "Tokens used: 0 (there is no model; anything not explicit throws MissingLLMConfigurationError).",
        ],
      });
      output.tables.push({
        title: "One explicit act, carried out (page read with no token budget, element found, action, check)",
        columns: ["acts", "median ms", "p95 ms", "max ms"],
        rows: [[fmtInt(times.length), fmtMs(time.median), fmtMs(time.p95), fmtMs(time.max)]],
        notes: [],
      });
      output.figures["resolved without a model"] = resolved;
      output.figures["share resolved without a model"] = resolved / total;
      output.figures["wrong resolutions"] = wrongCount;
      output.figures["explicit act"] = time;
      output.targets.push(checkTarget("wrong resolutions", wrongCount, "", "==", 0));
      output.targets.push(checkTarget("outcomes equal to their label", asExpected, "", "==", total));
    } finally {
      await Promise.all([dh.close(), site.close()]);
      if (key !== undefined) process.env.OPENAI_API_KEY = key;
    }
    return output;
  },
};
