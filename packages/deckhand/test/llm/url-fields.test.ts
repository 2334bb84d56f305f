import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as z3 from "zod/v3";
import { toResponseSchema } from "../../src/llm/schema.ts";
import { findUrlFields, withUrlFieldsAsIds } from "../../src/llm/url-fields.ts";
import { dig } from "./helpers.ts";

const links: Record<number, string> = {
  4: "https://shop.example/tea?ref=list&id=4",
  9: "https://shop.example/coffee",
};
const urlForId = (id: number | string) => links[Number(id)];

describe("findUrlFields", () => {
  it("finds zod .url() fields, JSON Schema uri formats, and fields named url, href or link", () => {
    const fromZod = toResponseSchema(
      z.object({
        items: z.array(z.object({ name: z.string(), page: z.string().url(), href: z.string() })),
        homepageLink: z.string().optional(),
        title: z.string(),
      }),
    );
    expect(findUrlFields(fromZod.jsonSchema).map((f) => [f.path, f.reason])).toEqual([
      ["items[].page", "format"],
      ["items[].href", "name"],
      ["homepageLink", "name"],
    ]);

    const fromJson = findUrlFields({
      type: "object",
      properties: {
        source: { type: "string", format: "uri" },
        links: { type: "array", items: { type: "string" } },
      },
    });
    expect(fromJson.map((f) => f.path)).toEqual(["source", "links[]"]);
  });

  it("finds URL fields in zod 3 schemas", () => {
    const { z: v3 } = z3;
    const schema = toResponseSchema(v3.object({ url: v3.string().url(), name: v3.string() }));
    expect(findUrlFields(schema.jsonSchema).map((f) => f.path)).toEqual(["url"]);
  });

  it("ignores strings that are not links", () => {
    expect(
      findUrlFields(toResponseSchema(z.object({ linkText: z.string(), urgent: z.boolean() })).jsonSchema),
    ).toEqual([]);
  });
});

describe("withUrlFieldsAsIds", () => {
  it("shows the model id fields instead of URL fields", () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.object({ items: z.array(z.object({ name: z.string(), url: z.string().url() })) })),
      urlForId,
    );
    const item = dig(schema.wireSchema, "properties", "items", "items", "properties");
    expect(item.name).toEqual({ type: "string" });
    const url = dig(item, "url");
    expect(url.type).toBe("number");
    expect(url.format).toBeUndefined();
    expect(url.description).toMatch(/id of the page element/);
  });

  it("maps the ids in the answer back to the page's real URLs, then validates", async () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.object({ items: z.array(z.object({ name: z.string(), url: z.string().url() })) })),
      urlForId,
    );
    const result = await schema.parse({
      items: [
        { name: "Tea", url: 4 },
        { name: "Coffee", url: "9" },
      ],
    });
    expect(result).toEqual({
      ok: true,
      value: {
        items: [
          { name: "Tea", url: links[4] },
          { name: "Coffee", url: links[9] },
        ],
      },
    });
  });

  it("treats an unknown id as a mismatch at that field", async () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.object({ items: z.array(z.object({ url: z.string().url() })) })),
      urlForId,
    );
    const result = await schema.parse({ items: [{ url: 4 }, { url: 77 }] });
    expect(result).toMatchObject({ ok: false, path: "items[1].url" });
    if (!result.ok) expect(result.reason).toMatch(/77 is not the id of a link/);
  });

  it("keeps nullable URL fields nullable", async () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.object({ link: z.string().url().nullable() })),
      urlForId,
    );
    const link = dig(schema.wireSchema, "properties", "link");
    expect(JSON.stringify(link)).toContain('"number"');
    expect(JSON.stringify(link)).toContain('"null"');
    expect(await schema.parse({ link: null })).toEqual({ ok: true, value: { link: null } });
    expect(await schema.parse({ link: 9 })).toEqual({ ok: true, value: { link: links[9] } });
  });

  it("works for a URL root inside the { value } wrapping, and with string ids", async () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema(z.string().url()),
      (id) => (id === "0-4" ? links[4] : undefined),
      {
        idType: "string",
      },
    );
    expect(schema.wireSchema).toMatchObject({ properties: { value: { type: "string" } } });
    expect(await schema.parse({ value: "0-4" })).toEqual({ ok: true, value: links[4] });
  });

  it("returns the schema itself when there is no URL field", () => {
    const schema = toResponseSchema(z.object({ name: z.string() }));
    expect(withUrlFieldsAsIds(schema, urlForId)).toBe(schema);
  });

  it("rewrites JSON Schema URL fields and validates against the original format", async () => {
    const schema = withUrlFieldsAsIds(
      toResponseSchema({
        type: "object",
        properties: { href: { type: "string", format: "uri" } },
        required: ["href"],
      }),
      () => "not-a-url",
    );
    expect(await schema.parse({ href: 1 })).toMatchObject({ ok: false, path: "href" });
  });
});
