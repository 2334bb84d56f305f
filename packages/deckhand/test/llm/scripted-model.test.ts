// The scripted model server of @deckhand/testkit, exercised through the real AI SDK providers
// (its behaviour is what every model test in the repository relies on).

import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { match, type ScriptedModel, ScriptedReply, startScriptedModel } from "@deckhand/testkit";
import { generateText, jsonSchema, Output, streamText, tool } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let server: ScriptedModel;

beforeAll(async () => {
  server = await startScriptedModel();
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  server.clear();
  server.resetRequests();
});

const openai = () => createOpenAI({ apiKey: "sk-scripted", baseURL: server.baseURL });

describe("scripted model server", () => {
  it("has a /v1 baseURL on 127.0.0.1 and lists a model", async () => {
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await fetch(`${server.baseURL}/models`);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it("answers chat completions, streamed and not", async () => {
    server.on("hello", "Hi! How can I help you today?");
    const model = openai().chat("gpt-4.1-mini");
    const plain = await generateText({ model, prompt: "hello" });
    const streamed = streamText({ model, prompt: "hello" });
    expect(plain.text).toBe("Hi! How can I help you today?");
    expect(await streamed.text).toBe("Hi! How can I help you today?");
    expect((await streamed.usage).inputTokens).toBe(100);
    expect(server.requests.map((r) => r.stream)).toEqual([false, true]);
  });

  it("answers the Responses API, streamed and not", async () => {
    server.on("hello", "Hi! How can I help you today?");
    const model = openai().responses("gpt-4.1-mini");
    expect((await generateText({ model, prompt: "hello" })).text).toBe("Hi! How can I help you today?");
    const streamed = streamText({ model, prompt: "hello" });
    expect(await streamed.text).toBe("Hi! How can I help you today?");
    expect((await streamed.usage).outputTokens).toBe(20);
  });

  it("records the request: model, messages as text, schema, headers and key", async () => {
    server.on(match.always(), { ok: true });
    await generateText({
      model: createOpenAI({
        apiKey: "sk-recorded",
        baseURL: server.baseURL,
        headers: { "x-extra": "1" },
      }).chat("gpt-4.1"),
      instructions: "Be exact.",
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "reply" },
        { role: "user", content: "second" },
      ],
      output: Output.object({
        schema: jsonSchema({
          type: "object",
          properties: { ok: { type: "boolean" } },
          required: ["ok"],
          additionalProperties: false,
        }),
        name: "check",
      }),
    });
    const request = server.lastRequest;
    expect(request?.model).toBe("gpt-4.1");
    expect(request?.messages.map((m) => [m.role, m.text])).toEqual([
      ["system", "Be exact."],
      ["user", "first"],
      ["assistant", "reply"],
      ["user", "second"],
    ]);
    expect(request?.lastUserText).toBe("second");
    expect(request?.schemaName).toBe("check");
    expect(request?.schema).toMatchObject({ properties: { ok: { type: "boolean" } } });
    expect(request?.authorization).toBe("Bearer sk-recorded");
    expect(request?.apiKey).toBe("sk-recorded");
    expect(request?.headers["x-extra"]).toBe("1");
  });

  it("tries rules newest first, and once-rules answer a single request", async () => {
    server.on("question", "old rule");
    server.on("question", "new rule");
    const onceRule = server.once("question", "once");
    const model = openai().chat("m");
    const answers = [];
    for (let i = 0; i < 2; i++) answers.push((await generateText({ model, prompt: "a question" })).text);
    expect(answers).toEqual(["once", "new rule"]);
    expect(onceRule.calls).toBe(1);
    expect(server.callCount).toBe(2);
  });

  it("fails loudly with the last user message when no rule matches", async () => {
    const error = await generateText({
      model: openai().chat("m"),
      prompt: "an unscripted question",
      maxRetries: 0,
    }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toContain('Last user message: "an unscripted question"');
  });

  it("fails the next requests on demand, quickly enough for the SDK's retries", async () => {
    server.on(match.always(), "finally");
    server.failNext(2, 429);
    const started = Date.now();
    const result = await generateText({ model: openai().chat("m"), prompt: "x" });
    expect(result.text).toBe("finally");
    expect(server.callCount).toBe(3);
    // The SDK's own backoff (2 s, then 4 s) would take 6 s: the failures told it to retry at once.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("answers a forced tool with a tool call, and scripts tool calls explicitly", async () => {
    server.once(match.always(), ScriptedReply.toolCalls({ name: "click", arguments: { id: 7 } }));
    const result = await generateText({
      model: openai().chat("m"),
      prompt: "press the button",
      tools: {
        click: tool({
          inputSchema: jsonSchema<{ id: number }>({ type: "object", properties: { id: { type: "number" } } }),
        }),
      },
    });
    expect(result.toolCalls[0]).toMatchObject({ toolName: "click", input: { id: 7 } });
    expect(server.lastRequest?.tools.map((t) => t.name)).toEqual(["click"]);
  });

  it("serves OpenAI-compatible providers", async () => {
    server.on(match.model("llama3.1"), "from llama");
    const compatible = createOpenAICompatible({
      name: "ollama",
      baseURL: server.baseURL,
      includeUsage: true,
    });
    const result = await generateText({ model: compatible.chatModel("llama3.1"), prompt: "x" });
    expect(result.text).toBe("from llama");
    expect(result.usage.inputTokens).toBe(100);
    expect(server.lastRequest?.authorization).toBeUndefined();
  });

  it("can send a raw body the client cannot parse", async () => {
    server.on(match.always(), ScriptedReply.raw('{"choices": [ {"message": '));
    await expect(generateText({ model: openai().chat("m"), prompt: "x", maxRetries: 0 })).rejects.toThrow();
  });

  it("clear() removes every rule", async () => {
    server.on(match.always(), "x");
    server.clear();
    await expect(generateText({ model: openai().chat("m"), prompt: "x", maxRetries: 0 })).rejects.toThrow(
      /No scripted answer/,
    );
  });
});
