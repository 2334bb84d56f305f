// The agent in DOM mode, LOCAL: multi-page tasks on real pages with the scripted model behind the
// real OpenAI provider code (chat completions with tool_calls), and what a user checks: the page
// reached, the result, the secrets kept out, the metrics and the history.

import { type AgentResult, ServiceCancelledError } from "deckhand";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type OpsFixture, onAct, open, opsFixture, step, textOf } from "../ops/helpers.ts";
import { actByRules, agentRequests, call, scriptAgent, verifyWith } from "./helpers.ts";

const PASSWORD = "correct-horse-42";

describe("agent (dom, LOCAL)", () => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
  }, 60_000);
  afterAll(() => fx?.close());
  beforeEach(() => {
    fx.model.clear();
    fx.model.resetRequests();
  });

  const loginRules = () =>
    actByRules(fx.model, [
      { when: /%user%/, line: /textbox: Username/, method: "fill", args: ["%user%"] },
      { when: /%password%/, line: /textbox: Password/, method: "fill", args: ["%password%"] },
      { when: /Sign in/i, line: "button: Sign in", method: "click" },
      { when: /search box/i, line: /searchbox: Search products/, method: "fill", args: ["green tea"] },
      { when: /Search button/i, line: "button: Search", method: "click" },
      { when: /Add Green tea/i, line: "button: Add Green tea to cart", method: "click" },
      { when: /Place order/i, line: "button: Place order", method: "click" },
    ]);

  it("logs in with variables, searches, adds to a cart across an iframe, and extracts the confirmation into output", async () => {
    const page = await open(fx, "agent/login.html");
    loginRules();
    verifyWith(fx.model, (r) => r.text.includes("Order confirmed: number A-1042"));
    scriptAgent(fx.model, [
      [call("ariaTree")],
      [call("act", { action: "type %user% into the Username field" })],
      [call("act", { action: "type %password% into the Password field" })],
      [call("act", { action: "click the Sign in button" })],
      [call("ariaTree")],
      [call("act", { action: "type green tea into the search box" })],
      [call("act", { action: "click the Search button" })],
      [call("act", { action: "click Add Green tea to cart" })],
      [call("act", { action: "click Place order" })],
      [call("ariaTree")],
      [
        call("done", {
          reasoning: "The confirmation shows the order number",
          taskComplete: true,
          output: { orderNumber: "A-1042" },
        }),
      ],
    ]);
    const steps: number[] = [];
    const result = (await fx.dh.agent().execute({
      instruction: "Log in, find green tea, buy it and tell me the order number",
      variables: { user: "alice", password: { value: PASSWORD, description: "the account password" } },
      output: z.object({ orderNumber: z.string() }),
      callbacks: { onStepFinish: (s) => void steps.push(s.stepNumber) },
    })) as AgentResult<{ orderNumber: string }>;

    expect(result.message).toBe("The confirmation shows the order number");
    expect(result.success).toBe(true);
    expect(result.completed).toBe(true);
    expect(result.output).toEqual({ orderNumber: "A-1042" });
    // The page really went there: logged in as alice, searched, and the cart frame holds the order.
    expect(page.url()).toContain("search.html?q=green+tea");
    const cart = page.frames().find((f) => f.url.includes("cart.html"))!;
    expect(await cart.evaluate(() => document.getElementById("confirmation")!.textContent)).toBe(
      "Order confirmed: number A-1042",
    );
    expect(steps).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(result.actions.filter((a) => a.type === "act")).toHaveLength(7);
    // The model saw names and descriptions, never the password.
    const agentAsked = agentRequests(fx.model);
    expect(agentAsked[0]!.system).toContain("%password%: the account password");
    for (const r of fx.model.requests) expect(JSON.stringify(r.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
    expect(JSON.stringify(await fx.dh.history)).not.toContain(PASSWORD);
    // Usage and metrics: the agent's own calls under agent*, its acts under act*.
    const metrics = await fx.dh.metrics;
    expect(metrics.agentPromptTokens).toBe(100 * agentAsked.length);
    expect(metrics.actPromptTokens).toBeGreaterThanOrEqual(100 * 7);
    expect(result.usage!.input_tokens).toBe(metrics.totalPromptTokens);
    // The history has the act calls the tools made.
    const history = await fx.dh.history;
    expect(history.filter((h) => h.method === "act").length).toBe(7);
  }, 60_000);

  it("keeps only the newest outline in full in the conversation", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("ariaTree")],
      [call("think", { reasoning: "look again" })],
      [call("ariaTree")],
      [call("done", { reasoning: "read it twice", taskComplete: true })],
    ]);
    const result = await fx.dh.agent().execute("Read the page twice");
    expect(result.success).toBe(true);
    const last = agentRequests(fx.model).at(-1)!;
    expect(last.text.match(/button: Sign in/g)).toHaveLength(1);
    expect(last.text).toContain("[an older outline; see the newest one]");
  });

  it("does not believe a done the page contradicts (wrong password)", async () => {
    const page = await open(fx, "agent/login.html");
    loginRules();
    verifyWith(fx.model, (r) => !r.text.includes("Invalid username or password"));
    scriptAgent(fx.model, [
      [call("act", { action: "type %user% into the Username field" })],
      [call("act", { action: "type %password% into the Password field" })],
      [call("act", { action: "click the Sign in button" })],
      [call("done", { reasoning: "I am logged in", taskComplete: true })],
    ]);
    const result = await fx.dh.agent().execute({
      instruction: "Log in",
      variables: { user: "bob", password: "wrong-password-1" },
    });
    expect(page.url()).toContain("login.html");
    expect(result.success).toBe(false);
    expect(result.completed).toBe(true);
    expect(result.message).toMatch(/said the task was complete.*page does not show it/);
  });

  it("stops at maxSteps with success: false", async () => {
    await open(fx, "agent/login.html");
    scriptAgent(fx.model, [[call("ariaTree")], [call("think", { reasoning: "hmm" })], [call("ariaTree")]]);
    const result = await fx.dh.agent().execute({ instruction: "Wander", maxSteps: 2 });
    expect(result.success).toBe(false);
    expect(result.completed).toBe(false);
    expect(result.message).toContain("all 2 steps");
    expect(agentRequests(fx.model)).toHaveLength(2);
  });

  it("tells the model once about a button that does nothing, then stops with success: false", async () => {
    const page = await open(fx, "agent/dead-button.html");
    actByRules(fx.model, [{ when: /Download/, line: "button: Download report", method: "click" }]);
    const turns = Array.from({ length: 12 }, () => [
      call("act", { action: "click the Download report button" }),
    ]);
    scriptAgent(fx.model, turns);
    const result = await fx.dh.agent().execute("Download the report");
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/stuck/);
    const asked = agentRequests(fx.model);
    // Told once (3 repeats), then 3 more: six clicks, six requests.
    expect(asked).toHaveLength(6);
    expect(
      asked.filter((r) => r.text.includes("Warning: you have repeated the same action")).length,
    ).toBeGreaterThan(0);
    expect(page.url()).toContain("dead-button.html");
  });

  it("also notices the same click in other words: actions that change nothing", async () => {
    await open(fx, "agent/dead-button.html");
    actByRules(fx.model, [{ when: /Download|report/i, line: "button: Download report", method: "click" }]);
    const words = ["click Download report", "press the Download report button", "click the report button"];
    scriptAgent(
      fx.model,
      Array.from({ length: 15 }, (_, i) => [call("act", { action: words[i % words.length]! })]),
    );
    const result = await fx.dh.agent().execute("Download the report");
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/stuck.*actions that changed nothing/);
    expect(agentRequests(fx.model).length).toBeLessThan(15);
  });

  it("filling several fields in a row is progress, not a loop", async () => {
    await open(fx, "form.html");
    verifyWith(fx.model, () => true);
    onAct(fx.model, (request) => {
      const ids = [...request.text.matchAll(/\[(\d+)\] textbox/g)].map((m) => Number(m[1]));
      const n = Number(/field (\d)/.exec(request.lastUserText)?.[1] ?? 0);
      return step({ elementId: ids[n % ids.length]!, method: "fill", arguments: [`text ${n}`] });
    });
    scriptAgent(fx.model, [
      ...Array.from({ length: 6 }, (_, i) => [call("act", { action: `type into field ${i}` })]),
      [call("done", { reasoning: "filled", taskComplete: true })],
    ]);
    const result = await fx.dh.agent().execute("Fill the form");
    expect(result.message).not.toMatch(/stuck/);
    expect(result.actions.filter((a) => a.type === "act" && a.success)).toHaveLength(6);
  });

  it("stops scrolling an endless feed", async () => {
    await open(fx, "agent/feed.html");
    const turns = Array.from({ length: 30 }, () => [call("scroll", { direction: "down", percentage: 100 })]);
    scriptAgent(fx.model, turns);
    const result = await fx.dh.agent().execute({ instruction: "Find the post about cats", maxSteps: 30 });
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/stuck/);
    // The page did grow: it was real scrolling.
    expect(await fx.dh.page.evaluate(() => document.querySelectorAll("li").length)).toBeGreaterThan(20);
    expect(agentRequests(fx.model).length).toBeLessThan(30);
  });

  it("a tool that takes longer than toolTimeout answers the model with an error", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    // From the model's answer asking for the wait to its next question: the tool's time and one
    // look at the page, not the agent's whole run (a busy machine makes that long on its own).
    let waitAsked = 0;
    let nextAsked = 0;
    scriptAgent(fx.model, [
      () => {
        waitAsked = Date.now();
        return [call("wait", { timeMs: 10_000 })];
      },
      (request) => {
        nextAsked = Date.now();
        expect(request.text).toContain("did not finish within 300 ms");
        return [call("done", { reasoning: "gave up waiting", taskComplete: false })];
      },
    ]);
    const result = await fx.dh.agent().execute({ instruction: "Wait", toolTimeout: 300 });
    // Before the 10 s the wait asked for (its longest) were over.
    expect(nextAsked - waitAsked).toBeLessThan(9_000);
    expect(result.success).toBe(false);
    expect(result.actions[0]).toMatchObject({ type: "wait", success: false });
  });

  it("a tool's click a moving cover keeps out stops at toolTimeout, and its answer to the model ends with the call log", async () => {
    // A spinning overlay is never a still cover: the click retries until its time is over. The
    // tool's time (3 s) ends before the act's own click wait (3 s from the click's start) can.
    await open(fx, "spinner-overlay.html");
    actByRules(fx.model, [{ when: /Under spinner/, line: "button: Under spinner", method: "click" }]);
    scriptAgent(fx.model, [
      [call("act", { action: "click the Under spinner button" })],
      [call("done", { reasoning: "the overlay never went away", taskComplete: false })],
    ]);
    const result = await fx.dh.agent().execute({ instruction: "Click Under spinner", toolTimeout: 3_000 });

    const act = result.actions[0]!;
    expect(act).toMatchObject({ type: "act", success: false });
    const error = String((act.result as { error?: unknown }).error);
    const [sentence, log = ""] = error.split("\nCall log:\n");
    expect(sentence).toBe("The act tool did not finish within 3000 ms and was stopped.");
    const lines = log.split("\n").map((line) => line.replace(/^ {2}- /, ""));
    expect(lines).toContainEqual(expect.stringMatching(/^click: waiting for locator\(/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^<div id="spinner-overlay"[^>]*>.*intercepts pointer events - retrying/),
    );
    // The model was told the same (its second request carries the tool's answer).
    const told = agentRequests(fx.model)[1]!.text;
    expect(told).toContain("did not finish within 3000 ms");
    expect(told).toContain("intercepts pointer events - retrying");
    // Nothing clicked then, nor after the tool stopped: with the overlay gone, one click is one line.
    await fx.dh.page.evaluate(() => document.getElementById("spinner-overlay")!.remove());
    await fx.dh.page.locator("#under-spinner").click();
    expect(await textOf(fx.dh.page, "#log")).toBe("under-spinner clicked\n");
  }, 30_000);

  it("an abort rejects with a typed error", async () => {
    await open(fx, "agent/login.html");
    scriptAgent(fx.model, [[call("wait", { timeMs: 5_000 })]]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    await expect(
      fx.dh.agent().execute({ instruction: "Wait", signal: controller.signal }),
    ).rejects.toBeInstanceOf(ServiceCancelledError);
  });

  it("goto refuses the machine's files and the browser's own pages, tells the model why, and the page stays", async () => {
    const page = await open(fx, "agent/login.html");
    scriptAgent(fx.model, [
      [call("goto", { url: "file:///etc/passwd" })],
      [call("goto", { url: "chrome://version/" })],
      [call("done", { reasoning: "Neither page may be opened", taskComplete: false })],
    ]);
    const result = await fx.dh.agent().execute({ instruction: "Show me /etc/passwd", maxSteps: 5 });
    const gotos = result.actions.filter((a) => a.type === "goto");
    expect(gotos.map((a) => a.success)).toEqual([false, false]);
    expect(JSON.stringify(gotos[0]?.result)).toContain(
      "The agent cannot open this URL: file: URLs cannot be opened in the agent's page",
    );
    expect(JSON.stringify(gotos[1]?.result)).toContain("chrome: URLs cannot be opened in the agent's page");
    // The model read the refusal as the tool's answer.
    expect(agentRequests(fx.model)[1]?.text).toContain("file: URLs cannot be opened in the agent's page");
    // The page never left the site.
    expect(page.url()).toBe(fx.site.url("agent/login.html"));
    expect(await page.evaluate(() => document.body.innerText)).not.toContain("root:");
  });

  it("excludeTools keeps tools from the model; a bad instruction is a typed error", async () => {
    await open(fx, "agent/login.html");
    scriptAgent(fx.model, [[call("done", { reasoning: "nothing to do", taskComplete: false })]]);
    await fx.dh
      .agent({ systemPrompt: "Be brief." })
      .execute({ instruction: "Nothing", excludeTools: ["goto", "navback"] });
    const [request] = agentRequests(fx.model);
    const names = request!.tools.map((t) => t.name);
    expect(names).not.toContain("goto");
    expect(names).toContain("act");
    expect(request!.system).toContain("Be brief.");
    await expect(fx.dh.agent().execute("  ")).rejects.toThrow(/needs an instruction/);
    await expect(fx.dh.agent().execute({ instruction: "x", maxSteps: 0 })).rejects.toThrow(/maxSteps/);
  });
});
