// The agent the same way in both modes: LOCAL runs the loop in this process, REMOTE on the service
// (POST /v1/sessions/{id}/agentExecute, streamed). What a user checks is the same: the page reached,
// the result, the secrets kept out, and metrics with the agent's own calls under agent* and its
// tools' under act* / extract*.

import { ScriptedReply } from "@deckhand/testkit";
import type { LogLine } from "deckhand";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MODES, type OpsFixture, open, opsFixture } from "../ops/helpers.ts";
import { actByRules, agentRequests, call, isAgentRequest, scriptAgent, verifyWith } from "./helpers.ts";

const PASSWORD = "correct-horse-42";

describe.each(MODES)("agent, %s", (mode) => {
  let fx: OpsFixture;
  const lines: LogLine[] = [];
  beforeAll(async () => {
    fx = await opsFixture(mode, { logger: (line) => void lines.push(line), verbose: 1 });
  }, 60_000);
  afterAll(() => fx?.close());
  beforeEach(() => {
    fx.model.clear();
    fx.model.resetRequests();
    lines.length = 0;
  });

  it("logs in with variables; metrics split as LOCAL counts them; secrets stay out", async () => {
    const page = await open(fx, "agent/login.html");
    actByRules(fx.model, [
      { when: /%user%/, line: /textbox: Username/, method: "fill", args: ["%user%"] },
      { when: /%password%/, line: /textbox: Password/, method: "fill", args: ["%password%"] },
      { when: /Sign in/i, line: "button: Sign in", method: "click" },
    ]);
    // The page shows the user's name, which is a variable's value: the model sees its %name%.
    verifyWith(fx.model, (r) => r.text.includes("heading: Welcome, %user%"));
    scriptAgent(fx.model, [
      [call("ariaTree")],
      [call("act", { action: "type %user% into the Username field" })],
      [call("act", { action: "type %password% into the Password field" })],
      [call("act", { action: "click the Sign in button" })],
      [call("done", { reasoning: "The welcome heading is shown", taskComplete: true })],
    ]);
    const before = await fx.dh.metrics;
    const result = await fx.dh.agent().execute({
      instruction: "Log in",
      variables: { user: "alice", password: { value: PASSWORD, description: "the password" } },
      maxSteps: 8,
    });
    expect(result).toMatchObject({ success: true, completed: true, message: "The welcome heading is shown" });
    expect(page.url()).toContain("account.html?user=alice");
    expect(result.actions.map((a) => a.type)).toEqual(["ariaTree", "act", "act", "act", "done", "verify"]);
    expect(result.usage).toMatchObject({ input_tokens: 100 * 9, output_tokens: 20 * 9 });

    const after = await fx.dh.metrics;
    expect(after.agentPromptTokens - before.agentPromptTokens).toBe(100 * 5);
    expect(after.actPromptTokens - before.actPromptTokens).toBe(100 * 3);
    expect(after.extractPromptTokens - before.extractPromptTokens).toBe(100);
    expect(after.totalPromptTokens - before.totalPromptTokens).toBe(100 * 9);

    for (const r of fx.model.requests) expect(JSON.stringify(r.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
    expect(JSON.stringify(lines)).not.toContain(PASSWORD);
    // A line per step (REMOTE: the service's log events of the stream).
    expect(lines.filter((l) => /step \d/.test(l.message)).length).toBeGreaterThanOrEqual(5);
    if (fx.service) {
      const replay = await fx.service.replay(fx.dh.sessionId!);
      const recorded = replay.pages.flatMap((p) => p.actions).find((a) => a.method === "agentExecute")!;
      expect(recorded.tokenUsage).toMatchObject({ inputTokens: 500, outputTokens: 100 });
      expect(JSON.stringify(replay)).not.toContain(PASSWORD);
    }
  }, 60_000);

  it("hybrid mode clicks at coordinates with real input; systemPrompt reaches the model", async () => {
    const page = await open(fx, "agent/dead-button.html");
    await page.evaluate(() => {
      const button = document.getElementById("download")!;
      button.addEventListener("click", () => {
        button.textContent = "Downloaded";
      });
    });
    const point = await page.evaluate(() => {
      const r = document.getElementById("download")!.getBoundingClientRect();
      return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) };
    });
    verifyWith(fx.model, (r) => r.text.includes("Downloaded"));
    scriptAgent(fx.model, [
      [call("click", point)],
      (request) => {
        expect(request.imageCount).toBe(1);
        return [call("done", { reasoning: "the button says Downloaded", taskComplete: true })];
      },
    ]);
    const result = await fx.dh
      .agent({ mode: "hybrid", systemPrompt: "Answer in English." })
      .execute("Download the report");
    expect(result).toMatchObject({ success: true, message: "the button says Downloaded" });
    expect(await page.evaluate(() => document.getElementById("download")!.textContent)).toBe("Downloaded");
    const [first] = agentRequests(fx.model);
    expect(first!.system).toContain("Answer in English.");
    expect(first!.tools.map((t) => t.name)).not.toContain("fillForm");
  });

  it("a run that goes wrong is a result with success: false", async () => {
    await open(fx, "agent/login.html");
    fx.model.on(isAgentRequest, ScriptedReply.httpError(400, "the request was not valid"));
    const result = await fx.dh.agent().execute("Do something");
    expect(result.success).toBe(false);
    expect(result.completed).toBe(false);
    expect(agentRequests(fx.model).length).toBeGreaterThan(0);
  });

  it("computer-use mode without a provider loop is a typed error before any call", async () => {
    await open(fx, "agent/login.html");
    const calls = fx.model.callCount;
    await expect(fx.dh.agent({ mode: "cua" }).execute("Click around")).rejects.toMatchObject({
      name: "UnsupportedModelError",
    });
    await expect(fx.dh.agent({ cua: true }).execute("Click around")).rejects.toThrow(/[Cc]omputer-use/);
    expect(fx.model.callCount).toBe(calls);
  });

  it("mode wins over the deprecated cua: true when both are given, as in the reference", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [[call("done", { reasoning: "nothing to do", taskComplete: true })]]);
    const result = await fx.dh.agent({ cua: true, mode: "dom" }).execute("Say done");
    expect(result).toMatchObject({ success: true, completed: true, message: "nothing to do" });
    // The DOM agent's tools, not a computer-use loop.
    expect(agentRequests(fx.model)[0]!.tools.map((t) => t.name)).toContain("ariaTree");
  });
});
