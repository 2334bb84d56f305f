// Tool calling on servers that do it unevenly, under the AI SDK's generateText with tools: calls
// written as text, a 400 for tools, a 400 for tool_choice "required". The server is the sloppy
// model server behind the real OpenAI-compatible provider.

import { ScriptedReply, type SloppyQuirk, startScriptedModel } from "@deckhand/testkit";
import { generateText, jsonSchema, tool } from "ai";
import { describe, expect, it } from "vitest";
import { loadLanguageModel, resolveModel } from "../../src/llm/resolve-model.ts";
import { toolCallsInText } from "../../src/llm/text-tool-calls.ts";

describe("toolCallsInText", () => {
  const names = new Set(["click", "done"]);

  it("reads <tool_call> blocks and a bare object naming a tool", () => {
    expect(
      toolCallsInText('<tool_call>\n{"name": "click", "arguments": {"id": 3}}\n</tool_call>', names),
    ).toEqual([{ name: "click", input: '{"id":3}' }]);
    expect(
      toolCallsInText('Calling it now: {"name": "done", "arguments": "{\\"ok\\": true}"}', names),
    ).toEqual([{ name: "done", input: '{"ok":true}' }]);
  });

  it("is no call for a name that is no tool of the request, or text with no call", () => {
    expect(toolCallsInText('{"name": "deleteEverything", "arguments": {}}', names)).toEqual([]);
    expect(toolCallsInText("I will click the button.", names)).toEqual([]);
  });
});

async function askWithTool(quirks: SloppyQuirk[], toolChoice: "auto" | "required") {
  const server = await startScriptedModel({ sloppy: { quirks } });
  try {
    server.on(
      () => true,
      () => ScriptedReply.toolCalls({ name: "click", arguments: { id: 3 } }),
    );
    const changes: string[] = [];
    const model = await loadLanguageModel(
      resolveModel({ modelName: "ollama/qwen2.5:7b", baseURL: server.baseURL }, {}),
      (m) => changes.push(m),
    );
    const result = await generateText({
      model,
      prompt: "click element 3",
      tools: {
        click: tool({
          description: "Click an element",
          inputSchema: jsonSchema<{ id: number }>({ type: "object", properties: { id: { type: "number" } } }),
        }),
      },
      toolChoice,
      maxRetries: 0,
    });
    return {
      calls: result.toolCalls.map((c) => ({ name: c.toolName, input: c.input })),
      requests: server.requests,
      changes,
    };
  } finally {
    await server.close();
  }
}

describe("the tool-calling middleware over HTTP", () => {
  it('a 400 for tool_choice "required": asked again with "auto", and the call is made', async () => {
    const { calls, requests, changes } = await askWithTool(["rejectRequiredToolChoice"], "required");
    expect(calls).toEqual([{ name: "click", input: { id: 3 } }]);
    expect(requests.map((r) => r.body.tool_choice)).toEqual(["required", "auto"]);
    expect(changes.join(" ")).toMatch(/tool_choice "required"/);
  });

  it("a 400 for tools: the tool is described in the prompt and the call read from the text", async () => {
    const { calls, requests } = await askWithTool(["rejectTools"], "auto");
    expect(calls).toEqual([{ name: "click", input: { id: 3 } }]);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.tools).toEqual([]);
    expect(requests[1]!.system).toContain("click: Click an element");
  });

  it("a call written in the content is a tool call", async () => {
    const { calls, requests } = await askWithTool(["textToolCalls"], "auto");
    expect(calls).toEqual([{ name: "click", input: { id: 3 } }]);
    expect(requests).toHaveLength(1);
  });
});
