// extract: the four call forms of the spec, every kind of schema, URL fields as the page's real
// URLs, a bounded retry before ZodSchemaValidationError, and the options (selector,
// ignoreSelectors, screenshot, page, timeout).

import { match, type ScriptedRequest } from "@deckhand/testkit";
import { ServiceTimeoutError, UnsupportedModelError, ZodSchemaValidationError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { MODES, modelConfig, type OpsFixture, open, opsFixture, requestsOf } from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
  });
  afterAll(async () => {
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  function onExtract(
    respond: object | ((request: ScriptedRequest) => object),
    options?: { latencyMs?: number },
  ) {
    return fx.model.on(match.schemaName("extract"), respond, options);
  }

  /** Rows of the table in the outline the model got: name, price and the link's id. */
  function rowsIn(request: ScriptedRequest): { name: string; price: string; id: number }[] {
    const rows = [...request.lastUserText.matchAll(/^\s*(.+?) \| (\$[\d.]+) \| \[(\d+)\] link: View /gm)];
    return rows.map((m) => ({ name: m[1]!, price: m[2]!, id: Number(m[3]) }));
  }

  describe("the four forms", () => {
    it("extract() returns the page text and asks no model", async () => {
      await open(fx, "table.html");
      const calls = fx.model.callCount;
      const result = await fx.dh.extract();
      expect(Object.keys(result)).toEqual(["pageText"]);
      expect(result.pageText).toContain("table: Quarterly sales (thousands of dollars)");
      expect(result.pageText).toContain("North | 120 | 135 | 128 | 150");
      expect(fx.model.callCount).toBe(calls);
    });

    it("extract(options) returns the text of the part under `selector`", async () => {
      await open(fx, "overlay.html");
      const { pageText } = await fx.dh.extract({ selector: "#cookie-banner" });
      expect(pageText).toContain("[1] button: Accept cookies");
      expect(pageText).not.toContain("Covered button");
    });

    it("extract(options) leaves out what `ignoreSelectors` names", async () => {
      await open(fx, "overlay.html");
      const { pageText } = await fx.dh.extract({ ignoreSelectors: ["#cookie-banner"] });
      expect(pageText).toContain("Covered button");
      expect(pageText).not.toContain("cookies");
    });

    it("extract(instruction) returns the model's text answer as { extraction }", async () => {
      await open(fx, "table.html");
      onExtract({ extraction: "North grew the most" });
      expect(await fx.dh.extract("which region grew the most?")).toEqual({
        extraction: "North grew the most",
      });
      expect(fx.model.lastRequest?.lastUserText).toContain("North | 120 | 135 | 128 | 150");
    });

    it("extract(instruction, schema) returns an object of the schema's type", async () => {
      await open(fx, "table.html");
      onExtract({ region: "East", q4: 160 });
      const result = await fx.dh.extract(
        "the region with the best Q4",
        z.object({ region: z.string(), q4: z.number() }),
      );
      expect(result).toEqual({ region: "East", q4: 160 });
      // The schema reached the model as JSON Schema.
      expect(fx.model.lastRequest?.schema?.properties).toHaveProperty("q4");
    });
  });

  describe("schemas", () => {
    it("takes a zod 3 schema (zod/v3)", async () => {
      await open(fx, "table.html");
      onExtract({ regions: ["North", "South"] });
      const result = await fx.dh.extract("two regions", z3.object({ regions: z3.array(z3.string()) }));
      expect(result.regions).toEqual(["North", "South"]);
    });

    it("takes a plain JSON Schema", async () => {
      await open(fx, "table.html");
      onExtract({ total: 535 });
      const schema = {
        type: "object",
        properties: { total: { type: "number" } },
        required: ["total"],
        additionalProperties: false,
      };
      expect(await fx.dh.extract("the Q4 total", schema)).toEqual({ total: 535 });
    });

    it("takes an array schema and returns an array", async () => {
      await open(fx, "list.html");
      // A provider wants an object at the root: the array travels as { value }.
      onExtract({ value: ["Apple", "Banana", "Cherry"] });
      const fruits = await fx.dh.extract("the fruits", z.array(z.string()));
      expect(fruits).toEqual(["Apple", "Banana", "Cherry"]);
    });

    it("takes a nested schema", async () => {
      await open(fx, "list.html");
      const catalogue = [
        {
          section: "Kitchen",
          groups: [
            { name: "Kettles", items: [] },
            { name: "Knives", items: ["Chef knife", "Paring knife"] },
          ],
        },
        {
          section: "Garden",
          groups: [
            { name: "Hoses", items: [] },
            { name: "Rakes", items: [] },
          ],
        },
      ];
      onExtract({ catalogue });
      const schema = z.object({
        catalogue: z.array(
          z.object({
            section: z.string(),
            groups: z.array(z.object({ name: z.string(), items: z.array(z.string()) })),
          }),
        ),
      });
      expect(await fx.dh.extract("the catalogue tree", schema)).toEqual({ catalogue });
    });

    it("takes a string schema and returns a string", async () => {
      await open(fx, "table.html");
      onExtract({ value: "Sales report" });
      expect(await fx.dh.extract("the page heading", z.string())).toBe("Sales report");
    });

    it("returns the page's real URLs for URL fields (the model answers element ids)", async () => {
      await open(fx, "/generated/list?rows=3");
      onExtract((request) => ({ products: rowsIn(request).map((r) => ({ name: r.name, link: r.id })) }));
      const result = await fx.dh.extract(
        "every product and its page",
        z.object({ products: z.array(z.object({ name: z.string(), link: z.string().url() })) }),
      );
      expect(result.products).toEqual([
        { name: "Brass Lamp", link: fx.site.url("/products/1") },
        { name: "Cedar Lamp", link: fx.site.url("/products/2") },
        { name: "Linen Lamp", link: fx.site.url("/products/3") },
      ]);
      // The model was asked for ids, not URLs.
      const asked = JSON.stringify(fx.model.lastRequest?.schema);
      expect(asked).toContain("The id of the page element that carries this link");
    });
  });

  describe("answers that do not fit the schema", () => {
    const schema = z.object({ rows: z.array(z.object({ region: z.string(), q1: z.number() })) });

    it("asks once more, and uses the corrected answer", async () => {
      await open(fx, "table.html");
      const before = requestsOf(fx.model, "extract").length;
      // The newest rule is tried first: the wrong answer comes once, then the right one. ("120"
      // alone would be read as 120 by the tolerant reader; "120 or 135" reads two ways.)
      onExtract({ rows: [{ region: "North", q1: 120 }] });
      fx.model.once(match.schemaName("extract"), { rows: [{ region: "North", q1: "120 or 135" }] });
      expect(await fx.dh.extract("the North row", schema)).toEqual({ rows: [{ region: "North", q1: 120 }] });
      const asked = requestsOf(fx.model, "extract").slice(before);
      expect(asked).toHaveLength(2);
      expect(asked[1]!.lastUserText).toContain("rows[0].q1");
    });

    it("gives ZodSchemaValidationError with the path of the first mismatch after the retry", async () => {
      await open(fx, "table.html");
      const before = requestsOf(fx.model, "extract").length;
      onExtract({
        rows: [
          { region: "North", q1: 120 },
          { region: "South", q1: "ninety-eight" },
        ],
      });
      const error = await fx.dh.extract("the first two rows", schema).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZodSchemaValidationError);
      expect((error as ZodSchemaValidationError).path).toBe("rows[1].q1");
      expect(requestsOf(fx.model, "extract").length - before).toBe(2);
    });
  });

  describe("options", () => {
    it("shows the model only the part of the page under `selector`", async () => {
      await open(fx, "overlay.html");
      onExtract({ extraction: "a cookie notice" });
      await fx.dh.extract("what does this say?", { selector: "//div[@id='cookie-banner']" });
      const shown = fx.model.lastRequest!.lastUserText;
      expect(shown).toContain("We use cookies");
      expect(shown).not.toContain("Covered button");
    });

    it("keeps the options of extract(instruction, undefined, options)", async () => {
      await open(fx, "overlay.html");
      onExtract({ extraction: "a cookie notice" });
      // As a JavaScript caller whose schema is optional writes it.
      const extract = fx.dh.extract.bind(fx.dh) as (...args: unknown[]) => Promise<unknown>;
      await extract("what does this say?", undefined, { selector: "#cookie-banner" });
      expect(fx.model.lastRequest!.lastUserText).not.toContain("Covered button");
    });

    it("hides what `ignoreSelectors` names from the model", async () => {
      await open(fx, "overlay.html");
      onExtract({ extraction: "three buttons" });
      await fx.dh.extract("which buttons are there?", z.object({ extraction: z.string() }), {
        ignoreSelectors: ["#cookie-banner"],
      });
      expect(fx.model.lastRequest!.lastUserText).not.toContain("cookies");
    });

    it("sends a PNG of the viewport with `screenshot`", async () => {
      await open(fx, "table.html");
      fx.model.on(match.all(match.schemaName("extract"), match.withImage()), { extraction: "a table" });
      expect(await fx.dh.extract("describe the page", { screenshot: true })).toEqual({
        extraction: "a table",
      });
      const request = fx.model.lastRequest!;
      expect(request.imageCount).toBe(1);
      // The image went as a PNG data URL (Chat Completions' image_url part).
      expect(JSON.stringify(request.body)).toContain("data:image/png;base64,iVBORw0KGgo");
    });

    it.each([
      ["a text-only model", { modelName: "openai/gpt-3.5-turbo" }],
      ["a model marked `vision: false`", { vision: false }],
    ])("refuses `screenshot` with %s (UnsupportedModelError, no request made)", async (_, override) => {
      await open(fx, "table.html");
      const calls = fx.model.callCount;
      const model = { ...modelConfig(fx.model), ...override };
      await expect(fx.dh.extract("describe the page", { screenshot: true, model })).rejects.toThrow(
        UnsupportedModelError,
      );
      expect(fx.model.callCount).toBe(calls);
    });

    it("extracts from the page given as `page`, not the active one", async () => {
      const first = await open(fx, "table.html");
      const second = await fx.dh.context.newPage(fx.site.url("index.html"));
      try {
        onExtract({ extraction: "sales" });
        await fx.dh.extract("what is this about?", { page: first });
        expect(fx.model.lastRequest!.lastUserText).toContain("Quarterly sales");
        expect((await fx.dh.extract({ page: first })).pageText).toContain("Quarterly sales");
      } finally {
        await second.close();
      }
    });

    it("accepts serverCache: false, and the result carries no cacheStatus", async () => {
      await open(fx, "table.html");
      onExtract({ extraction: "sales" });
      expect(await fx.dh.extract("what is this about?", { serverCache: false })).toEqual({
        extraction: "sales",
      });
    });

    it("abandons the call at `timeout` with ServiceTimeoutError, and the next call works", async () => {
      await open(fx, "table.html");
      onExtract({ extraction: "late" }, { latencyMs: 2_000 });
      await expect(fx.dh.extract("anything", { timeout: 200 })).rejects.toThrow(ServiceTimeoutError);
      fx.model.clear();
      onExtract({ extraction: "on time" });
      expect(await fx.dh.extract("anything")).toEqual({ extraction: "on time" });
    });
  });
});
