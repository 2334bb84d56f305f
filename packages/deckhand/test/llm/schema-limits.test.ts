// The limits a JSON Schema is held to before anything compiles it, sends it or walks it: each test
// hands over the schema an attacker would (or a program gone wrong), and checks the error names the
// limit and the place, without a stack overflow or a long stall.

import { ServiceInvalidArgumentError } from "deckhand";
import { describe, expect, it } from "vitest";
import { toResponseSchema } from "../../src/llm/schema.ts";
import {
  checkJsonSchemaLimits,
  JSON_SCHEMA_LIMITS,
  JsonSchemaLimitError,
} from "../../src/llm/schema-limits.ts";

function limitError(schema: unknown): JsonSchemaLimitError {
  try {
    checkJsonSchemaLimits(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaLimitError);
    expect(error).toBeInstanceOf(ServiceInvalidArgumentError);
    return error as JsonSchemaLimitError;
  }
  throw new Error("the schema passed the limits");
}

const values = (n: number) => Array.from({ length: n }, (_, i) => `value-${i}`);

describe("checkJsonSchemaLimits", () => {
  it("refuses an enum of 60,000 values, naming the limit and where it is", () => {
    const error = limitError({
      type: "object",
      properties: { colour: { type: "string", enum: values(60_000) } },
    });
    expect(error).toMatchObject({ limit: "maxEnumValues", max: 1000, path: "properties.colour.enum" });
    expect(error.message).toContain("an enum of 60000 values; at most 1000 are allowed");
  });

  it("accepts an enum at the limit, and refuses one with a value twice", () => {
    expect(() => checkJsonSchemaLimits({ enum: values(JSON_SCHEMA_LIMITS.maxEnumValues) })).not.toThrow();
    expect(() => checkJsonSchemaLimits({ type: "string", enum: ["a", "b", "a"] })).toThrow(
      /the enum at `enum` has "a" twice \(items 0 and 2\)/,
    );
  });

  it("refuses a schema nested 3,000 levels deep without overflowing the stack", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 3000; i++) schema = { type: "object", properties: { a: schema } };
    const error = limitError(schema);
    expect(error).toMatchObject({ limit: "maxDepth", max: 64 });
    expect(error.path).toMatch(/^properties\.a\.properties\.a/);
  });

  it("refuses a schema that refers to itself, directly or through its definitions", () => {
    const self = limitError({
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
    });
    expect(self).toMatchObject({ limit: "ref", path: "properties.children.items.$ref" });
    expect(self.message).toContain("recursive schemas are not supported");

    const viaDefs = limitError({
      $defs: {
        node: { type: "object", properties: { next: { $ref: "#/$defs/link" } } },
        link: { anyOf: [{ type: "null" }, { $ref: "#/$defs/node" }] },
      },
      $ref: "#/$defs/node",
    });
    expect(viaDefs.limit).toBe("ref");
    expect(viaDefs.message).toContain("refers back to a part that contains it");
  });

  it("refuses references that are not into the schema itself", () => {
    for (const ref of ["https://example.test/schema.json", "#/$defs/missing", "other.json#/a", "#anchor"]) {
      expect(limitError({ properties: { a: { $ref: ref } }, $defs: {} })).toMatchObject({
        limit: "ref",
        path: "properties.a.$ref",
      });
    }
    expect(limitError({ $dynamicRef: "#meta" }).limit).toBe("ref");
  });

  it("accepts references to definitions that do not recur, shared by several fields", () => {
    const schema = {
      type: "object",
      $defs: { price: { type: "object", properties: { amount: { type: "number" } } } },
      properties: { was: { $ref: "#/$defs/price" }, now: { $ref: "#/$defs/price" } },
    };
    expect(() => checkJsonSchemaLimits(schema)).not.toThrow();
  });

  it("refuses definitions that double at every level (a billion laughs)", () => {
    const $defs: Record<string, unknown> = { d0: { type: "string" } };
    for (let i = 1; i <= 40; i++)
      $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    const error = limitError({ $defs, $ref: "#/$defs/d40" });
    expect(error).toMatchObject({ limit: "maxExpandedSize", max: 50_000 });
  });

  it("refuses more properties, alternatives or characters than the limits", () => {
    const properties = Object.fromEntries(values(501).map((name) => [name, { type: "string" }]));
    expect(limitError({ type: "object", properties })).toMatchObject({ limit: "maxProperties", max: 500 });
    const anyOf = Array.from({ length: 201 }, (_, i) => ({ const: i }));
    expect(limitError({ properties: { a: { anyOf } } })).toMatchObject({
      limit: "maxAlternatives",
      max: 200,
      path: "properties.a.anyOf",
    });
    expect(limitError({ type: "string", description: "x".repeat(40_000) })).toMatchObject({
      limit: "maxSize",
      max: 32_000,
    });
  });

  it("ends on a schema object that contains itself", () => {
    const schema: Record<string, unknown> = { type: "object", properties: {} };
    (schema.properties as Record<string, unknown>).again = schema;
    expect(["maxSize", "maxDepth"]).toContain(limitError(schema).limit);
  });

  it("does not read keys inside data (const, default, examples) as schema keywords", () => {
    expect(() =>
      checkJsonSchemaLimits({
        type: "object",
        default: { enum: [1, 1], $ref: "nowhere" },
        properties: { enum: { type: "string" }, $ref: { const: { $ref: "#/x" } } },
      }),
    ).not.toThrow();
  });
});

describe("toResponseSchema with a JSON Schema", () => {
  it("applies the limits before compiling", () => {
    expect(() => toResponseSchema({ type: "string", enum: values(60_000) })).toThrow(JsonSchemaLimitError);
  });

  it("compiles a 1,000-value enum and checks answers against every value", async () => {
    const schema = toResponseSchema({
      type: "object",
      properties: { v: { enum: values(1000) } },
      required: ["v"],
    });
    expect(await schema.parse({ v: "value-999" })).toEqual({ ok: true, value: { v: "value-999" } });
    expect(await schema.parse({ v: "value-1000" })).toMatchObject({ ok: false, path: "v" });
  });

  it("still refuses a schema its meta-schema refuses, naming what is wrong", () => {
    expect(() => toResponseSchema({ type: "object", properties: { a: { type: "strin" } } })).toThrow(
      /The JSON Schema is not valid: .*properties\/a\/type/,
    );
    expect(() => toResponseSchema({ type: "string", enum: [] })).toThrow(
      /enum must NOT have fewer than 1 items/,
    );
  });
});
