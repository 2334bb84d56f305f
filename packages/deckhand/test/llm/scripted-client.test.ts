// ScriptedLLMClient, the helper users script a model's answers with in their own tests: act,
// observe and extract answers in their documented shapes drive a real page; every question is
// kept (instruction, outline); a question with no scripted answer fails saying what to add.

import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { type Deckhand, ScriptedLLMClient } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startDeckhand } from "../support/browser.ts";

describe("ScriptedLLMClient", () => {
  let site: FixtureServer;
  let dh: Deckhand;
  const model = new ScriptedLLMClient();
  beforeAll(async () => {
    site = await startFixtureServer();
    dh = await startDeckhand({}, { llmClient: model });
  });
  afterAll(async () => {
    await dh?.close();
    await site?.close();
  });

  it("answers act, observe and extract in their shapes, and keeps every question", async () => {
    model
      .onAct((q) => ({
        elementId: q.idOf("button: Sign in"),
        method: "click",
        arguments: [],
        description: "click Sign in",
        completed: true,
      }))
      .onObserve((q) => ({
        elements: [{ elementId: q.idOf("link: Forgot password?"), description: "the reset link" }],
      }))
      .onExtract({ heading: "Sign in to Acme" });
    await dh.page.goto(site.url("explicit/login.html"));
    await dh.page.evaluate(() => {
      (window as unknown as { __hits: unknown[] }).__hits.length = 0;
    });

    const acted = await dh.act("log in");
    expect(acted.success).toBe(true);
    const hits = await dh.page.evaluate(() =>
      (window as unknown as { __hits: { type: string; id: string }[] }).__hits.filter(
        (h) => h.type === "click",
      ),
    );
    expect(hits.map((h) => h.id)).toEqual(["sign-in"]);

    const [found] = await dh.observe("how do I reset my password");
    expect(found?.description).toBe("the reset link");
    expect(found?.selector).toMatch(/^xpath=|^\/html/);

    const data = await dh.extract("the heading", z.object({ heading: z.string() }));
    expect(data.heading).toBe("Sign in to Acme");

    expect(model.questions.map((q) => [q.operation, q.instruction])).toEqual([
      ["act", "log in"],
      ["observe", "how do I reset my password"],
      ["extract", "the heading"],
    ]);
    expect(model.questions[0]!.outline).toContain("button: Sign in");
    expect((await dh.metrics).actPromptTokens).toBeGreaterThan(0);
  });

  it("fails a question it has no answer for, saying which to add", async () => {
    const empty = new ScriptedLLMClient();
    await expect(
      empty.generate({ operation: "observe", messages: [{ role: "user", content: "Instruction: find it" }] }),
    ).rejects.toThrow(/no answer scripted for observe "find it"\. Add one with onObserve\(\)/);
  });

  it("uses an answer given a number of times, then the next", async () => {
    const counted = new ScriptedLLMClient().onExtract({ n: 1 }, 1).onExtract({ n: 2 });
    const ask = () => counted.generate({ operation: "extract", messages: [{ role: "user", content: "x" }] });
    expect((await ask()).data).toEqual({ n: 1 });
    expect((await ask()).data).toEqual({ n: 2 });
    expect((await ask()).data).toEqual({ n: 2 });
  });
});
