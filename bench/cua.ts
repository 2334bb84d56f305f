// cua: what computer-use mode costs per step besides the model: the action (real input events),
// the settle wait, and the screenshot (captured and scaled by the browser, PNG). The model is the
// scripted computer-use server answering at once on loopback, so a step's wall time is Deckhand's
// plus the HTTP round trip of the model call (shown apart: it includes encoding the screenshot
// into the request and the provider code's work).

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type FixtureServer,
  type ScriptedComputerUseModel,
  startComputerUseModel,
  startFixtureServer,
} from "@deckhand/testkit";
import type { Deckhand, Page } from "deckhand";
import { runComputerUse } from "../packages/deckhand/src/agent/cua/index.ts";
import type { CuaModel, CuaStep } from "../packages/deckhand/src/agent/cua/types.ts";
import { startDeckhand } from "./support/browser.ts";
import { emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PAGE = `<!doctype html><html><head><title>Counter</title><style>
  body { margin: 0; font: 16px sans-serif; }
  button { position: absolute; left: 100px; top: 100px; width: 160px; height: 50px; }
</style></head><body>
  <button id="b" onclick="this.textContent = String(Number(this.textContent) + 1)">0</button>
  <p style="position:absolute;left:100px;top:200px;width:600px">A small page: one button that counts its clicks.</p>
</body></html>`;

const STEPS = 10;

interface Provider {
  label: string;
  model: (m: ScriptedComputerUseModel) => CuaModel;
  queue: (m: ScriptedComputerUseModel, click: { x: number; y: number }) => void;
}

const PROVIDERS: Provider[] = [
  {
    label: "openai computer-use-preview (fetch)",
    model: (m) => ({
      provider: "openai",
      modelName: "computer-use-preview",
      apiKey: "sk-bench",
      baseURL: m.openaiBaseURL,
    }),
    queue: (m, p) => {
      for (let i = 0; i < STEPS; i++)
        m.queue("openai", { calls: [{ action: { type: "click", button: "left", ...p } }] });
      m.queue("openai", { text: "done" });
    },
  },
  {
    label: "openai gpt-5.4 computer (AI SDK)",
    model: (m) => ({
      provider: "openai",
      modelName: "gpt-5.4",
      apiKey: "sk-bench",
      baseURL: m.openaiBaseURL,
    }),
    queue: (m, p) => {
      for (let i = 0; i < STEPS; i++)
        m.queue("openai", { calls: [{ actions: [{ type: "click", button: "left", ...p }] }] });
      m.queue("openai", { text: "done" });
    },
  },
  {
    label: "anthropic computer_20250124 (AI SDK)",
    model: (m) => ({
      provider: "anthropic",
      modelName: "claude-sonnet-4-5",
      apiKey: "sk-bench",
      baseURL: m.anthropicBaseURL,
    }),
    queue: (m, p) => {
      for (let i = 0; i < STEPS; i++)
        m.queue("anthropic", { toolUses: [{ action: "left_click", coordinate: [p.x, p.y] }] });
      m.queue("anthropic", { text: "done" });
    },
  },
  {
    label: "google computer_use (fetch)",
    model: (m) => ({
      provider: "google",
      modelName: "gemini-2.5-computer-use-preview-10-2025",
      apiKey: "bench",
      baseURL: m.googleBaseURL,
    }),
    queue: (m, p) => {
      // Gemini's grid: 1000 units over the 1280x800 window.
      const args = { x: Math.round((p.x / 1280) * 1000), y: Math.round((p.y / 800) * 1000) };
      for (let i = 0; i < STEPS; i++) m.queue("google", { functionCalls: [{ name: "click_at", args }] });
      m.queue("google", { text: "done" });
    },
  },
];

export const cuaSuite: Suite = {
  name: "cua",
  title: "computer-use mode: Deckhand's time per step (action, settle, screenshot) per provider",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const reps = ctx.reps(5, 2);
    let dh: Deckhand | undefined;
    let site: FixtureServer | undefined;
    let model: ScriptedComputerUseModel | undefined;
    try {
      [dh, site, model] = await Promise.all([
        startDeckhand({ localBrowserLaunchOptions: { viewport: { width: 1280, height: 800 } } }),
        startFixtureServer(),
        startComputerUseModel(),
      ]);
      site.route("/bench/cua.html", (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(PAGE);
      });
      const page: Page = dh.context.pages()[0]!;
      const rows: (string | number)[][] = [];
      for (const provider of PROVIDERS) {
        ctx.progress(`cua: ${provider.label}`);
        const added: number[] = [];
        const stepMs: number[] = [];
        const callMs: number[] = [];
        let pngBytes = 0;
        for (let rep = 0; rep < reps; rep++) {
          await page.goto(site.url("/bench/cua.html"));
          model.reset();
          provider.queue(model, { x: 180, y: 125 });
          const steps: CuaStep[] = [];
          const calls: number[] = [];
          const started = performance.now();
          const result = await runComputerUse({
            page,
            model: provider.model(model),
            instruction: "click the button ten times",
            recordStep: (s) => steps.push(s),
            addUsage: (u) => calls.push(u.inference_time_ms),
            maxSteps: STEPS + 1,
          });
          const wall = performance.now() - started;
          const count = await page.evaluate(() => document.getElementById("b")!.textContent);
          if (!result.success || count !== String(STEPS)) {
            throw new Error(
              `${provider.label}: the run did not click ${STEPS} times (${count}): ${result.message}`,
            );
          }
          const modelMs = calls.reduce((a, b) => a + b, 0);
          added.push((wall - modelMs) / STEPS);
          stepMs.push(...steps.map((s) => s.durationMs));
          callMs.push(...calls);
          pngBytes = steps.at(-1)?.screenshot?.length ?? 0;
        }
        const a = summarize(added);
        const s = summarize(stepMs);
        const c = summarize(callMs);
        rows.push([
          provider.label,
          fmtMs(a.median),
          fmtMs(s.median),
          fmtMs(s.p95),
          fmtMs(c.median),
          fmtInt(pngBytes / 1024),
        ]);
        output.figures[provider.label] = { addedPerStep: a, actionAndScreenshot: s, modelCall: c, pngBytes };
      }
      output.tables.push({
        title: `A ${STEPS}-step computer-use run (one click per step) on a small page, 1280x800 window`,
        columns: ["provider (tool)", "added/step ms", "action+shot ms", "p95", "model call ms", "PNG KB"],
        rows,
        notes: [
          "added/step: (the run's wall time - the model calls' time) / steps: the first screenshot, the actions, settle and screenshots, the loop.",
          "action+shot: one call's real input events, the settle wait (up to 2 s; a still page ends it at once) and the screenshot after it.",
          "model call: the HTTP round trip to the scripted server on loopback, screenshot encoding and provider code included (no model time).",
        ],
      });
    } finally {
      await Promise.all([dh?.close(), site?.close(), model?.close()]);
    }
    return output;
  },
};
