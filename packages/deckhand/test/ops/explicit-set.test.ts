// The labelled set of explicit instructions, run with no model at all. The development half
// (testkit's EXPLICIT_CASES) is asserted case by case: each instruction acts on exactly the
// elements its label names and on nothing else, or is left to the model
// (MissingLLMConfigurationError, nothing happens), or fails on the one element that fits without
// touching anything. The held-out half (EXPLICIT_HELD_OUT, written before the grammar was widened)
// is not tuned against: each case must only never be wrong (acting where or how its label does not
// allow); how many it carries out is the benchmark's figure.

import {
  EXPLICIT_CASES,
  EXPLICIT_HELD_OUT,
  type ExplicitCase,
  type FixtureServer,
  judgeExplicit,
  runExplicitCase,
  startFixtureServer,
} from "@deckhand/testkit";
import { type Deckhand, MissingLLMConfigurationError } from "deckhand";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startDeckhand } from "../support/browser.ts";

const isModelError = (error: unknown) => error instanceof MissingLLMConfigurationError;

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

  it("has at least 400 labelled instructions on at least 15 pages, half of them held out", () => {
    const all = [...EXPLICIT_CASES, ...EXPLICIT_HELD_OUT];
    expect(all.length).toBeGreaterThanOrEqual(400);
    expect(new Set(all.map((c) => c.page)).size).toBeGreaterThanOrEqual(15);
    expect(EXPLICIT_HELD_OUT.length).toBeGreaterThanOrEqual(all.length / 2 - 10);
    // The held-out pages are its own.
    const devPages = new Set(EXPLICIT_CASES.map((c) => c.page));
    expect(EXPLICIT_HELD_OUT.filter((c) => devPages.has(c.page))).toEqual([]);
    const kinds = new Set(
      EXPLICIT_CASES.map((c) =>
        Array.isArray(c.expect)
          ? "steps"
          : ["model", "not-done", "page", "scroll", "back"].includes(c.expect as string)
            ? c.expect
            : "element",
      ),
    );
    expect([...kinds].sort()).toEqual(["back", "element", "model", "not-done", "page", "scroll", "steps"]);
  });

  const title = (c: ExplicitCase) => `${c.page}: ${c.instruction}`;

  it.each(EXPLICIT_CASES.map((c) => [title(c), c] as const))("%s", async (_, c: ExplicitCase) => {
    const seen = await runExplicitCase(dh, (p) => site.url(p), c, isModelError, { reusePage: true });
    if (seen.result === "model") expect(seen.message).toContain(JSON.stringify(c.instruction));
    if (c.expect !== "model" && c.expect !== "not-done") expect(seen.message).toMatch(/without a model/);
    expect(judgeExplicit(c, seen), JSON.stringify({ ...seen, ms: undefined })).toBe("as-labelled");
  });

  it.each(EXPLICIT_HELD_OUT.map((c) => [`held out: ${title(c)}`, c] as const))(
    "%s",
    async (_, c: ExplicitCase) => {
      const seen = await runExplicitCase(dh, (p) => site.url(p), c, isModelError, { reusePage: true });
      expect(judgeExplicit(c, seen), JSON.stringify({ ...seen, ms: undefined })).toMatch(
        /^(?:as-labelled|refused)$/,
      );
    },
  );
});
