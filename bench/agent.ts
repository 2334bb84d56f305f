// agent: what the agent costs besides its model. (1) The time Deckhand adds per step around the
// model call (the loop, the tool, the step's bookkeeping, loop detection), on a small page, for a
// step that only thinks, one that reads the outline, and a realistic mix (read, then act). The
// model is the scripted OpenAI-compatible server answering at once on loopback; the model calls'
// own time (the agent's and act's, as the metrics record them) is subtracted. (2) The tokens the
// outline tool gives the model against the page's whole text and its HTML. (3) A run replayed from
// the cache against the first run of the same task: its time and its tokens.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type FixtureServer,
  match,
  type ScriptedModel,
  ScriptedReply,
  type ScriptedRequest,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { type Deckhand, type DeckhandMetrics, takeSnapshot } from "deckhand";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { ARIA_TREE_TOKEN_BUDGET } from "../packages/deckhand/src/agent/tools.ts";
import { BENCH_TMP_PREFIX, rememberDir, startDeckhand } from "./support/browser.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput, verdict } from "./support/report.ts";
import { summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const STEPS = 10;
/** The model latency of the replay comparison: a fast real model (real ones take 1-5 s a call). */
const REPLAY_MODEL_LATENCY_MS = 500;
const MODEL_KEY = "sk-bench-agent-0123456789";

const isAgent = (r: ScriptedRequest) => r.tools.some((t) => t.name === "done");
const toolCall = (name: string, args: object = {}) => ScriptedReply.toolCalls({ name, arguments: args });

/** The agent's model: `turns` tool calls, then done (taskComplete false: no check of the page). */
function script(model: ScriptedModel, turns: ((i: number) => ReturnType<typeof toolCall>)[]): void {
  let i = 0;
  model.on(isAgent, () => {
    const turn = turns[i];
    i++;
    return turn ? turn(i) : toolCall("done", { reasoning: "bench", taskComplete: false });
  });
}

function metricsDelta(before: DeckhandMetrics, after: DeckhandMetrics) {
  return {
    inferenceMs: after.totalInferenceTimeMs - before.totalInferenceTimeMs,
    agentCalls: 0,
    tokens:
      after.totalPromptTokens -
      before.totalPromptTokens +
      after.totalCompletionTokens -
      before.totalCompletionTokens,
  };
}

export const agentSuite: Suite = {
  name: "agent",
  title: "the agent: Deckhand's time per step around the model, outline tokens, replay without a model",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const reps = ctx.reps(6, 2);
    let dh: Deckhand | undefined;
    let site: FixtureServer | undefined;
    let model: ScriptedModel | undefined;
    let dir: string | undefined;
    try {
      [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
      dir = await mkdtemp(join(tmpdir(), `${BENCH_TMP_PREFIX}agent-`));
      rememberDir(dir);
      dh = await startDeckhand({
        model: { modelName: "openai/gpt-4.1-mini", apiKey: MODEL_KEY, baseURL: model.baseURL },
      });
      const page = dh.page;
      const small = site.url("login-small.html");

      // ---------- (1) time added per step ----------
      const kinds: { label: string; turns: ((i: number) => ReturnType<typeof toolCall>)[] }[] = [
        {
          label: "think (the loop alone)",
          turns: Array.from({ length: STEPS }, () => () => toolCall("think", { reasoning: "plan" })),
        },
        {
          label: "ariaTree (read the outline)",
          turns: Array.from({ length: STEPS }, () => () => toolCall("ariaTree")),
        },
        {
          label: "mix: ariaTree, then act",
          turns: Array.from({ length: STEPS }, (_, i) =>
            i % 2 === 0
              ? () => toolCall("ariaTree")
              : () => toolCall("act", { action: "type bench into the Email field" }),
          ),
        },
      ];
      // act's own model: fill the email field (the element's id read from its outline).
      model.on(match.schemaName("act"), (request) => {
        const id = Number(/\[(\d+)\] textbox: Email/.exec(request.text)?.[1] ?? -1);
        return {
          elementId: id,
          method: "fill",
          arguments: ["bench@example.com"],
          description: "fill the email",
          completed: true,
        };
      });
      const rows: (string | number)[][] = [];
      let mixAdded: number | undefined;
      for (const kind of kinds) {
        ctx.progress(`agent: ${kind.label}`);
        const added: number[] = [];
        const calls: number[] = [];
        for (let rep = 0; rep < reps; rep++) {
          await page.goto(small);
          model.clear();
          model.on(match.schemaName("act"), (request) => {
            const id = Number(/\[(\d+)\] textbox: Email/.exec(request.text)?.[1] ?? -1);
            return {
              elementId: id,
              method: "fill",
              arguments: ["bench@example.com"],
              description: "fill the email",
              completed: true,
            };
          });
          script(model, kind.turns);
          const before = await dh.metrics;
          const started = performance.now();
          const result = await dh.agent().execute({ instruction: "bench", maxSteps: STEPS + 1 });
          const wall = performance.now() - started;
          if (result.actions.filter((a) => a.success === false).length)
            throw new Error(`agent bench (${kind.label}): a step failed: ${JSON.stringify(result.actions)}`);
          const delta = metricsDelta(before, await dh.metrics);
          // STEPS tool steps plus the done step.
          added.push((wall - delta.inferenceMs) / (STEPS + 1));
          calls.push(delta.inferenceMs / (STEPS + 1));
        }
        const a = summarize(added);
        const c = summarize(calls);
        if (kind.label.startsWith("mix")) mixAdded = a.median;
        rows.push([kind.label, fmtMs(a.median), fmtMs(a.p95), fmtMs(c.median)]);
        output.figures[`step: ${kind.label}`] = { added: a, modelCallMs: c };
      }
      const stepTarget = checkTarget(
        "agent: time added per step (mix, login-small.html)",
        mixAdded ?? null,
        "ms",
        "<=",
        30,
      );
      output.targets.push(stepTarget);
      output.tables.push({
        title: `Time Deckhand adds per agent step, login-small.html (${STEPS} tool steps + done per run, ${reps} runs)`,
        columns: ["step", "added/step ms", "p95", "model calls/step ms"],
        rows,
        notes: [
          "added/step: (the run's wall time - every model call's time as the metrics record it) / steps.",
          "mix: half the steps read the outline, half act (act's own model call is subtracted too; its snapshot, checks and input events are not).",
          `target ${verdict(stepTarget)}`,
        ],
      });

      // ---------- (2) outline tokens against the page's text ----------
      ctx.progress("agent: outline tokens");
      const tokenRows: (string | number)[][] = [];
      for (const [label, path] of [
        ["login-small.html", "login-small.html"],
        ["form.html", "form.html"],
        ["generated, 5,000 el.", "/generated/large?elements=5000"],
      ] as const) {
        await page.goto(site.url(path));
        const snapshot = await takeSnapshot(page, { tokenBudget: ARIA_TREE_TOKEN_BUDGET });
        const [text, html] = await Promise.all([
          page.evaluate(() => document.body.innerText),
          page.evaluate(() => document.documentElement.outerHTML),
        ]);
        const outline = countTokens(snapshot.text);
        const inner = countTokens(text);
        const markup = countTokens(html);
        tokenRows.push([
          label,
          fmtInt(outline),
          fmtInt(inner),
          fmtInt(markup),
          `${((outline / markup) * 100).toFixed(0)}%`,
        ]);
        output.figures[`tokens: ${label}`] = { outline, innerText: inner, html: markup };
      }
      output.tables.push({
        title: "Tokens per ariaTree step (o200k) against the page's whole text",
        columns: ["page", "outline", "innerText", "HTML", "outline/HTML"],
        rows: tokenRows,
        notes: [
          `The outline carries roles, names, states and ids the model acts on; innerText has the words only, HTML everything. Budget ${fmtInt(ARIA_TREE_TOKEN_BUDGET)} tokens.`,
          "Only the newest outline stays in full in the conversation: older ones become one line.",
        ],
      });

      // ---------- (3) replay without a model ----------
      ctx.progress("agent: replay");
      await dh.close();
      dh = await startDeckhand({
        model: { modelName: "openai/gpt-4.1-mini", apiKey: MODEL_KEY, baseURL: model.baseURL },
        cacheDir: dir,
      });
      const replayRows: (string | number)[][] = [];
      const replayTargets: { time?: number; tokens?: number } = {};
      for (const latency of [REPLAY_MODEL_LATENCY_MS, 0]) {
        const firstMs: number[] = [];
        const replayMs: number[] = [];
        let firstTokens = 0;
        let replayTokens = 0;
        for (let rep = 0; rep < reps; rep++) {
          const instruction = `Sign in (bench ${latency} ${rep})`;
          model.clear();
          model.latencyMs = latency;
          model.on(match.schemaName("act"), (request) => {
            const instructionLine = /Instruction: (.*)/.exec(request.lastUserText)?.[1] ?? "";
            const variable = /%(email|password)%/.exec(instructionLine)?.[1];
            const pick =
              variable === "email"
                ? /\[(\d+)\] textbox: Email/
                : variable === "password"
                  ? /\[(\d+)\] textbox: Password/
                  : /\[(\d+)\] button: Sign in/;
            return {
              elementId: Number(pick.exec(request.text)?.[1] ?? -1),
              method: variable ? "fill" : "click",
              arguments: variable ? [`%${variable}%`] : [],
              description: instructionLine,
              completed: true,
            };
          });
          model.on(match.schemaProperty("goalReached"), { goalReached: true, evidence: "signed in" });
          let turn = 0;
          const turns = [
            () => toolCall("ariaTree"),
            () => toolCall("act", { action: "type %email% into the Email field" }),
            () => toolCall("act", { action: "type %password% into the Password field" }),
            () => toolCall("act", { action: "click the Sign in button" }),
            () => toolCall("done", { reasoning: "signed in", taskComplete: true }),
          ];
          model.on(isAgent, () => turns[Math.min(turn++, turns.length - 1)]!());
          const run = async () => {
            await dh!.page.goto(small);
            const before = await dh!.metrics;
            const started = performance.now();
            const result = await dh!.agent().execute({
              instruction,
              variables: { email: "bench@example.com", password: "bench-password" },
            });
            const ms = performance.now() - started;
            if (!result.success) throw new Error(`agent bench replay: the run failed: ${result.message}`);
            return {
              ms,
              tokens: metricsDelta(before, await dh!.metrics).tokens,
              hit: result.metadata?.cacheHit === true,
            };
          };
          const first = await run();
          const calls = model.callCount;
          const again = await run();
          if (!again.hit || model.callCount !== calls)
            throw new Error("agent bench replay: the second run was not a replay");
          firstMs.push(first.ms);
          replayMs.push(again.ms);
          firstTokens = first.tokens;
          replayTokens = again.tokens;
        }
        const f = summarize(firstMs);
        const r = summarize(replayMs);
        const share = r.median / f.median;
        if (latency === REPLAY_MODEL_LATENCY_MS) {
          replayTargets.time = share * 100;
          replayTargets.tokens = replayTokens;
        }
        replayRows.push([
          `${latency} ms`,
          fmtMs(f.median),
          fmtInt(firstTokens),
          fmtMs(r.median),
          fmtInt(replayTokens),
          `${(share * 100).toFixed(1)}%`,
        ]);
        output.figures[`replay: model latency ${latency} ms`] = {
          first: f,
          replay: r,
          firstTokens,
          replayTokens,
        };
      }
      const timeTarget = checkTarget(
        `agent: replayed run's time vs the first run (model ${REPLAY_MODEL_LATENCY_MS} ms a call)`,
        replayTargets.time ?? null,
        "%",
        "<=",
        10,
      );
      const tokenTarget = checkTarget(
        "agent: replayed run's tokens",
        replayTargets.tokens ?? null,
        "",
        "==",
        0,
      );
      output.targets.push(timeTarget, tokenTarget);
      output.tables.push({
        title:
          "A sign-in run (outline, 3 acts with variables, done, the check of the page) and its replay from cacheDir",
        columns: ["model latency/call", "first run ms", "tokens", "replay ms", "tokens", "replay/first"],
        rows: replayRows,
        notes: [
          "The replay makes no model call: each stored step's element is checked (role and name) and acted on with real input events.",
          `At ${REPLAY_MODEL_LATENCY_MS} ms a call (a fast real model); at 0 ms the comparison is Deckhand's work alone.`,
          "The first run makes the agent's 5 calls and the check of the page; its 3 acts call act's model in the first repetition only (act's own cache serves them after), so its time is on the low side.",
          `targets: ${verdict(timeTarget)}; ${verdict(tokenTarget)}`,
        ],
      });
    } finally {
      await Promise.all([dh?.close(), site?.close(), model?.close()]);
      if (dir) await rm(dir, { recursive: true, force: true });
    }
    return output;
  },
};
