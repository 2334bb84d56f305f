// The agent's login-and-order task (as in agent-dom.test.ts) on local servers whose tool calling is
// uneven (issue 23): one that rejects `tools` (the tools go into the prompt and the calls are read
// from the text), one whose model writes its calls into the content (in <tool_call> blocks, or as
// a bare JSON object), and one that rejects tool_choice "required". The model is the sloppy model
// server behind the real OpenAI-compatible provider, as `ollama/...`.

import {
  match,
  ScriptedReply,
  type ScriptedRequest,
  type SloppyQuirk,
  startScriptedModel,
} from "@deckhand/testkit";
import type { AgentResult } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { idOf, type OpsFixture, open, opsFixture, step } from "../ops/helpers.ts";
import { call, isAgentRequest } from "./helpers.ts";

/** An agent request: one that offers the tools natively, or describes them in its prompt. */
const isAgentTurn = (r: ScriptedRequest) => isAgentRequest(r) || r.system.includes("<tool_call>");

const RULES: { when: RegExp; line: string | RegExp; method: string; args?: string[] }[] = [
  { when: /%user%/, line: /textbox: Username/, method: "fill", args: ["%user%"] },
  { when: /%password%/, line: /textbox: Password/, method: "fill", args: ["%password%"] },
  { when: /Sign in/i, line: "button: Sign in", method: "click" },
  { when: /search box/i, line: /searchbox: Search products/, method: "fill", args: ["green tea"] },
  { when: /Search button/i, line: "button: Search", method: "click" },
  { when: /Add Green tea/i, line: "button: Add Green tea to cart", method: "click" },
  { when: /Place order/i, line: "button: Place order", method: "click" },
];

const TURNS = [
  [call("ariaTree")],
  [call("act", { action: "type %user% into the Username field" })],
  [call("act", { action: "type %password% into the Password field" })],
  [call("act", { action: "click the Sign in button" })],
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
];

describe("agent (dom, LOCAL) with uneven tool calling", () => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
  }, 60_000);
  afterAll(() => fx?.close());

  async function loginAndOrder(quirks: SloppyQuirk[]) {
    const server = await startScriptedModel({ sloppy: { quirks } });
    try {
      server.on(match.any(match.schemaName("act"), match.system("You operate a web page")), (request) => {
        const instruction = /Instruction: (.*)/.exec(request.lastUserText)?.[1] ?? "";
        const rule = RULES.find((r) => r.when.test(instruction));
        if (!rule) return step({ elementId: -1, method: "click", description: "nothing fits" });
        return step({ elementId: idOf(request, rule.line), method: rule.method, arguments: rule.args ?? [] });
      });
      server.on(match.any(match.schemaProperty("goalReached"), match.system("goalReached")), (r) => ({
        goalReached: r.text.includes("Order confirmed: number A-1042"),
        evidence: "the page shows the confirmation",
      }));
      let next = 0;
      server.on(isAgentTurn, () => {
        const turn = TURNS[next++];
        if (!turn) return ScriptedReply.httpError(400, `the agent script has no turn ${next}`);
        return ScriptedReply.toolCalls(...turn);
      });
      const page = await open(fx, "agent/login.html");
      const agent = fx.dh.agent({ model: { modelName: "ollama/qwen2.5:7b", baseURL: server.baseURL } });
      const result = (await agent.execute({
        instruction: "Log in, find green tea, buy it and tell me the order number",
        variables: { user: "alice", password: "correct-horse-42" },
        output: z.object({ orderNumber: z.string() }),
      })) as AgentResult<{ orderNumber: string }>;
      const cart = page.frames().find((f) => f.url.includes("cart.html"));
      const confirmation = await cart?.evaluate(() => document.getElementById("confirmation")?.textContent);
      return { result, confirmation, server, agentTurns: server.requests.filter(isAgentTurn) };
    } finally {
      await server.close();
    }
  }

  it("a server that rejects tools: the tools go into the prompt, the calls are read from <tool_call> text", async () => {
    const { result, confirmation, agentTurns } = await loginAndOrder(["rejectTools"]);
    expect(result.success).toBe(true);
    expect(result.output).toEqual({ orderNumber: "A-1042" });
    expect(confirmation).toBe("Order confirmed: number A-1042");
    // The first turn offered tools natively and got the 400; every later one described them.
    expect(agentTurns[0]!.tools.length).toBeGreaterThan(0);
    expect(agentTurns.slice(1).every((r) => r.tools.length === 0 && r.system.includes("<tool_call>"))).toBe(
      true,
    );
    expect(agentTurns).toHaveLength(TURNS.length + 1);
  }, 120_000);

  it("a model that writes its tool calls into the content (<tool_call> blocks) completes the task", async () => {
    const { result, confirmation, agentTurns } = await loginAndOrder(["textToolCalls"]);
    expect(result.success).toBe(true);
    expect(confirmation).toBe("Order confirmed: number A-1042");
    expect(agentTurns.every((r) => r.tools.length > 0)).toBe(true);
  }, 120_000);

  it("a model that writes its tool calls as a bare JSON object naming the function completes the task", async () => {
    const { result, confirmation } = await loginAndOrder(["bareToolCalls"]);
    expect(result.success).toBe(true);
    expect(confirmation).toBe("Order confirmed: number A-1042");
  }, 120_000);

  it('a server that rejects tool_choice "required" completes the task', async () => {
    const { result, confirmation, agentTurns } = await loginAndOrder(["rejectRequiredToolChoice"]);
    expect(result.success).toBe(true);
    expect(confirmation).toBe("Order confirmed: number A-1042");
    expect(agentTurns.every((r) => r.body.tool_choice !== "required")).toBe(true);
  }, 120_000);
});
