import { match, type ScriptedModel, ScriptedReply, startScriptedModel } from "@deckhand/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import * as z3 from "zod/v3";
import {
  InvalidAISDKModelFormatError,
  LLMResponseError,
  MissingLLMConfigurationError,
  ServiceCancelledError,
  UnsupportedModelError,
  ZodSchemaValidationError,
} from "../../src/errors.ts";
import { ModelCaller, type ModelCallerOptions } from "../../src/llm/caller.ts";
import type { LLMClient, LLMMessage, LLMRequest, LLMResponse } from "../../src/llm/client.ts";
import { toResponseSchema } from "../../src/llm/schema.ts";
import { withUrlFieldsAsIds } from "../../src/llm/url-fields.ts";
import { MetricsRecorder } from "../../src/metrics.ts";
import { collectingLog, dig, OPTION_KEY, ollamaModel, openaiModel, TINY_PNG } from "./helpers.ts";

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

function prompt(text: string, system = "You extract data from web pages."): LLMMessage[] {
  return [
    { role: "system", content: system },
    { role: "user", content: text },
  ];
}

function caller(options: Partial<ModelCallerOptions> = {}) {
  const { log, lines } = collectingLog(options.log?.verbose ?? 1);
  const metrics = new MetricsRecorder();
  const modelCaller = new ModelCaller({ model: openaiModel(server), log, metrics, env: {}, ...options });
  return { modelCaller, metrics, lines };
}

const Products = z.object({ items: z.array(z.object({ name: z.string(), price: z.number() })) });
const fourItems = (last: number | string) => ({
  items: [
    { name: "Tea", price: 3 },
    { name: "Coffee", price: 4 },
    { name: "Cocoa", price: 5 },
    { name: "Mate", price: last },
  ],
});

