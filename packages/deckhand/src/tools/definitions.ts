// One definition per tool: its name, what it does (for a person at a terminal and for a model
// choosing tools), its input as a zod schema, and its handler over the public Deckhand API. The
// `deckhand` CLI's commands, the MCP server's tools and the README's tool list are all generated
// from TOOLS, so they cannot drift apart.

import { z } from "zod";
import type { Deckhand } from "../deckhand.ts";
import { ServiceInvalidArgumentError } from "../errors.ts";
import { SCRIPT_FORMATS } from "../export/script.ts";
import { estimateTokens } from "../snapshot/tokens.ts";
import type { Variables } from "../types.ts";

/** What a tool gives back: text for people and models, and the same as data where there is any. */
export type ToolOutput =
  | { kind: "text"; text: string; data?: unknown }
  | { kind: "json"; text: string; data: unknown }
  | { kind: "image"; text: string; mimeType: "image/png"; base64: string };

/** A tool's result: its output, and whether the operation did what was asked. */
export interface ToolResult {
  ok: boolean;
  output: ToolOutput;
}

export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  /** One line, for a list of tools. */
  title: string;
  /** What it does and when to use it (shown to models by MCP, and in the CLI's help). */
  description: string;
  input: Input;
  /** The CLI's positional arguments, in order (the rest are --options). */
  positional: readonly (keyof z.infer<Input> & string)[];
  /** Whether it works on the current page (the CLI then takes a URL to open first). */
  onPage: boolean;
  run(dh: Deckhand, input: z.infer<Input>): Promise<ToolResult>;
}

function define<Input extends z.ZodObject>(tool: ToolDefinition<Input>): ToolDefinition<Input> {
  return tool;
}

/** Default page-text budget: enough for most pages, small enough for a model's context. */
export const DEFAULT_TEXT_TOKENS = 8_000;

const variables = z
  .record(z.string(), z.string())
  .optional()
  .describe(
    "Values for %name% placeholders in the instruction. They are typed into the page but never shown to a model, logged or returned.",
  );

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

async function pageLine(dh: Deckhand): Promise<string> {
  const page = dh.page;
  const title = await page.title().catch(() => "");
  return `${title ? `"${title}" ` : ""}${page.url()}`;
}

function json(data: unknown, text?: string): ToolResult {
  return { ok: true, output: { kind: "json", data, text: text ?? JSON.stringify(data, null, 2) } };
}

export const navigateTool = define({
  name: "navigate",
  title: "Open a URL in the current tab",
  description:
    "Opens a URL in the current tab and waits for it to load. Answers with the page's title and URL.",
  input: z.object({
    url: z
      .string()
      .min(1)
      .describe("The address to open: http or https (also data: and about:blank; file: where allowed)."),
  }),
  positional: ["url"],
  onPage: false,
  async run(dh, { url }) {
    const status = await dh.page.goto(url);
    return {
      ok: status === null || status < 400,
      output: { kind: "text", text: `Opened ${await pageLine(dh)}${status ? ` (HTTP ${status})` : ""}.` },
    };
  },
});

export const actTool = define({
  name: "act",
  title: "Do one thing on the page",
  description:
    'Performs one action described in plain words: "click the Sign in button", "type %email% into the Email field", "select Germany from the Country dropdown". Explicit instructions like these need no model; others are carried out by the model. Answers whether it worked and what was done.',
  input: z.object({
    instruction: z.string().min(1).describe("What to do, in plain words."),
    variables,
  }),
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction, variables: values }) {
    const result = await dh.act(instruction, values ? { variables: values as Variables } : {});
    return { ok: result.success, output: { kind: "json", data: result, text: result.message } };
  },
});

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
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction, schema, selector }) {
    const options = selector ? { selector } : {};
    const data = schema
      ? await dh.extract(instruction, schema, options)
      : await dh.extract(instruction, options);
    return json(data);
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
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction }) {
    const actions = instruction ? await dh.observe(instruction) : await dh.observe();
    const text = actions.length
      ? actions.map((a, i) => `${i + 1}. ${a.description} (${a.method ?? "click"} ${a.selector})`).join("\n")
      : "Nothing on the page fits.";
    return json(actions, text);
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
  positional: [],
  onPage: true,
  async run(dh, { selector, maxTokens }) {
    const { pageText } = await dh.extract(selector ? { selector } : {});
    const { text, clipped } = clipToTokens(pageText, maxTokens ?? DEFAULT_TEXT_TOKENS);
    return {
      ok: true,
      output: { kind: "text", text: `${await pageLine(dh)}\n\n${text}`, data: { pageText: text, clipped } },
    };
  },
});

export const screenshotTool = define({
  name: "screenshot",
  title: "A PNG of the page",
  description: "A PNG screenshot of the current tab: the viewport, or the whole page with fullPage.",
  input: z.object({ fullPage: z.boolean().optional().describe("The whole page, not just the viewport.") }),
  positional: [],
  onPage: true,
  async run(dh, { fullPage }) {
    const png = await dh.page.screenshot({ type: "png", ...(fullPage ? { fullPage } : {}) });
    return {
      ok: true,
      output: {
        kind: "image",
        mimeType: "image/png",
        base64: png.toString("base64"),
        text: `Screenshot of ${await pageLine(dh)} (${png.length} bytes).`,
      },
    };
  },
});

