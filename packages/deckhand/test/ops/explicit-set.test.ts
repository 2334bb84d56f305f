// The labelled set of explicit instructions (testkit's EXPLICIT_CASES), run with no model at all:
// each instruction either acts on exactly the element its label names and on nothing else, or is
// left to the model (MissingLLMConfigurationError, nothing happens), or fails on the one element
// that fits without touching anything. A wrong element fails its case.

import { EXPLICIT_CASES, type ExplicitCase, type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { type Deckhand, MissingLLMConfigurationError } from "deckhand";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startDeckhand } from "../support/browser.ts";

interface Hit {
  type: string;
  id: string | null;
}

/** Ids that received input of the kinds a step sends (mouseover only for a hover). */
function touched(hits: Hit[], hover: boolean): string[] {
  const kinds = hover ? ["mouseover"] : ["click", "dblclick", "keydown", "input", "change"];
  return [...new Set(hits.filter((h) => kinds.includes(h.type) && h.id !== null).map((h) => h.id!))];
}

describe("the labelled set of explicit instructions, with no model", () => {
  let dh: Deckhand;
  let site: FixtureServer;
  beforeAll(async () => {
    // No key anywhere: any model call would throw MissingLLMConfigurationError.
    vi.stubEnv("OPENAI_API_KEY", undefined);
    [dh, site] = await Promise.all([startDeckhand(), startFixtureServer()]);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await Promise.all([dh?.close(), site?.close()]);
  });

  it("has at least 100 labelled pairs of every kind", () => {
    expect(EXPLICIT_CASES.length).toBeGreaterThanOrEqual(100);
    const kinds = new Set(
      EXPLICIT_CASES.map((c) => (["model", "not-done", "page"].includes(c.expect) ? c.expect : "element")),
    );
    expect([...kinds].sort()).toEqual(["element", "model", "not-done", "page"]);
  });

  it.each(EXPLICIT_CASES.map((c) => [`${c.page}: ${c.instruction}`, c] as const))(
    "%s",
    async (_, c: ExplicitCase) => {
      const page = dh.page;
      await page.goto(site.url(`explicit/${c.page}.html`));
      await page.evaluate(() => {
        (window as unknown as { __hits: unknown[] }).__hits.length = 0;
      });
      const options = c.variables ? { variables: c.variables } : {};
      const outcome = await dh.act(c.instruction, options).then(
        (result) => ({ result, error: undefined }),
        (error: unknown) => ({ result: undefined, error }),
      );
      const hits = await page.evaluate(() => (window as unknown as { __hits: Hit[] }).__hits);
      const acted = touched(hits, c.instruction.startsWith("hover"));

      if (c.expect === "model") {
        expect(outcome.error).toBeInstanceOf(MissingLLMConfigurationError);
        expect((outcome.error as Error).message).toContain(JSON.stringify(c.instruction));
        expect(acted).toEqual([]);
      } else if (c.expect === "not-done") {
        expect(outcome.error).toBeUndefined();
        expect(outcome.result?.success).toBe(false);
        expect(acted).toEqual([]);
      } else if (c.expect === "page") {
        expect(outcome.error).toBeUndefined();
        expect(outcome.result?.success).toBe(true);
        expect(acted).toEqual([]);
        expect(hits.some((h) => h.type === "keydown")).toBe(true);
      } else {
        expect(outcome.error).toBeUndefined();
        expect(outcome.result?.success, outcome.result?.message).toBe(true);
        expect(outcome.result?.message).toMatch(/without a model/);
        expect(acted).toEqual([c.expect]);
      }
    },
  );
});
