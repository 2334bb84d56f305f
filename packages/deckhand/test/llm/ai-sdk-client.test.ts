import { match, type ScriptedModel, startScriptedModel } from "@deckhand/testkit";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LLMResponseError, UnsupportedModelError } from "../../src/errors.ts";
import { AISdkClient, LLMUnusableAnswerError, toModelMessages } from "../../src/llm/ai-sdk-client.ts";
import { loadedProviderPackages } from "../../src/llm/resolve-model.ts";
import { toResponseSchema } from "../../src/llm/schema.ts";
import { dig, OPTION_KEY, ollamaModel, openaiModel, TINY_PNG } from "./helpers.ts";

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

const wire = (schema: Parameters<typeof toResponseSchema>[0]) => toResponseSchema(schema).wireSchema;

describe("AISdkClient", () => {
  it("loads a provider package only when a model of that provider is first used", async () => {
    const anthropic = new AISdkClient({ modelName: "anthropic/claude-sonnet-4-5", apiKey: "sk-ant" });
    expect(anthropic.modelName).toBe("anthropic/claude-sonnet-4-5");
    expect(loadedProviderPackages().has("@ai-sdk/anthropic")).toBe(false);

    server.on(match.always(), "ok");
    const openai = new AISdkClient(openaiModel(server));
    expect(loadedProviderPackages().has("@ai-sdk/openai")).toBe(false);
    await openai.generate({ operation: "act", messages: [{ role: "user", content: "hi" }] });
    expect(loadedProviderPackages().has("@ai-sdk/openai")).toBe(true);
    expect(loadedProviderPackages().has("@ai-sdk/anthropic")).toBe(false);
    expect(loadedProviderPackages().has("@ai-sdk/google")).toBe(false);
  });

  it("reports prompt, completion, reasoning and cached input tokens as the provider counted them", async () => {
    server.on(match.always(), "ok", {
      usage: { promptTokens: 900, completionTokens: 70, cachedPromptTokens: 512, reasoningTokens: 40 },
    });
    for (const client of [
      new AISdkClient(openaiModel(server)),
      new AISdkClient(openaiModel(server, { api: "responses" })),
      new AISdkClient(ollamaModel(server)),
    ]) {
      const response = await client.generate({
        operation: "act",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(response.usage).toEqual({
        promptTokens: 900,
        completionTokens: 70,
        reasoningTokens: 40,
        cachedInputTokens: 512,
      });
    }
    expect(server.requests.map((r) => r.api)).toEqual(["chat", "responses", "chat"]);
  });

  it("sends system text, user text and images the way each API expects", async () => {
    server.on(match.always(), "a teapot");
    const client = new AISdkClient(openaiModel(server));
    await client.generate({
      operation: "extract",
      messages: [
        { role: "system", content: "Describe pictures." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image", image: TINY_PNG, mediaType: "image/png" },
          ],
        },
      ],
    });
    const request = server.requests[0];
    expect(request?.system).toBe("Describe pictures.");
    expect(request?.lastUserText).toBe("What is this?");
    expect(request?.imageCount).toBe(1);
    const body = JSON.stringify(request?.body);
    expect(body).toContain(`data:image/png;base64,${Buffer.from(TINY_PNG).toString("base64")}`);
  });

  it("asks for strict structured output only when the schema allows it", async () => {
    server.on(match.always(), { a: "x" });
    const client = new AISdkClient(openaiModel(server));
    await client.generate({
      operation: "extract",
      messages: [{ role: "user", content: "x" }],
      schema: wire(z.object({ a: z.string() })),
    });
    await client.generate({
      operation: "extract",
      messages: [{ role: "user", content: "x" }],
      schema: wire(z.object({ a: z.string().optional() })),
    });
    const strictOf = (i: number) => dig(server.requests[i]?.body, "response_format", "json_schema").strict;
    expect(strictOf(0)).toBe(true);
    expect(strictOf(1)).toBe(false);
  });

  it("puts the schema in the prompt and asks for JSON mode where the endpoint has no schema support", async () => {
    server.on(match.always(), { a: "x" });
    const client = new AISdkClient({
      modelName: "deepseek/deepseek-chat",
      apiKey: "sk-ds",
      baseURL: server.baseURL,
    });
    const response = await client.generate({
      operation: "extract",
      messages: [
        { role: "system", content: "Extract." },
        { role: "user", content: "x" },
      ],
      schema: wire(z.object({ a: z.string() })),
    });
    expect(response.data).toEqual({ a: "x" });
    expect(server.requests[0]?.responseFormat).toBe("json_object");
    expect(server.requests[0]?.system).toContain('"properties":{"a":{"type":"string"}}');
  });

  it("passes the schema name the Responses API accepts", async () => {
    server.on(match.always(), { a: "x" });
    const client = new AISdkClient(openaiModel(server, { api: "responses" }));
    await client.generate({
      operation: "extract",
      messages: [{ role: "user", content: "x" }],
      schema: wire(z.object({ a: z.string() })),
      schemaName: "product list!",
    });
    expect(server.requests[0]?.schemaName).toBe("product_list_");
  });

  it("throws LLMUnusableAnswerError (an LLMResponseError) with the text and usage for an answer that is not JSON", async () => {
    server.on(match.always(), "{ not json", { usage: { promptTokens: 9, completionTokens: 3 } });
    const client = new AISdkClient(openaiModel(server));
    const error = await client
      .generate({
        operation: "extract",
        messages: [{ role: "user", content: "x" }],
        schema: wire(z.object({ a: z.string() })),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMUnusableAnswerError);
    expect(error).toBeInstanceOf(LLMResponseError);
    expect((error as LLMUnusableAnswerError).answerText).toBe("{ not json");
    expect((error as LLMUnusableAnswerError).usage.promptTokens).toBe(9);
  });

  it("refuses an image for a text-only model before any request", async () => {
    const client = new AISdkClient(ollamaModel(server, "deepseek-r1"));
    const call = client.generate({
      operation: "extract",
      messages: [{ role: "user", content: [{ type: "image", image: TINY_PNG }] }],
    });
    await expect(call).rejects.toBeInstanceOf(UnsupportedModelError);
    await expect(call).rejects.toThrow(/DeepSeek models take text only/);
    expect(server.callCount).toBe(0);
  });

  it("reports an unreachable server as an LLMResponseError naming the address", async () => {
    const client = new AISdkClient(
      { modelName: "ollama/llama3.1", baseURL: "http://127.0.0.1:9/v1" },
      { maxRetries: 0 },
    );
    await expect(
      client.generate({ operation: "act", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toThrow(/could not reach ollama at http:\/\/127\.0\.0\.1:9\/v1/);
  });

  it("sends the headers of the model object", async () => {
    server.on(match.always(), "ok");
    const client = new AISdkClient(openaiModel(server, { headers: { "x-team": "deckhand" } }));
    await client.generate({ operation: "act", messages: [{ role: "user", content: "x" }] });
    expect(server.requests[0]?.headers["x-team"]).toBe("deckhand");
    expect(server.requests[0]?.authorization).toBe(`Bearer ${OPTION_KEY}`);
  });
});

describe("toModelMessages (unit, with the AI SDK's mock model)", () => {
  it("moves system text into instructions and keeps the rest in order", async () => {
    const { instructions, messages } = toModelMessages([
      { role: "system", content: "A" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
      { role: "system", content: "B" },
      {
        role: "user",
        content: [{ type: "image", image: "data:image/jpeg;base64,/9j/", mediaType: undefined }],
      },
    ]);
    expect(instructions).toBe("A\n\nB");
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[2]).toMatchObject({ content: [{ type: "file", data: "/9j/", mediaType: "image/jpeg" }] });

    const { generateText } = await import("ai");
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    const result = await generateText({ model, instructions, messages });
    expect(result.text).toBe("ok");
    expect(model.doGenerateCalls[0]?.prompt.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
  });
});
