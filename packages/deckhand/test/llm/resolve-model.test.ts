import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  InvalidAISDKModelFormatError,
  MissingLLMConfigurationError,
  ServiceEnvironmentError,
  UnsupportedModelError,
} from "../../src/errors.ts";
import { loadLanguageModel, resolveModel } from "../../src/llm/resolve-model.ts";

describe("resolveModel", () => {
  it("splits provider/model at the first slash only", () => {
    const model = resolveModel("together/meta-llama/Llama-3-70b", { TOGETHER_API_KEY: "tk" });
    expect(model.provider.name).toBe("together");
    expect(model.modelId).toBe("meta-llama/Llama-3-70b");
    expect(model.modelName).toBe("together/meta-llama/Llama-3-70b");
    expect(model.baseURL).toBe("https://api.together.xyz/v1");
  });

  it.each(["mystery-model-7", "/gpt-4o", "openai/", "", "open ai/gpt-4o"])(
    "throws InvalidAISDKModelFormatError for %j",
    (name) => {
      const run = () => resolveModel(name, {});
      if (name === "") expect(run).toThrow(ServiceEnvironmentError);
      else expect(run).toThrow(InvalidAISDKModelFormatError);
    },
  );

  it("reads a bare name of a known family as its provider's, and says so through warn", () => {
    const warnings: string[] = [];
    const resolved = resolveModel({ modelName: "claude-3-7-sonnet-latest", apiKey: "k" }, {}, (m) =>
      warnings.push(m),
    );
    expect(resolved.modelName).toBe("anthropic/claude-3-7-sonnet-latest");
    expect(resolved.modelId).toBe("claude-3-7-sonnet-latest");
    expect(warnings).toEqual([expect.stringContaining('write "anthropic/claude-3-7-sonnet-latest"')]);
  });

  it("throws UnsupportedModelError naming the supported providers for an unknown one", () => {
    let error: unknown;
    try {
      resolveModel("acme/brain-1", {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsupportedModelError);
    const message = (error as Error).message;
    for (const name of ["openai", "anthropic", "google", "ollama", "vllm", "groq", "openrouter"]) {
      expect(message).toContain(name);
    }
    expect(message).toContain("baseURL");
  });

  it("treats an unknown provider with a baseURL as OpenAI-compatible", () => {
    const model = resolveModel(
      { modelName: "acme/brain-1", baseURL: "http://127.0.0.1:9/v1" },
      { ACME_API_KEY: "ak" },
    );
    expect(model.provider.package).toBe("@ai-sdk/openai-compatible");
    expect(model.apiKey).toBe("ak");
    expect(model.keySource).toBe("ACME_API_KEY");
  });

  it("accepts gemini as an alias of google", () => {
    const model = resolveModel("gemini/gemini-2.5-flash", { GOOGLE_GENERATIVE_AI_API_KEY: "g" });
    expect(model.provider.name).toBe("google");
    expect(model.modelName).toBe("google/gemini-2.5-flash");
  });

  it("needs no key for ollama and uses its default address", () => {
    const model = resolveModel("ollama/llama3.1", {});
    expect(model.apiKey).toBeUndefined();
    expect(model.baseURL).toBe("http://127.0.0.1:11434/v1");
  });

  it("asks for a baseURL for vllm", () => {
    expect(() => resolveModel("vllm/qwen", {})).toThrow(MissingLLMConfigurationError);
    expect(() => resolveModel("vllm/qwen", {})).toThrow(/VLLM_BASE_URL/);
    expect(resolveModel("vllm/qwen", { VLLM_BASE_URL: "http://10.0.0.2:8000/v1" }).baseURL).toBe(
      "http://10.0.0.2:8000/v1",
    );
  });

  it("prefers the option key over the environment key", () => {
    const model = resolveModel(
      { modelName: "groq/llama-3.3-70b", apiKey: "from-option" },
      { GROQ_API_KEY: "from-env" },
    );
    expect(model.apiKey).toBe("from-option");
    expect(model.keySource).toBe("option");
  });

  it("uses Chat Completions for openai with a custom baseURL, Responses otherwise, unless told", () => {
    expect(resolveModel("openai/gpt-4.1-mini", { OPENAI_API_KEY: "k" }).api).toBe("responses");
    expect(resolveModel({ modelName: "openai/gpt-4.1-mini", apiKey: "k", baseURL: "http://x/v1" }).api).toBe(
      "chat",
    );
    expect(
      resolveModel({
        modelName: "openai/gpt-4.1-mini",
        apiKey: "k",
        baseURL: "http://x/v1",
        api: "responses",
      }).api,
    ).toBe("responses");
  });

  it("passes unknown fields to the provider factory and reads its own", () => {
    const model = resolveModel({
      modelName: "openai/gpt-4.1",
      apiKey: "k",
      organization: "org-1",
      vision: false,
    });
    expect(model.settings).toEqual({ organization: "org-1" });
    expect(model.vision).toBe(false);
  });

  it("knows text-only model families", () => {
    expect(resolveModel("deepseek/deepseek-chat", { DEEPSEEK_API_KEY: "d" }).vision).toBe(false);
    expect(resolveModel("ollama/llama3.1", {}).vision).toBe(false);
    expect(resolveModel("ollama/llama3.2-vision", {}).vision).toBe(true);
    expect(resolveModel("ollama/qwen2.5vl", {}).vision).toBe(true);
    expect(resolveModel("openai/gpt-4.1-mini", { OPENAI_API_KEY: "k" }).vision).toBe(true);
    expect(resolveModel({ modelName: "ollama/llama3.1", vision: true }).vision).toBe(true);
  });
});

describe("loadLanguageModel", () => {
  it("creates Anthropic and Google models through their own providers", async () => {
    const anthropic = await loadLanguageModel(
      resolveModel({ modelName: "anthropic/claude-sonnet-4-5", apiKey: "sk-ant-test" }),
    );
    const google = await loadLanguageModel(
      resolveModel({ modelName: "gemini/gemini-2.5-flash", apiKey: "g-test" }),
    );
    expect(anthropic).toMatchObject({
      modelId: "claude-sonnet-4-5",
      provider: expect.stringMatching(/^anthropic/),
    });
    expect(google).toMatchObject({ modelId: "gemini-2.5-flash", provider: expect.stringMatching(/^google/) });
  });

  it("creates an OpenAI-compatible model under the provider's name", async () => {
    const model = await loadLanguageModel(
      resolveModel("together/meta-llama/Llama-3-70b", { TOGETHER_API_KEY: "tk" }),
    );
    expect(model).toMatchObject({ modelId: "meta-llama/Llama-3-70b", provider: "together.chat" });
  });
});

describe("MissingLLMConfigurationError", () => {
  const saved: Record<string, string | undefined> = {};
  const names = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"];

  beforeEach(() => {
    for (const name of names) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
  });

  afterEach(() => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("names the environment variable and the option to set", () => {
    expect(() => resolveModel("anthropic/claude-sonnet-4-5")).toThrow(MissingLLMConfigurationError);
    expect(() => resolveModel("anthropic/claude-sonnet-4-5")).toThrow(/ANTHROPIC_API_KEY.*apiKey/s);
    expect(() => resolveModel("google/gemini-2.5-flash")).toThrow(
      /GOOGLE_GENERATIVE_AI_API_KEY \(or GEMINI_API_KEY\)/,
    );
  });

  it("explains the default model when none is configured", () => {
    expect(() => resolveModel(undefined)).toThrow(/No model is configured.*OPENAI_API_KEY.*llmClient/s);
  });

  it("reads the key from the environment when the option is absent", () => {
    process.env.ANTHROPIC_API_KEY = "sk-ant-env";
    const model = resolveModel("anthropic/claude-sonnet-4-5");
    expect(model.apiKey).toBe("sk-ant-env");
    expect(model.keySource).toBe("ANTHROPIC_API_KEY");
  });
});
