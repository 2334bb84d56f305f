import { describe, expect, it } from "vitest";
import { largePageHtml, listProduct, longListHtml } from "../src/index.ts";

/** Opening tags, the way a parser counts elements (the generators write no "<" inside text). */
function countElements(html: string): number {
  return html.match(/<[a-z][a-z0-9-]*[\s>/]/gi)?.length ?? 0;
}

describe("largePageHtml", () => {
  it.each([200, 1000, 5000, 20_000])("has exactly %i elements", (elements) => {
    expect(countElements(largePageHtml({ elements }))).toBe(elements);
  });

  it("has every promised section", () => {
    const html = largePageHtml({ elements: 2000 });
    expect(html.match(/<nav\b/g)).toHaveLength(1);
    expect(html.match(/<li><a href=/g)?.length).toBeGreaterThan(50);
    expect(html.match(/<tr>/g)?.length).toBeGreaterThan(100);
    expect(html.match(/<td><a href="\/items\/\d+">/g)?.length).toBeGreaterThan(30);
    expect(html.match(/<h2>/g)?.length).toBeGreaterThanOrEqual(2);
    expect(html.match(/<button type="button">/g)?.length).toBeGreaterThan(300);
  });

  it("gives every grid button a distinct label", () => {
    const labels = [
      ...largePageHtml({ elements: 3000 }).matchAll(/<button type="button">([^<]+)<\/button>/g),
    ].map((m) => m[1]);
    expect(labels.length).toBeGreaterThan(500);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it("has exactly one target button, named 'Target button', as the last element of the body", () => {
    const html = largePageHtml({ elements: 5000 });
    expect(html.match(/id="target"/g)).toHaveLength(1);
    expect(html.match(/Target button/g)).toHaveLength(1);
    expect(html).toContain('<output id="target-result"></output>');
    const lastTag = [
      ...html.slice(0, html.indexOf("</body>")).matchAll(/<([a-z][a-z0-9-]*)[\s>]([^>]*)/gi),
    ].at(-1);
    expect(lastTag?.[1]).toBe("button");
    expect(lastTag?.[2]).toContain('id="target"');
  });

  it("is deterministic, and the seed changes only the texts", () => {
    expect(largePageHtml({ elements: 1500, seed: 7 })).toBe(largePageHtml({ elements: 1500, seed: 7 }));
    const other = largePageHtml({ elements: 1500, seed: 8 });
    expect(other).not.toBe(largePageHtml({ elements: 1500, seed: 7 }));
    expect(countElements(other)).toBe(1500);
  });
});

describe("longListHtml", () => {
  it("has one row per product with name, price and a real link", () => {
    const html = longListHtml(300);
    const rows = [...html.matchAll(/<tr><td>([^<]+)<\/td><td>([^<]+)<\/td><td><a href="([^"]+)">/g)];
    expect(rows).toHaveLength(300);
    rows.forEach(([, name, price, href], i) => {
      expect({ name, price, href }).toEqual(listProduct(i + 1));
      expect(price).toMatch(/^\$\d+\.\d{2}$/);
      expect(href).toBe(`/products/${i + 1}`);
    });
  });

  it("names every product differently, past the first 500 too", () => {
    const names = Array.from({ length: 1200 }, (_, i) => listProduct(i + 1).name);
    expect(new Set(names).size).toBe(1200);
  });
});
