// Tools that read the current tab without changing it: data by instruction, the elements to act
// on, the page's outline as text, and a screenshot.

import { z } from "zod";
import { estimateTokens } from "../snapshot/tokens.ts";
import { pageLine, respond } from "./response.ts";
import { define, type ToolAnnotations } from "./tool.ts";

/** Default page-text budget: enough for most pages, small enough for a model's context. */
export const DEFAULT_TEXT_TOKENS = 8_000;

/** Reads the current tab (with the server's model, for an instruction); changes nothing. */
const READS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };

/** The outline clipped to a token budget at a line boundary, saying that it was. */
export function clipToTokens(text: string, maxTokens: number): { text: string; clipped: boolean } {
  if (estimateTokens(text) <= maxTokens) return { text, clipped: false };
  const lines = text.split("\n");
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const cost = estimateTokens(`${line}\n`);
    if (used + cost > maxTokens) break;
    kept.push(line);
    used += cost;
  }
  const left = lines.length - kept.length;
  return {
    text: `${kept.join("\n")}\n... (${left} more lines; ask for a selector or a larger maxTokens)`,
    clipped: true,
  };
}

export const extractTool = define({
  name: "extract",
  title: "Read data from the page",
  description:
    "Reads what the instruction asks for from the page. With a JSON Schema, answers with JSON of that shape; without, with a string.",
  input: z.object({
    instruction: z.string().min(1).describe("What to read, in plain words."),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'A JSON Schema of the answer, for example {"type":"object","properties":{"price":{"type":"string"}}}.',
      ),
    selector: z.string().optional().describe("Only read inside this element (CSS or XPath)."),
  }),
  annotations: READS,
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction, schema, selector }) {
    const options = selector ? { selector } : {};
    const data = schema
      ? await dh.extract(instruction, schema, options)
      : await dh.extract(instruction, options);
    return respond.json(data);
  },
});

export const observeTool = define({
  name: "observe",
  title: "Find elements to act on",
  description:
    "Lists elements of the page that fit the instruction (most relevant first), each with a selector, a description and the method to use; without an instruction, every interactive element (no model).",
  input: z.object({
    instruction: z.string().optional().describe("What to look for; leave out for every interactive element."),
  }),
  annotations: READS,
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction }) {
    const actions = instruction ? await dh.observe(instruction) : await dh.observe();
    const text = actions.length
      ? actions.map((a, i) => `${i + 1}. ${a.description} (${a.method ?? "click"} ${a.selector})`).join("\n")
      : "Nothing on the page fits.";
    return respond.json(actions, { text });
  },
});

export const textTool = define({
  name: "text",
  title: "The page as text (its outline)",
  description:
    "The page's outline as a model sees it: headings, text, and each interactive element with its role and name, across frames and shadow roots. No model. Cut to maxTokens.",
  input: z.object({
    selector: z.string().optional().describe("Only this part of the page (CSS or XPath)."),
    maxTokens: z
      .number()
      .int()
      .min(100)
      .max(200_000)
      .optional()
      .describe(`At most this many tokens of text (default ${DEFAULT_TEXT_TOKENS}).`),
  }),
  annotations: READS,
  positional: [],
  onPage: true,
  async run(dh, { selector, maxTokens }) {
    const { pageText } = await dh.extract(selector ? { selector } : {});
    const { text, clipped } = clipToTokens(pageText, maxTokens ?? DEFAULT_TEXT_TOKENS);
    return respond.text(`${await pageLine(dh)}\n\n${text}`, { data: { pageText: text, clipped } });
  },
});

export const screenshotTool = define({
  name: "screenshot",
  title: "A PNG of the page",
  description: "A PNG screenshot of the current tab: the viewport, or the whole page with fullPage.",
  input: z.object({ fullPage: z.boolean().optional().describe("The whole page, not just the viewport.") }),
  annotations: READS,
  positional: [],
  onPage: true,
  async run(dh, { fullPage }) {
    const png = await dh.page.screenshot({ type: "png", ...(fullPage ? { fullPage } : {}) });
    return respond.png(png, `Screenshot of ${await pageLine(dh)} (${png.length} bytes).`);
  },
});