describe("ModelCaller over HTTP with the OpenAI provider", () => {
  it("returns a text answer when no schema is given", async () => {
    server.on("say hello", "Hello there.");
    const { modelCaller } = caller();
    const result = await modelCaller.call({ operation: "act", messages: prompt("Please say hello") });
    expect(result.data).toBe("Hello there.");
    expect(result.modelName).toBe("openai/gpt-4.1-mini");
    expect(server.requests[0]?.api).toBe("chat");
    expect(server.requests[0]?.model).toBe("gpt-4.1-mini");
  });

  it("returns a typed answer for a zod 4 schema and names the schema after the operation", async () => {
    server.on("list the products", fourItems(6));
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("list the products"),
      schema: Products,
    });
    expect(result.data.items[3]?.price).toBe(6);
    expect(result.attempts).toBe(1);
    const request = server.requests[0];
    expect(request?.responseFormat).toBe("json_schema");
    expect(request?.schemaName).toBe("extract");
    expect(request?.schema).toMatchObject({ type: "object", properties: { items: { type: "array" } } });
  });

  it("returns a typed answer for a zod 3 schema", async () => {
    const { z: v3 } = z3;
    server.on("the title", { title: "Dune", year: 1965 });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the title"),
      schema: v3.object({ title: v3.string(), year: v3.number() }),
    });
    expect(result.data).toEqual({ title: "Dune", year: 1965 });
  });

  it("returns an answer for a JSON Schema", async () => {
    server.on("the author", { author: "Frank Herbert" });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the author"),
      schema: { type: "object", properties: { author: { type: "string" } }, required: ["author"] },
    });
    expect(result.data).toEqual({ author: "Frank Herbert" });
  });

  it("sends an array schema wrapped in { value } and returns the bare array", async () => {
    server.on("all names", (request) => {
      expect(request.schema).toMatchObject({ properties: { value: { type: "array" } }, required: ["value"] });
      return { value: ["Tea", "Coffee"] };
    });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("all names"),
      schema: z.array(z.string()),
    });
    expect(result.data).toEqual(["Tea", "Coffee"]);
  });

  it("sends a string schema wrapped in { value } and returns the string", async () => {
    server.on("the heading", { value: "Welcome" });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the heading"),
      schema: z.string(),
    });
    expect(result.data).toBe("Welcome");
  });

  it("records usage per operation, summed into the metrics totals", async () => {
    server.on("act now", "done", {
      usage: { promptTokens: 120, completionTokens: 30, cachedPromptTokens: 64, reasoningTokens: 12 },
    });
    server.on("observe now", "seen", {
      usage: { promptTokens: 80, completionTokens: 10, cachedPromptTokens: 0, reasoningTokens: 0 },
    });
    const { modelCaller, metrics } = caller();
    const first = await modelCaller.call({ operation: "act", messages: prompt("act now") });
    await modelCaller.call({ operation: "act", messages: prompt("act now") });
    await modelCaller.call({ operation: "observe", messages: prompt("observe now") });
    expect(first.usage).toEqual({
      promptTokens: 120,
      completionTokens: 30,
      reasoningTokens: 12,
      cachedInputTokens: 64,
    });
    const m = metrics.snapshot();
    expect(m.actPromptTokens).toBe(240);
    expect(m.actCompletionTokens).toBe(60);
    expect(m.actReasoningTokens).toBe(24);
    expect(m.actCachedInputTokens).toBe(128);
    expect(m.observePromptTokens).toBe(80);
    expect(m.totalPromptTokens).toBe(320);
    expect(m.totalCompletionTokens).toBe(70);
    expect(m.totalInferenceTimeMs).toBe(m.actInferenceTimeMs + m.observeInferenceTimeMs);
  });

  it("measures inference time", async () => {
    server.on("slowly", "ok", { latencyMs: 120 });
    const { modelCaller, metrics } = caller();
    const result = await modelCaller.call({ operation: "extract", messages: prompt("slowly") });
    expect(result.inferenceTimeMs).toBeGreaterThanOrEqual(100);
    expect(metrics.snapshot().extractInferenceTimeMs).toBe(result.inferenceTimeMs);
  });

  it("asks once more with the validation error when the answer does not fit, and returns the fixed answer", async () => {
    server.once("list the products", fourItems("cheap"));
    server.on("does not match the required schema", fourItems(6));
    const { modelCaller, metrics } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("list the products"),
      schema: Products,
    });
    expect(result.data.items[3]?.price).toBe(6);
    expect(result.attempts).toBe(2);
    expect(server.callCount).toBe(2);
    const retry = server.requests[1];
    expect(retry?.lastUserText).toContain("items[3].price");
    expect(retry?.messages.some((m) => m.role === "assistant" && m.text.includes('"cheap"'))).toBe(true);
    expect(result.usage.promptTokens).toBe(200);
    expect(metrics.snapshot().extractPromptTokens).toBe(200);
  });

  it("throws ZodSchemaValidationError with the path of the first mismatch after the second bad answer", async () => {
    server.on("list the products", fourItems("cheap"));
    const { modelCaller, metrics } = caller();
    const call = modelCaller.call({
      operation: "extract",
      messages: prompt("list the products"),
      schema: Products,
    });
    await expect(call).rejects.toBeInstanceOf(ZodSchemaValidationError);
    await expect(call).rejects.toMatchObject({ path: "items[3].price" });
    expect(server.callCount).toBe(2);
    expect(metrics.snapshot().extractPromptTokens).toBe(200);
  });

  it("throws LLMResponseError when the answer is not JSON, after asking twice", async () => {
    server.on("list the products", "Sure! Here are the products: tea and coffee.");
    const { modelCaller } = caller();
    const call = modelCaller.call({
      operation: "extract",
      messages: prompt("list the products"),
      schema: Products,
    });
    await expect(call).rejects.toBeInstanceOf(LLMResponseError);
    await expect(call).rejects.toThrow(/not valid JSON/);
    expect(server.callCount).toBe(2);
    expect(server.requests[1]?.lastUserText).toContain("could not be used");
  });

  it("throws LLMResponseError for an empty answer", async () => {
    server.on("anything", "");
    const { modelCaller } = caller();
    await expect(modelCaller.call({ operation: "act", messages: prompt("anything") })).rejects.toThrow(
      /empty answer/,
    );
  });

  it("recovers when the second answer is valid JSON after broken JSON", async () => {
    server.once("the author", '{"author": "Frank');
    server.on("could not be used", { author: "Frank Herbert" });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the author"),
      schema: z.object({ author: z.string() }),
    });
    expect(result.data.author).toBe("Frank Herbert");
  });

  it("retries transport failures and then succeeds", async () => {
    server.on("act now", "done");
    server.failNext(2, 503);
    const { modelCaller, metrics } = caller();
    const result = await modelCaller.call({ operation: "act", messages: prompt("act now") });
    expect(result.data).toBe("done");
    expect(server.callCount).toBe(3);
    expect(metrics.snapshot().actPromptTokens).toBe(100);
  });

  it("gives up after the bounded retries with LLMResponseError carrying the provider's message", async () => {
    server.on("act now", "done");
    server.failNext(3, 500, { message: "The engine is overheated" });
    const { modelCaller } = caller();
    const call = modelCaller.call({ operation: "act", messages: prompt("act now") });
    await expect(call).rejects.toBeInstanceOf(LLMResponseError);
    await expect(call).rejects.toThrow(/HTTP 500.*after 3 attempts.*The engine is overheated/);
    expect(server.callCount).toBe(3);
  });

  it("never puts the API key in the error, even when the provider echoes it", async () => {
    server.on("act now", ScriptedReply.httpError(401, `Incorrect API key provided: ${OPTION_KEY}.`));
    const { modelCaller } = caller();
    const error = await modelCaller
      .call({ operation: "act", messages: prompt("act now") })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LLMResponseError);
    expect((error as Error).message).toContain("HTTP 401");
    expect((error as Error).message).not.toContain(OPTION_KEY);
    expect(server.callCount).toBe(1);
  });

  it("adds the user's systemPrompt to the system message of every call", async () => {
    server.on(match.always(), "ok");
    const { modelCaller } = caller({ systemPrompt: "Always answer in French." });
    await modelCaller.call({
      operation: "observe",
      messages: prompt("find the search box", "You find elements."),
    });
    await modelCaller.call({ operation: "act", messages: [{ role: "user", content: "click it" }] });
    expect(server.requests[0]?.system).toContain("You find elements.");
    expect(server.requests[0]?.system).toContain("Always answer in French.");
    expect(server.requests[1]?.system).toContain("Always answer in French.");
  });

  it("can use the Responses API when the model object asks for it", async () => {
    server.on("the author", { author: "Ursula K. Le Guin" });
    const { modelCaller } = caller({ model: openaiModel(server, { api: "responses" }) });
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the author"),
      schema: z.object({ author: z.string() }),
    });
    expect(result.data.author).toBe("Ursula K. Le Guin");
    expect(server.requests[0]?.api).toBe("responses");
    expect(server.requests[0]?.schemaName).toBe("extract");
  });

  it("uses a per-call model over the configured one", async () => {
    server.on(match.always(), "ok");
    const { modelCaller } = caller();
    await modelCaller.call({
      operation: "act",
      messages: prompt("x"),
      model: openaiModel(server, { modelName: "openai/gpt-4.1" }),
    });
    expect(server.requests[0]?.model).toBe("gpt-4.1");
  });

  it("cancels when the signal is aborted during the call", async () => {
    server.on("slowly", "ok", { latencyMs: 2_000 });
    const { modelCaller } = caller();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const call = modelCaller.call({
      operation: "act",
      messages: prompt("slowly"),
      signal: controller.signal,
    });
    await expect(call).rejects.toBeInstanceOf(ServiceCancelledError);
  });

  it("returns the page's real URLs for URL fields the model answered with element ids", async () => {
    const links: Record<number, string> = {
      12: "https://shop.example/tea",
      15: "https://shop.example/coffee",
    };
    server.on("list the links", (request) => {
      const item = dig(request.schema, "properties", "items", "items", "properties");
      expect(dig(item, "url").type).toBe("number");
      return {
        items: [
          { name: "Tea", url: 12 },
          { name: "Coffee", url: 15 },
        ],
      };
    });
    const { modelCaller } = caller();
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.object({ items: z.array(z.object({ name: z.string(), url: z.string().url() })) })),
      (id) => links[Number(id)],
    );
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("list the links"),
      schema,
    });
    expect(result.data.items.map((i) => i.url)).toEqual([links[12], links[15]]);
  });
});

