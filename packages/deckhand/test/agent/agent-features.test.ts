// The agent's other ways of running (LOCAL): stream: true (the AI SDK stream plus a result),
// hybrid mode (coordinate tools answering with a screenshot, no fillForm), extra AI SDK tools,
// MCP clients as integrations, and continuing a run with its messages.

import { tool } from "ai";
import type { AgentStreamResult } from "deckhand";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type OpsFixture, open, opsFixture, textOf } from "../ops/helpers.ts";
import { agentRequests, call, scriptAgent, verifyWith } from "./helpers.ts";
import { startMcpServer } from "./mcp-server.ts";

describe("agent features (LOCAL)", () => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
  }, 60_000);
  afterAll(() => fx?.close());
  beforeEach(() => {
    fx.model.clear();
    fx.model.resetRequests();
  });

  it("stream: true gives the AI SDK stream and a result promise", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [[call("ariaTree")], [call("done", { reasoning: "read it", taskComplete: true })]]);
    const chunks: string[] = [];
    const streamed: AgentStreamResult = await fx.dh.agent({ stream: true }).execute({
      instruction: "Read the page",
      callbacks: { onChunk: (chunk) => void chunks.push((chunk as { type: string }).type) },
    });
    const parts: string[] = [];
    for await (const part of streamed.fullStream) parts.push(part.type);
    const result = await streamed.result;
    expect(result).toMatchObject({ success: true, completed: true, message: "read it" });
    expect(parts).toContain("tool-call");
    expect(parts).toContain("tool-result");
    expect(chunks).toContain("tool-call");
    expect(fx.model.requests.filter((r) => r.stream).length).toBeGreaterThanOrEqual(2);
  });

  it("hybrid mode: coordinate tools act with real input and answer with a screenshot; no fillForm", async () => {
    const page = await open(fx, "agent/login.html");
    const box = await page.evaluate(() => {
      const r = document.getElementById("user")!.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    });
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("type", { x: box.x, y: box.y, text: "%user%" })],
      (request) => {
        // The screenshot came back to the model as an image.
        expect(request.imageCount).toBeGreaterThanOrEqual(1);
        return [call("done", { reasoning: "typed the user name", taskComplete: true })];
      },
    ]);
    const result = await fx.dh.agent({ mode: "hybrid" }).execute({
      instruction: "Type the user name",
      variables: { user: "dora-the-user" },
    });
    expect(result.success).toBe(true);
    expect(await page.evaluate(() => (document.getElementById("user") as HTMLInputElement).value)).toBe(
      "dora-the-user",
    );
    const [first] = agentRequests(fx.model);
    const names = first!.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["click", "type", "dragAndDrop", "clickAndHold", "scrollAt", "act"]),
    );
    expect(names).not.toContain("fillForm");
    expect(JSON.stringify(result)).not.toContain("dora-the-user");
    expect(result.actions[0]).toMatchObject({ type: "type", arguments: { text: "%user%" }, success: true });
  });

  it("keeps only the two newest screenshots in full", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("screenshot")],
      [call("screenshot")],
      [call("screenshot")],
      [call("done", { reasoning: "looked", taskComplete: true })],
    ]);
    await fx.dh.agent().execute("Look three times");
    const last = agentRequests(fx.model).at(-1)!;
    expect(last.imageCount).toBe(2);
    expect(last.text).toContain("[an older screenshot, left out]");
  });

  it("extra tools and MCP clients are offered to the model and called", async () => {
    await open(fx, "agent/login.html");
    const seen: unknown[] = [];
    const mcpClient = {
      listTools: async () => ({
        tools: [
          {
            name: "lookupOrder",
            description: "Find an order by number",
            inputSchema: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
          },
        ],
      }),
      callTool: async (request: { name: string; arguments?: Record<string, unknown> }) => {
        seen.push(request);
        return { content: [{ type: "text", text: "order A-1 is shipped" }] };
      },
    };
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("weather", { city: "Oslo" })],
      [call("lookupOrder", { number: "A-1" })],
      (request) => {
        expect(request.text).toContain("order A-1 is shipped");
        expect(request.text).toContain("rainy in Oslo");
        return [call("done", { reasoning: "shipped", taskComplete: true })];
      },
    ]);
    const result = await fx.dh
      .agent({
        tools: {
          weather: tool({
            description: "Weather in a city",
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => `rainy in ${city}`,
          }),
        },
        integrations: [mcpClient],
      })
      .execute("Is order A-1 shipped?");
    expect(result.success).toBe(true);
    expect(seen).toEqual([{ name: "lookupOrder", arguments: { number: "A-1" } }]);
    const names = agentRequests(fx.model)[0]!.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["weather", "lookupOrder", "act", "done"]));
    await expect(fx.dh.agent({ integrations: ["not a url"] }).execute("x")).rejects.toThrow(/not a URL/);
  });

  it("an MCP server URL: connected with the official SDK and its tool called; an unreachable one is a clear error", async () => {
    await open(fx, "agent/login.html");
    const mcp = await startMcpServer();
    try {
      verifyWith(fx.model, () => true);
      scriptAgent(fx.model, [
        [call("stockOf", { product: "green tea" })],
        (request) => {
          expect(request.text).toContain("green tea: 12 in stock");
          return [call("done", { reasoning: "12 in stock", taskComplete: true })];
        },
      ]);
      const result = await fx.dh
        .agent({ integrations: [mcp.url] })
        .execute("How much green tea is in stock?");
      expect(result).toMatchObject({ success: true, message: "12 in stock" });
      expect(mcp.calls).toEqual([{ product: "green tea" }]);
      expect(agentRequests(fx.model)[0]!.tools.map((t) => t.name)).toContain("stockOf");
      await expect(fx.dh.agent({ integrations: ["http://127.0.0.1:1/mcp"] }).execute("x")).rejects.toThrow(
        /could not connect to the MCP server/,
      );
    } finally {
      await mcp.close();
    }
  });

  it("continues an earlier run with its messages", async () => {
    await open(fx, "agent/login.html");
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("think", { reasoning: "first run thought" })],
      [call("done", { reasoning: "first done", taskComplete: true })],
    ]);
    const first = await fx.dh.agent().execute("First task");
    expect(first.messages!.length).toBeGreaterThan(2);
    fx.model.clear();
    fx.model.resetRequests();
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [[call("done", { reasoning: "second done", taskComplete: true })]]);
    const second = await fx.dh.agent().execute({ instruction: "Second task", messages: first.messages });
    expect(second.success).toBe(true);
    const [request] = agentRequests(fx.model);
    expect(request!.text).toContain("First task");
    expect(request!.text).toContain("first run thought");
    expect(request!.lastUserText).toBe("Second task");
    expect(await textOf(fx.dh.page, "h1")).toBe("Sign in");
  });
});
