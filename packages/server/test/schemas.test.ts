import type {
  Action as LibraryAction,
  ActResult as LibraryActResult,
  ModelConfiguration as LibraryModel,
} from "deckhand";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import {
  type ActResult,
  ModelConfiguration,
  type ObservedAction,
  resolveStartAliases,
  SessionActBody,
  SessionStartBody,
  VariableValue,
} from "../src/schemas/index.ts";

describe("request and response schemas", () => {
  it("agree with the library's public types", () => {
    expectTypeOf<z.output<typeof ActResult>>().toExtend<LibraryActResult>();
    expectTypeOf<z.output<typeof ObservedAction>>().toExtend<LibraryAction>();
    expectTypeOf<z.output<typeof ModelConfiguration>>().toExtend<LibraryModel>();
  });

  it("take a model as a provider/model string or as an object with provider options", () => {
    expect(ModelConfiguration.safeParse("openai/gpt-4.1-mini").success).toBe(true);
    const object = {
      modelName: "openai/qwen",
      apiKey: "k",
      baseURL: "http://127.0.0.1:11434/v1",
      headers: { "x-team": "a" },
      provider: "openai",
      temperature: 0,
    };
    // Provider-specific options (spec 2.10) survive validation.
    expect(ModelConfiguration.parse(object)).toEqual(object);
    expect(ModelConfiguration.safeParse(42).success).toBe(false);
    expect(ModelConfiguration.safeParse({ apiKey: "k" }).success).toBe(false);
  });

  it("take every form of a variable value", () => {
    for (const value of ["text", 3, true, { value: "x", description: "the user" }, { value: 2 }]) {
      expect(VariableValue.safeParse(value).success).toBe(true);
    }
    expect(VariableValue.safeParse({ description: "no value" }).success).toBe(false);
  });

  it("take act input as an instruction or a complete Action (spec 2.7)", () => {
    expect(SessionActBody.safeParse({ input: "click sign in" }).success).toBe(true);
    const action = { selector: "//button[1]", description: "Sign in", method: "click", arguments: [] };
    expect(
      SessionActBody.parse({ input: action, options: { variables: { a: "b" }, timeout: 5000 } }).input,
    ).toEqual(action);
    // As the reference's service takes it: method defaults to click, arguments to [].
    expect(
      SessionActBody.parse({ input: { selector: "//button[1]", description: "Sign in" } }).input,
    ).toEqual({
      selector: "//button[1]",
      description: "Sign in",
      method: "click",
      arguments: [],
    });
    expect(SessionActBody.safeParse({ input: { selector: "//button[1]" } }).success).toBe(false);
    expect(SessionActBody.safeParse({ input: "" }).success).toBe(false);
  });

  it("drop request fields they do not know, so newer clients still work", () => {
    expect(SessionActBody.parse({ input: "x", somethingNew: 1 })).toEqual({ input: "x" });
  });

  it("fold the start aliases into their primary names", () => {
    const body = SessionStartBody.parse({
      browserbaseSessionID: "s-1",
      browserbaseSessionCreateParams: { keepAlive: true, region: "eu" },
      modelName: "openai/gpt-4.1-mini",
    });
    expect(resolveStartAliases(body)).toEqual({
      sessionId: "s-1",
      sessionCreateParams: { keepAlive: true, region: "eu" },
      modelName: "openai/gpt-4.1-mini",
    });
    expect(resolveStartAliases(SessionStartBody.parse({ sessionId: "s-2" }))).toEqual({ sessionId: "s-2" });
  });

  it("refuse both a name and its alias with different values", () => {
    const result = SessionStartBody.safeParse({ sessionId: "a", browserbaseSessionID: "b" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["browserbaseSessionID"]);
    expect(SessionStartBody.safeParse({ sessionId: "a", browserbaseSessionID: "a" }).success).toBe(true);
  });
});