describe("ModelCaller with an OpenAI-compatible provider", () => {
  it("answers through ollama/<model> at a custom baseURL without a key", async () => {
    server.on("list the products", fourItems(6), { usage: { promptTokens: 11, completionTokens: 7 } });
    const { modelCaller, metrics } = caller({ model: ollamaModel(server, "llama3.1") });
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("list the products"),
      schema: Products,
    });
    expect(result.data.items).toHaveLength(4);
    expect(result.modelName).toBe("ollama/llama3.1");
    const request = server.requests[0];
    expect(request?.model).toBe("llama3.1");
    expect(request?.authorization).toBeUndefined();
    expect(request?.schema).toMatchObject({ type: "object" });
    expect(metrics.snapshot().extractPromptTokens).toBe(11);
  });
});

describe("ModelCaller configuration errors (no HTTP call is made)", () => {
  it("throws InvalidAISDKModelFormatError for a model string without a provider of no known family", async () => {
    const { modelCaller } = caller({ model: "mystery-model-7" });
    await expect(modelCaller.call({ operation: "act", messages: prompt("x") })).rejects.toBeInstanceOf(
      InvalidAISDKModelFormatError,
    );
    expect(server.callCount).toBe(0);
  });

  it("reads a bare legacy name (gpt-4o) as its provider's, with a deprecation warning", async () => {
    server.on("say hello", "Hello there.");
    const { modelCaller, lines } = caller({ model: openaiModel(server, { modelName: "gpt-4o" }) });
    const result = await modelCaller.call({ operation: "act", messages: prompt("Please say hello") });
    expect(result.modelName).toBe("openai/gpt-4o");
    expect(server.lastRequest?.model).toBe("gpt-4o");
    expect(lines).toContainEqual(
      expect.objectContaining({
        category: "llm",
        level: 0,
        message: expect.stringContaining('Bare model names are deprecated: write "openai/gpt-4o"'),
      }),
    );
  });

  it("throws UnsupportedModelError for an unknown provider", async () => {
    const { modelCaller } = caller({ model: "acme/brain-1" });
    await expect(modelCaller.call({ operation: "act", messages: prompt("x") })).rejects.toBeInstanceOf(
      UnsupportedModelError,
    );
  });

  it("throws UnsupportedModelError, naming the model and vision models, for an image sent to a text-only model", async () => {
    server.on(match.always(), { value: "x" });
    const { modelCaller } = caller({ model: ollamaModel(server, "llama3.1") });
    const call = modelCaller.call({
      operation: "extract",
      messages: [
        { role: "system", content: "Extract." },
        {
          role: "user",
          content: [
            { type: "text", text: "what is shown" },
            { type: "image", image: TINY_PNG },
          ],
        },
      ],
      schema: z.string(),
    });
    await expect(call).rejects.toBeInstanceOf(UnsupportedModelError);
    await expect(call).rejects.toThrow(/ollama\/llama3\.1 cannot read images.*openai\/gpt-4\.1-mini/s);
    expect(server.callCount).toBe(0);
  });

  it("sends an image to a vision model", async () => {
    server.on(match.withImage(), { value: "a teapot" });
    const { modelCaller } = caller();
    const result = await modelCaller.call({
      operation: "extract",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is shown" },
            { type: "image", image: TINY_PNG },
          ],
        },
      ],
      schema: z.string(),
    });
    expect(result.data).toBe("a teapot");
    expect(server.requests[0]?.imageCount).toBe(1);
  });

  it("throws MissingLLMConfigurationError naming the variable when there is no key and no llmClient", async () => {
    const { modelCaller } = caller({ model: "anthropic/claude-sonnet-4-5", env: {} });
    await expect(modelCaller.call({ operation: "act", messages: prompt("x") })).rejects.toBeInstanceOf(
      MissingLLMConfigurationError,
    );
    await expect(modelCaller.call({ operation: "act", messages: prompt("x") })).rejects.toThrow(
      /ANTHROPIC_API_KEY/,
    );
    const { modelCaller: unconfigured } = caller({ model: undefined, env: {} });
    await expect(unconfigured.call({ operation: "act", messages: prompt("x") })).rejects.toThrow(
      /OPENAI_API_KEY/,
    );
  });
});

