// `await dh.metrics` (spec 2.12) adds up the usage every model call reported, per operation and
// in total (in REMOTE mode as the service's replay record has it); `await dh.history` (spec 2.13)
// is a read-only record of every operation and navigation, in call order.

import { match } from "@deckhand/testkit";
import { type ActResult, Deckhand, type DeckhandMetrics, type HistoryEntry } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { anotherDeckhand, idOf, MODES, type OpsFixture, onAct, open, opsFixture, step } from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  /** A fresh instance for this file (its own context of the fixture's browser): nothing counted yet. */
  let dh: Deckhand;
  beforeAll(async () => {
    fx = await opsFixture(mode);
    dh = await anotherDeckhand(fx);
  });
  afterAll(async () => {
    await dh?.close();
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  /** What each metric grew by while `work` ran. */
  async function growth(work: () => Promise<unknown>): Promise<DeckhandMetrics> {
    const before = await dh.metrics;
    await work();
    const after = await dh.metrics;
    return Object.fromEntries(
      Object.entries(after).map(([key, value]) => [key, value - before[key as keyof DeckhandMetrics]]),
    ) as DeckhandMetrics;
  }

  /** The history entries `work` added. */
  async function recorded(work: () => Promise<unknown>): Promise<readonly HistoryEntry[]> {
    const before = (await dh.history).length;
    await work();
    return (await dh.history).slice(before);
  }

  const GROUPS = ["act", "extract", "observe", "agent", "total"];
  const FIELDS = [
    "PromptTokens",
    "CompletionTokens",
    "ReasoningTokens",
    "CachedInputTokens",
    "InferenceTimeMs",
  ];

  describe("metrics", () => {
    // First in the file: nothing has called a model yet.
    it("has the 25 numeric fields of section 2.12, all zero before any model call", async () => {
      const metrics = await dh.metrics;
      const expected = GROUPS.flatMap((g) => FIELDS.map((f) => `${g}${f}`));
      expect(Object.keys(metrics).sort()).toEqual([...expected].sort());
      for (const value of Object.values(metrics)) expect(value).toBe(0);
    });

    it("adds each call's reported usage to its operation and to the totals", async () => {
      await open(fx, "index.html", dh);
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }), {
        usage: { promptTokens: 1_000, completionTokens: 50, cachedPromptTokens: 200, reasoningTokens: 10 },
        latencyMs: 60,
      });
      fx.model.on(
        match.schemaName("observe"),
        { elements: [] },
        { usage: { promptTokens: 300, completionTokens: 30, cachedPromptTokens: 0, reasoningTokens: 5 } },
      );
      fx.model.on(
        match.schemaName("extract"),
        { extraction: "1" },
        { usage: { promptTokens: 700, completionTokens: 70, cachedPromptTokens: 100, reasoningTokens: 0 } },
      );
      const m = await growth(async () => {
        await dh.act("click increment");
        await dh.act("click increment");
        await dh.observe("find a link");
        await dh.extract("what is the count?");
      });
      // REMOTE metrics are read from the service's replay record, which keeps each operation's input
      // and output tokens and time, not their reasoning and cached-input parts: those stay 0 there.
      const part = (tokens: number) => (mode === "LOCAL" ? tokens : 0);

      expect([
        m.actPromptTokens,
        m.actCompletionTokens,
        m.actCachedInputTokens,
        m.actReasoningTokens,
      ]).toEqual([2_000, 100, part(400), part(20)]);
      expect([
        m.observePromptTokens,
        m.observeCompletionTokens,
        m.observeCachedInputTokens,
        m.observeReasoningTokens,
      ]).toEqual([300, 30, 0, part(5)]);
      expect([
        m.extractPromptTokens,
        m.extractCompletionTokens,
        m.extractCachedInputTokens,
        m.extractReasoningTokens,
      ]).toEqual([700, 70, part(100), 0]);
      expect([m.agentPromptTokens, m.agentCompletionTokens, m.agentInferenceTimeMs]).toEqual([0, 0, 0]);
      expect([
        m.totalPromptTokens,
        m.totalCompletionTokens,
        m.totalCachedInputTokens,
        m.totalReasoningTokens,
      ]).toEqual([3_000, 200, part(500), part(25)]);
      // Time: two answers that each waited 60 ms, and a total that is the sum of the groups.
      expect(m.actInferenceTimeMs).toBeGreaterThanOrEqual(120);
      expect(m.observeInferenceTimeMs).toBeGreaterThan(0);
      expect(m.totalInferenceTimeMs).toBe(
        m.actInferenceTimeMs + m.extractInferenceTimeMs + m.observeInferenceTimeMs + m.agentInferenceTimeMs,
      );
    });

    it("counts both attempts when an answer had to be asked for again", async () => {
      await open(fx, "index.html", dh);
      fx.model.on(match.schemaName("extract"), { extraction: "1" }, { usage: { promptTokens: 400 } });
      fx.model.once(match.schemaName("extract"), "not json", { usage: { promptTokens: 400 } });
      const m = await growth(() => dh.extract("what is the count?"));
      expect(m.extractPromptTokens).toBe(800);
    });

    it("counts the model call of an act(action) that had to find its element again under act", async () => {
      const page = await open(fx, "index.html", dh);
      // An Action for a selector that no longer leads anywhere: self-heal asks the model where the
      // element went, with an observe-style question, for the act the caller made.
      fx.model.on(
        match.schemaName("observe"),
        (request) => ({
          elements: [{ elementId: idOf(request, "button: Increment"), description: "the Increment button" }],
        }),
        { usage: { promptTokens: 250, completionTokens: 25 } },
      );
      const m = await growth(async () => {
        const result = await dh.act({
          selector: "/html[1]/body[1]/button[9]",
          description: "the Increment button",
          method: "click",
        });
        expect(result.success).toBe(true);
      });
      expect(await page.evaluate("document.querySelector('#count').textContent")).toBe("1");
      expect([m.actPromptTokens, m.actCompletionTokens]).toEqual([250, 25]);
      expect([m.observePromptTokens, m.observeCompletionTokens]).toEqual([0, 0]);
      expect(m.totalPromptTokens).toBe(250);
    });

    it("adds nothing for work that needs no model", async () => {
      await open(fx, "index.html", dh);
      const m = await growth(async () => {
        await dh.observe();
        await dh.extract();
        await dh.act({ selector: "#increment", description: "Increment", method: "click" });
      });
      for (const value of Object.values(m)) expect(value).toBe(0);
    });
  });

  describe("history", () => {
    it("records navigate, act, observe and extract in call order", async () => {
      const url = fx.site.url("index.html");
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }));
      fx.model.on(match.schemaName("observe"), { elements: [] });
      fx.model.on(match.schemaName("extract"), { extraction: "1" });
      let acted: ActResult | undefined;
      let extracted: unknown;
      const history = await recorded(async () => {
        await dh.page.goto(url);
        acted = await dh.act("click increment");
        await dh.observe("find a link");
        extracted = await dh.extract("what is the count?");
        await dh.extract();
      });

      expect(history.map((e) => e.method)).toEqual(["navigate", "act", "observe", "extract", "extract"]);
      expect(history[0]).toMatchObject({ parameters: { url }, result: { url, status: 200 } });
      expect(history[1]).toMatchObject({ parameters: { instruction: "click increment" }, result: acted });
      expect(history[2]).toMatchObject({ parameters: { instruction: "find a link" }, result: [] });
      expect(history[3]).toMatchObject({
        parameters: { instruction: "what is the count?" },
        result: extracted,
      });
      expect(history[4]!.result).toHaveProperty("pageText");
      const times = history.map((e) => e.timestamp);
      for (const t of times) expect(new Date(t).toISOString()).toBe(t);
      expect([...times].sort()).toEqual(times);
    });

    it("records an act(action) with the action it was given", async () => {
      await open(fx, "index.html", dh);
      const action = { selector: "#increment", description: "Increment", method: "click", arguments: [] };
      await dh.act(action);
      const last = (await dh.history).at(-1)!;
      expect(last).toMatchObject({ method: "act", parameters: { action }, result: { success: true } });
    });

    it("is read-only, and keeps what happened when the caller changes a result it got", async () => {
      await open(fx, "index.html", dh);
      const result: ActResult = await dh.act({
        selector: "#increment",
        description: "Increment",
        method: "click",
      });
      result.success = false;
      result.actions!.length = 0;
      const history = await dh.history;
      const entry = history.at(-1)!;
      expect(entry.result).toMatchObject({ success: true, actions: [{ method: "click" }] });
      expect(() => (history as unknown as unknown[]).push({})).toThrow(TypeError);
      expect(() => {
        (entry as { method: string }).method = "observe";
      }).toThrow(TypeError);
      expect(() => {
        (entry.result as ActResult).success = false;
      }).toThrow(TypeError);
      // A later look sees the same record.
      expect((await dh.history).at(-1)).toEqual(entry);
    });

    // The service's instances: each lives as long as its session, and the replay record is its record.
    it.runIf(mode === "LOCAL")(
      "keeps none in an instance made with inContext(..., { history: false })",
      async () => {
        const context = await fx.dh.context.browser.newContext();
        const quiet = Deckhand.inContext(context, { verbose: 0, disablePino: true }, { history: false });
        await quiet.init();
        try {
          const page = await open(fx, "index.html", quiet);
          await quiet.act({
            selector: "#increment",
            description: "Increment",
            method: "click",
            arguments: [],
          });
          expect(await page.evaluate("document.querySelector('#count').textContent")).toBe("1");
          expect(await quiet.history).toEqual([]);
        } finally {
          await quiet.close();
        }
      },
    );
  });
});
