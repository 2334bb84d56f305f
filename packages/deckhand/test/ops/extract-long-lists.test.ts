// Long lists are extracted completely: every row of a 300-row table, and every row of a table
// whose outline is larger than one model window (read in windows, the lists joined in order).

import { listProduct, match, type ScriptedRequest } from "@deckhand/testkit";
import { DEFAULT_TOKEN_BUDGET } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MODES, type OpsFixture, open, opsFixture, requestsOf } from "./helpers.ts";

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

  const products = z.object({
    products: z.array(z.object({ name: z.string(), price: z.string(), url: z.string().url() })),
  });

  /** The model reads every row in the outline it was given, and names each link by its id. */
  function answerFromRows(request: ScriptedRequest) {
    const rows = request.lastUserText.matchAll(/^\s*(.+?) \| (\$[\d.]+) \| \[(\d+)\] link: View /gm);
    return { products: [...rows].map((m) => ({ name: m[1], price: m[2], url: Number(m[3]) })) };
  }

  function expected(rows: number) {
    return Array.from({ length: rows }, (_, i) => {
      const p = listProduct(i + 1);
      return { name: p.name, price: p.price, url: fx.site.url(p.href) };
    });
  }

  it("extracts all 300 rows of a 300-row table", async () => {
    await open(fx, "/generated/list?rows=300");
    fx.model.on(match.schemaName("extract"), answerFromRows);
    const before = requestsOf(fx.model, "extract").length;
    const result = await fx.dh.extract("every product with its price and page", products);
    expect(result.products).toHaveLength(300);
    expect(result.products).toEqual(expected(300));
    expect(requestsOf(fx.model, "extract").length - before).toBe(1);
  });

  it("extracts every row when the outline is larger than one model window", async () => {
    await open(fx, "/generated/list?rows=3000");
    fx.model.on(match.schemaName("extract"), answerFromRows);
    const before = requestsOf(fx.model, "extract").length;
    const result = await fx.dh.extract("every product with its price and page", products);

    const windows = requestsOf(fx.model, "extract").slice(before);
    expect(windows.length).toBeGreaterThan(1);
    for (const [i, request] of windows.entries()) {
      expect(request.lastUserText).toContain(`This is part ${i + 1} of ${windows.length} of the page`);
      // Each window fits the budget (the estimate errs high: 2.7 characters per token).
      const outline = request.lastUserText.slice(request.lastUserText.indexOf("Page outline:"));
      expect(outline.length / 2.7).toBeLessThan(DEFAULT_TOKEN_BUDGET + 100);
    }
    // Together the windows hold every row once, in order.
    expect(result.products).toHaveLength(3000);
    expect(result.products).toEqual(expected(3000));
  });
});