describe("API keys", () => {
  const saved = process.env.OPENAI_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  });

  it("reads the key from the environment when the model object has none", async () => {
    process.env.OPENAI_API_KEY = "sk-from-env";
    server.on(match.always(), "ok");
    const { log } = collectingLog();
    const modelCaller = new ModelCaller({
      model: { modelName: "openai/gpt-4.1-mini", baseURL: server.baseURL },
      log,
    });
    await modelCaller.call({ operation: "act", messages: prompt("x") });
    expect(server.requests[0]?.authorization).toBe("Bearer sk-from-env");
  });

  it("sends the option key, not the environment key, when both are set", async () => {
    process.env.OPENAI_API_KEY = "sk-from-env";
    server.on(match.always(), "ok");
    const { log } = collectingLog();
    const modelCaller = new ModelCaller({ model: openaiModel(server), log });
    await modelCaller.call({ operation: "act", messages: prompt("x") });
    expect(server.requests[0]?.authorization).toBe(`Bearer ${OPTION_KEY}`);
    expect(server.requests[0]?.apiKey).toBe(OPTION_KEY);
  });
});

describe("ModelCaller with the user's llmClient", () => {
  class RecordingClient implements LLMClient {
    readonly modelName = "my-org/house-model";
    readonly requests: LLMRequest[] = [];
    private readonly answers: unknown[];
    constructor(answers: unknown[]) {
      this.answers = answers;
    }
    async generate<T>(request: LLMRequest): Promise<LLMResponse<T>> {
      this.requests.push(request);
      return { data: this.answers.shift() as T, usage: { promptTokens: 5, completionTokens: 2 } };
    }
  }

  it("uses the llmClient when no model is configured, with the systemPrompt and the schema", async () => {
    const client = new RecordingClient([{ title: "Dune" }]);
    const { modelCaller, metrics } = caller({
      model: undefined,
      llmClient: client,
      systemPrompt: "Be brief.",
    });
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the title"),
      schema: z.object({ title: z.string() }),
    });
    expect(result.data).toEqual({ title: "Dune" });
    expect(result.modelName).toBe("my-org/house-model");
    const request = client.requests[0];
    expect(request?.schema).toMatchObject({ type: "object", properties: { title: { type: "string" } } });
    expect(request?.schemaName).toBe("extract");
    expect(JSON.stringify(request?.messages[0])).toContain("Be brief.");
    expect(metrics.snapshot().extractPromptTokens).toBe(5);
    expect(server.callCount).toBe(0);
  });

  it("validates the llmClient's answer too, accepting JSON text, and asks once more on a mismatch", async () => {
    const client = new RecordingClient(['{"title": null}', '```json\n{"title": "Dune"}\n```']);
    const { modelCaller } = caller({ model: undefined, llmClient: client });
    const result = await modelCaller.call({
      operation: "extract",
      messages: prompt("the title"),
      schema: z.object({ title: z.string() }),
    });
    expect(result.data).toEqual({ title: "Dune" });
    expect(client.requests).toHaveLength(2);
    expect(JSON.stringify(client.requests[1]?.messages.at(-1))).toContain("title");
  });

  it("refuses images for an llmClient that does not declare supportsVision", async () => {
    const client = new RecordingClient([{ value: "x" }]);
    const { modelCaller } = caller({ model: undefined, llmClient: client });
    const call = modelCaller.call({
      operation: "extract",
      messages: [{ role: "user", content: [{ type: "image", image: TINY_PNG }] }],
      schema: z.string(),
    });
    await expect(call).rejects.toThrow(/supportsVision: true/);
    expect(client.requests).toHaveLength(0);
  });

  it("wraps the llmClient's own failures in LLMResponseError", async () => {
    const failing: LLMClient = {
      modelName: "broken",
      generate: async () => {
        throw new Error("socket hang up");
      },
    };
    const { modelCaller } = caller({ model: undefined, llmClient: failing });
    await expect(modelCaller.call({ operation: "act", messages: prompt("x") })).rejects.toThrow(
      /could not be used: the llmClient failed: socket hang up/,
    );
  });
});

describe("ModelCaller logging", () => {
  it("logs each call under category llm, with prompt contents only at verbose 2", async () => {
    server.on(match.always(), "ok");
    const quiet = caller();
    await quiet.modelCaller.call({ operation: "act", messages: prompt("the secret sauce recipe") });
    expect(quiet.lines.some((l) => l.category === "llm" && l.message.includes("answered in"))).toBe(true);
    expect(JSON.stringify(quiet.lines)).not.toContain("secret sauce");

    const { log, lines } = collectingLog(2);
    const verbose = new ModelCaller({ model: openaiModel(server), log, env: {} });
    await verbose.call({ operation: "act", messages: prompt("the secret sauce recipe") });
    expect(JSON.stringify(lines)).toContain("secret sauce");
    expect(JSON.stringify(lines)).not.toContain(OPTION_KEY);
  });
});