export const tabsTool = define({
  name: "tabs",
  title: "List, switch or close tabs",
  description:
    "Lists the open tabs (index, title, URL, which is current), makes another tab the current one, or closes one.",
  input: z.object({
    action: z.enum(["list", "switch", "close"]).default("list").describe("list, switch or close."),
    index: z.number().int().min(0).optional().describe("The tab's index from the list (switch and close)."),
  }),
  positional: ["action", "index"],
  onPage: false,
  async run(dh, { action, index }) {
    const pages = dh.context.pages();
    if (action !== "list") {
      if (index === undefined || !pages[index]) {
        throw new ServiceInvalidArgumentError(
          `tabs ${action} needs the index of an open tab (0-${pages.length - 1}); list them with tabs list.`,
        );
      }
      if (action === "switch") await dh.context.setActivePage(pages[index]);
      else {
        if (pages.length === 1) throw new ServiceInvalidArgumentError("The last tab cannot be closed.");
        await pages[index].close();
      }
    }
    const active = dh.context.activePage();
    const list = await Promise.all(
      dh.context.pages().map(async (p, i) => ({
        index: i,
        title: await p.title().catch(() => ""),
        url: p.url(),
        current: p === active,
      })),
    );
    return json(
      list,
      list.map((t) => `${t.current ? "*" : " "} ${t.index}  ${t.title || "(no title)"}  ${t.url}`).join("\n"),
    );
  },
});

export const backTool = define({
  name: "back",
  title: "Go back in the current tab",
  description: "Goes back one page in the current tab's history.",
  input: z.object({}),
  positional: [],
  onPage: false,
  async run(dh) {
    await dh.page.goBack();
    return { ok: true, output: { kind: "text", text: `Back at ${await pageLine(dh)}.` } };
  },
});

export const forwardTool = define({
  name: "forward",
  title: "Go forward in the current tab",
  description: "Goes forward one page in the current tab's history.",
  input: z.object({}),
  positional: [],
  onPage: false,
  async run(dh) {
    await dh.page.goForward();
    return { ok: true, output: { kind: "text", text: `At ${await pageLine(dh)}.` } };
  },
});

export const agentTool = define({
  name: "agent",
  title: "Carry out a task of several steps",
  description:
    "Works on a task of several steps by itself (reading the page, acting, navigating) until it is done or runs out of steps, with a model. Answers whether it succeeded, its final message, and the steps it took.",
  input: z.object({
    task: z.string().min(1).describe("The task, in plain words."),
    maxSteps: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe("Most model calls before it stops (default 20)."),
    variables,
  }),
  positional: ["task"],
  onPage: true,
  async run(dh, { task, maxSteps, variables: values }) {
    const result = await dh.agent().execute({
      instruction: task,
      ...(maxSteps ? { maxSteps } : {}),
      ...(values ? { variables: values as Variables } : {}),
    });
    const data = {
      success: result.success,
      completed: result.completed,
      message: result.message,
      actions: result.actions,
    };
    const steps = result.actions.map(
      (a, i) => `${i + 1}. ${a.type}${a.arguments ? ` ${JSON.stringify(a.arguments)}` : ""}`,
    );
    return {
      ok: result.success,
      output: { kind: "json", data, text: [result.message, ...steps].join("\n") },
    };
  },
});

export const exportTool = define({
  name: "export",
  title: "The session so far as a script",
  description:
    "Writes what this session did as a script to keep and run: a Playwright test (playwright-test: no Deckhand, no model; each element by a locator that matched it alone when the step ran) or a Deckhand program of act(action) steps (deckhand: no model while the page is unchanged, the model finds a moved element again). Variables stay %name% and are read from the environment; their values are never written.",
  input: z.object({
    format: z.enum(SCRIPT_FORMATS).optional().describe("playwright-test (default) or deckhand."),
    assertExtracts: z
      .boolean()
      .optional()
      .describe("playwright-test: each extract becomes an expect that the page shows what was extracted."),
  }),
  positional: ["format"],
  onPage: false,
  async run(dh, { format, assertExtracts }) {
    const script = await dh.exportScript({
      ...(format ? { format } : {}),
      ...(assertExtracts ? { assertExtracts } : {}),
    });
    return { ok: true, output: { kind: "text", text: script } };
  },
});

/** Every tool, in the order they are listed. */
export const TOOLS: readonly ToolDefinition[] = [
  navigateTool,
  actTool,
  extractTool,
  observeTool,
  textTool,
  screenshotTool,
  tabsTool,
  backTool,
  forwardTool,
  agentTool,
  exportTool,
] as unknown as readonly ToolDefinition[];

/** The tool called `name`, or undefined. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return TOOLS.find((t) => t.name === name);
}
