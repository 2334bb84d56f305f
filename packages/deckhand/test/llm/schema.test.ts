import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as z3 from "zod/v3";
import { formatPath, isStrictCompatible, toResponseSchema } from "../../src/llm/schema.ts";

describe("toResponseSchema", () => {
  it("sends a zod 4 object schema as it is and checks answers with zod", async () => {
    const schema = toResponseSchema(z.object({ title: z.string(), price: z.number().optional() }));
    expect(schema.source).toBe("zod4");
    expect(schema.wrapped).toBe(false);
    expect(schema.wireSchema).toMatchObject({
      type: "object",
      properties: { title: { type: "string" }, price: { type: "number" } },
      required: ["title"],
    });
    expect(await schema.parse({ title: "Tea" })).toEqual({ ok: true, value: { title: "Tea" } });
  });

  it("converts zod 3 objects, arrays, strings, numbers, booleans, enums, optional and nullable", async () => {
    const { z: v3 } = z3;
    const schema = toResponseSchema(
      v3.object({
        name: v3.string(),
        count: v3.number(),
        inStock: v3.boolean(),
        kind: v3.enum(["book", "film"]),
        note: v3.string().optional(),
        rating: v3.number().nullable(),
        tags: v3.array(v3.string()),
      }),
    );
    expect(schema.source).toBe("zod3");
    const properties = schema.wireSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.name).toEqual({ type: "string" });
    expect(properties.count).toEqual({ type: "number" });
    expect(properties.inStock).toEqual({ type: "boolean" });
    expect(properties.kind).toMatchObject({ enum: ["book", "film"] });
    expect(properties.tags).toEqual({ type: "array", items: { type: "string" } });
    expect(schema.wireSchema.required).toEqual(["name", "count", "inStock", "kind", "rating", "tags"]);
    const answer = { name: "Dune", count: 2, inStock: true, kind: "book", rating: null, tags: ["sf"] };
    expect(await schema.parse(answer)).toEqual({ ok: true, value: answer });
    expect(await schema.parse({ ...answer, kind: "song" })).toMatchObject({ ok: false, path: "kind" });
  });

  it("wraps an array root in { value } and unwraps the answer", async () => {
    const schema = toResponseSchema(z.array(z.object({ name: z.string() })));
    expect(schema.wrapped).toBe(true);
    expect(schema.wireSchema).toMatchObject({
      type: "object",
      properties: { value: { type: "array" } },
      required: ["value"],
      additionalProperties: false,
    });
    expect(await schema.parse({ value: [{ name: "a" }] })).toEqual({ ok: true, value: [{ name: "a" }] });
  });

  it("wraps a string root and accepts a bare answer too", async () => {
    const schema = toResponseSchema(z.string());
    expect(schema.wireSchema).toMatchObject({ properties: { value: { type: "string" } } });
    expect(await schema.parse({ value: "hello" })).toEqual({ ok: true, value: "hello" });
    expect(await schema.parse("hello")).toEqual({ ok: true, value: "hello" });
  });

  it("reports the first zod mismatch as a path like items[3].price", async () => {
    const schema = toResponseSchema(
      z.object({ items: z.array(z.object({ name: z.string(), price: z.number() })) }),
    );
    const items = [0, 1, 2].map((i) => ({ name: `n${i}`, price: i }));
    const result = await schema.parse({ items: [...items, { name: "n3", price: "cheap" }] });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.path).toBe("items[3].price");
      expect(result.reason).toMatch(/number/);
    }
  });

  it("applies zod transforms to the answer", async () => {
    const schema = toResponseSchema(
      z.object({ price: z.string().transform((s) => Number(s.replace("$", ""))) }),
    );
    expect(await schema.parse({ price: "$4.50" })).toEqual({ ok: true, value: { price: 4.5 } });
  });

  it("checks JSON Schema answers with ajv, naming the missing property", async () => {
    const schema = toResponseSchema({
      type: "object",
      properties: {
        items: {
          type: "array",
          items: { type: "object", properties: { price: { type: "number" } }, required: ["price"] },
        },
      },
      required: ["items"],
    });
    expect(schema.source).toBe("json-schema");
    expect(await schema.parse({ items: [{ price: 1 }, {}] })).toMatchObject({
      ok: false,
      path: "items[1].price",
      reason: "is required but missing",
    });
    expect(await schema.parse({ items: [{ price: 1 }, { price: "x" }] })).toMatchObject({
      ok: false,
      path: "items[1].price",
      reason: "must be number",
    });
  });

  it("checks JSON Schema formats such as uri", async () => {
    const schema = toResponseSchema({
      type: "object",
      properties: { link: { type: "string", format: "uri" } },
    });
    expect((await schema.parse({ link: "https://example.com/a" })).ok).toBe(true);
    expect(await schema.parse({ link: "not a url" })).toMatchObject({ ok: false, path: "link" });
  });

  it("accepts 2020-12 JSON Schemas", async () => {
    const schema = toResponseSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "array",
      prefixItems: [{ type: "string" }],
    });
    expect(schema.wrapped).toBe(true);
    expect(await schema.parse({ value: [3] })).toMatchObject({ ok: false, path: "[0]" });
  });

  it("rejects something that is not a schema", () => {
    expect(() => toResponseSchema(42 as never)).toThrow(/zod schema .* or a JSON Schema/);
  });
});

describe("formatPath", () => {
  it("writes indexes in brackets and quotes keys that are not identifiers", () => {
    expect(formatPath(["items", 3, "price"])).toBe("items[3].price");
    expect(formatPath([0, "a b"])).toBe('[0]["a b"]');
    expect(formatPath([])).toBe("");
  });
});

describe("isStrictCompatible", () => {
  it("accepts a schema where every property is required and no extra ones are allowed", () => {
    expect(toResponseSchema(z.object({ a: z.string(), b: z.array(z.number()) })).strictCompatible).toBe(true);
  });

  it("refuses optional properties and unsupported formats", () => {
    expect(toResponseSchema(z.object({ a: z.string().optional() })).strictCompatible).toBe(false);
    expect(toResponseSchema(z.object({ a: z.string().url() })).strictCompatible).toBe(false);
    expect(
      isStrictCompatible({
        type: "object",
        properties: { a: {} },
        required: ["a"],
        additionalProperties: false,
      }),
    ).toBe(false);
  });
});
