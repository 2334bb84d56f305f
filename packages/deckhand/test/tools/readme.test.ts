// The README's tool list is the one the definitions generate: a tool added, renamed or given a new
// input without running scripts/tools-readme.ts fails here.

import { readFileSync } from "node:fs";
import { TOOLS } from "deckhand";
import { describe, expect, it } from "vitest";
import { README_END, README_START, toolsMarkdown, withToolsSection } from "../../src/tools/readme.ts";

const readme = readFileSync(new URL("../../../../README.md", import.meta.url), "utf8");

describe("README tool list", () => {
  it("matches the tool definitions", () => {
    const start = readme.indexOf(README_START);
    const end = readme.indexOf(README_END) + README_END.length;
    expect(start).toBeGreaterThan(0);
    expect(readme.slice(start, end)).toBe(toolsMarkdown());
  });

  it("lists every tool with its CLI form", () => {
    const table = toolsMarkdown();
    for (const tool of TOOLS) expect(table).toContain(`| \`${tool.name}\` |`);
    expect(table).toContain("`deckhand act [url] <instruction>`");
    expect(table).toContain("`instruction` (string)");
    expect(table).toContain("`variables?` (object)");
  });

  it("would change if a definition changed", () => {
    const edited = readme.replace("| `navigate` |", "| `goto` |");
    expect(withToolsSection(edited)).toBe(readme);
  });
});
