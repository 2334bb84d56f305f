// What a tool is: its name, what it does (for a person at a terminal and for a model choosing
// tools), its input as a zod schema, what it may do to the world (MCP's annotations), and its
// handler over the public Deckhand API. Each category of tools is a file of its own (pages.ts,
// input.ts, reading.ts, agent.ts, export.ts); definitions.ts lists them all.

import { z } from "zod";
import type { Deckhand } from "../deckhand.ts";

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

/**
 * What a tool may do, as MCP's tool annotations say it (hints a client may use to decide what to
 * confirm with its user). A tool's "world" is the web: one that may load pages or act on them, so
 * that the page may reach any site, is open-world; one that reads the current tab (or what this
 * session did) is not, even when it asks the server's own model about it.
 */
export interface ToolAnnotations {
  /** It changes nothing: not the page, not the tabs. */
  readOnlyHint: boolean;
  /** It may do what cannot be undone (submit a form, close a tab); false for a read-only tool. */
  destructiveHint: boolean;
  /** It may load pages or act on them, reaching sites beyond the current page. */
  openWorldHint: boolean;
}

export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  /** One line, for a list of tools (MCP's title). */
  title: string;
  /** What it does and when to use it (shown to models by MCP, and in the CLI's help). */
  description: string;
  input: Input;
  /** What it may do to the page and the world (listed by the MCP servers). */
  annotations: ToolAnnotations;
  /** The CLI's positional arguments, in order (the rest are --options). */
  positional: readonly (keyof z.infer<Input> & string)[];
  /** Whether it works on the current page (the CLI then takes a URL to open first). */
  onPage: boolean;
  run(dh: Deckhand, input: z.infer<Input>): Promise<ToolResult>;
}

export function define<Input extends z.ZodObject>(tool: ToolDefinition<Input>): ToolDefinition<Input> {
  return tool;
}

/** The `variables` input of the tools that type text (act, agent). */
export const variables = z
  .record(z.string(), z.string())
  .optional()
  .describe(
    "Values for %name% placeholders in the instruction. They are typed into the page but never shown to a model, logged or returned.",
  );
