// The response builder every tool answers through: text, JSON (with the text a person reads), or
// a PNG; and the line that names the current page ("title" and URL) in the answers that say
// where the tab is.

import type { Deckhand } from "../deckhand.ts";
import type { ToolResult } from "./tool.ts";

export const respond = {
  /** Text; `data`, when given, is the same as data (MCP's structured content, the CLI's --json). */
  text(text: string, options: { ok?: boolean; data?: unknown } = {}): ToolResult {
    const { ok = true, data } = options;
    return { ok, output: data === undefined ? { kind: "text", text } : { kind: "text", text, data } };
  },

  /** Data as JSON, with `text` for a person (the data itself, indented, when left out). */
  json(data: unknown, options: { ok?: boolean; text?: string } = {}): ToolResult {
    const { ok = true, text } = options;
    return { ok, output: { kind: "json", data, text: text ?? JSON.stringify(data, null, 2) } };
  },

  /** A PNG, with a line saying what it shows. */
  png(png: Buffer, text: string): ToolResult {
    return {
      ok: true,
      output: { kind: "image", mimeType: "image/png", base64: png.toString("base64"), text },
    };
  },
};

/** The current tab's title (quoted, when it has one) and URL. */
export async function pageLine(dh: Deckhand): Promise<string> {
  const page = dh.page;
  const title = await page.title().catch(() => "");
  return `${title ? `"${title}" ` : ""}${page.url()}`;
}
