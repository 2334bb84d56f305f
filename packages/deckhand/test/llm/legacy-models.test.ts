// Bare model names of the reference library's older releases, and the provider each is read as.

import { legacyModelName } from "deckhand";
import { describe, expect, it } from "vitest";

describe("legacyModelName", () => {
  it("maps the known families to their provider", () => {
    expect(legacyModelName("gpt-4.1-nano")).toBe("openai/gpt-4.1-nano");
    expect(legacyModelName("gpt-4o-2024-08-06")).toBe("openai/gpt-4o-2024-08-06");
    expect(legacyModelName("o3-mini")).toBe("openai/o3-mini");
    expect(legacyModelName("o1")).toBe("openai/o1");
    expect(legacyModelName("claude-3-7-sonnet-latest")).toBe("anthropic/claude-3-7-sonnet-latest");
    expect(legacyModelName("gemini-2.0-flash")).toBe("google/gemini-2.0-flash");
    expect(legacyModelName("cerebras-llama-3.3-70b")).toBe("cerebras/llama-3.3-70b");
    expect(legacyModelName("groq-llama-3.3-70b-versatile")).toBe("groq/llama-3.3-70b-versatile");
  });

  it("leaves names with a provider, and names of no known family, alone", () => {
    expect(legacyModelName("openai/gpt-4.1-mini")).toBeUndefined();
    expect(legacyModelName("mystery-model-7")).toBeUndefined();
    expect(legacyModelName("o")).toBeUndefined();
    expect(legacyModelName("ollama")).toBeUndefined();
    expect(legacyModelName("")).toBeUndefined();
    expect(legacyModelName("gpt 4")).toBeUndefined();
  });
});
