// The command line: `deckhand <command> [url] [arguments...] [--options]`. Each tool's positional
// arguments and --options come from its definition (tools/definitions.ts); the options every
// command takes are listed in COMMON.

import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { TOOLS, type ToolDefinition, toolNamed } from "../tools/definitions.ts";

/** A mistake on the command line: exit code 2 and the usage. */
export class UsageError extends Error {}

export interface CommonOptions {
  model?: string;
  baseUrl?: string;
  headed: boolean;
  remote?: string;
  json: boolean;
  keepOpen: boolean;
  /** How long a browser kept by --keep-open may go unused before it is ended (ms). */
  idleTimeout?: number;
  output?: string;
  timeout?: number;
  /** `deckhand export --from-report file`: export a saved LOCAL report's run (no browser). */
  fromReport?: string;
  /** `deckhand mcp --allow-file-urls`: its navigate tool may open file: URLs. */
  allowFileUrls?: boolean;
}

export const COMMON: readonly { flag: string; value?: string; means: string }[] = [
  {
    flag: "--model",
    value: "provider/model",
    means: "the model for act, extract and observe (default openai/gpt-4.1-mini)",
  },
  { flag: "--base-url", value: "url", means: "the model's endpoint (an OpenAI-compatible server, a proxy)" },
  { flag: "--headed", means: "show the browser window" },
  {
    flag: "--remote",
    value: "service url",
    means: "work in a session of a Deckhand service (key from PLATFORM_API_KEY)",
  },
  { flag: "--json", means: "print one JSON object (the default when stdout is not a terminal)" },
  {
    flag: "--keep-open",
    means: "keep the browser (or remote session) for the next command; `deckhand close` ends it",
  },
  {
    flag: "--idle-timeout",
    value: "duration",
    means:
      "end the kept browser after this long without a command (default 5m; ms, or with s, m or h: 90s, 10m)",
  },
  {
    flag: "--output, -o",
    value: "file",
    means: "where screenshot writes its PNG (default screenshot.png), and export its script",
  },
  { flag: "--timeout", value: "ms", means: "give up on the operation after this many milliseconds" },
  {
    flag: "--from-report",
    value: "file",
    means:
      "export: the run of a saved LOCAL report (the `report` option's HTML file) instead of this session",
  },
];

export interface Parsed {
  command: string;
  tool: ToolDefinition | undefined;
  url: string | undefined;
  input: Record<string, unknown>;
  common: CommonOptions;
}

/** A URL to open: http(s)/file/about URLs as they are, an existing local file as a file URL. */
export function asUrl(text: string): string | undefined {
  if (/^(https?|file|about|data):/i.test(text)) return text;
  if (/^[\w.-]+\.[a-z]{2,}(:\d+)?(\/|$)/i.test(text) && !/\s/.test(text)) return `https://${text}`;
  if (/\.html?$/i.test(text) && existsSync(text)) return pathToFileURL(resolve(text)).href;
  return undefined;
}

/** The kind of a tool input field, for parsing its --option. */
function fieldKind(schema: z.ZodType): "boolean" | "number" | "json" | "string" {
  let s = schema as unknown as { def: { type: string; innerType?: unknown } };
  while (s.def.type === "optional" || s.def.type === "default" || s.def.type === "nullable")
    s = s.def.innerType as typeof s;
  if (s.def.type === "boolean") return "boolean";
  if (s.def.type === "number" || s.def.type === "int") return "number";
  if (s.def.type === "record" || s.def.type === "object" || s.def.type === "array") return "json";
  return "string";
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The longest --idle-timeout: a day (a kept browser is for chaining commands, not for ever). */
const MAX_IDLE_MS = 24 * 3_600_000;

/** A duration option: milliseconds, or a number with s, m or h. */
export function duration(flag: string, text: string): number {
  const found = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[found?.[2] ?? "ms"]!;
  const ms = found ? Math.round(Number(found[1]) * unit) : Number.NaN;
  if (!(ms > 0) || ms > MAX_IDLE_MS)
    throw new UsageError(
      `--${flag} takes a duration from 1 ms to 24h: milliseconds, or a number with s, m or h (90s, 10m); got ${JSON.stringify(text)}.`,
    );
  return ms;
}

/** A JSON option: inline JSON, or @file / a path to a .json file. */
function jsonValue(flag: string, text: string): unknown {
  const path = text.startsWith("@") ? text.slice(1) : /\.json$/i.test(text) ? text : undefined;
  const source = path ? readFileSync(path, "utf8") : text;
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError(`--${flag} must be JSON or a .json file: ${(error as Error).message}`);
  }
}

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const [command = "help", ...rest] = argv;
  const tool = toolNamed(command);
  const common: CommonOptions = { headed: false, json: false, keepOpen: false };
  const input: Record<string, unknown> = {};
  const positionals: string[] = [];
  const shape = (tool?.input.shape ?? {}) as Record<string, z.ZodType>;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const [flag, inline] = arg.replace(/^--?/, "").split(/=(.*)/s, 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined) throw new UsageError(`--${flag} needs a value.`);
      return v;
    };
    switch (flag) {
      case "model":
        common.model = value();
        continue;
      case "base-url":
        common.baseUrl = value();
        continue;
      case "headed":
        common.headed = true;
        continue;
      case "remote":
        common.remote = value();
        continue;
      case "json":
        common.json = true;
        continue;
      case "keep-open":
        common.keepOpen = true;
        continue;
      case "idle-timeout":
        common.idleTimeout = duration(flag, value());
        continue;
      case "o":
      case "output":
        common.output = value();
        continue;
      case "from-report":
        if (command !== "export") throw new UsageError("--from-report is an option of deckhand export.");
        common.fromReport = value();
        continue;
      case "allow-file-urls":
        if (command !== "mcp")
          throw new UsageError(
            "--allow-file-urls is an option of deckhand mcp (the other commands open local files already).",
          );
        common.allowFileUrls = true;
        continue;
      case "timeout": {
        const ms = Number(value());
        if (!Number.isInteger(ms) || ms <= 0)
          throw new UsageError("--timeout takes a positive number of milliseconds.");
        common.timeout = ms;
        continue;
      }
    }
    const key = camel(flag);
    const field = shape[key];
    if (!field)
      throw new UsageError(
        `Unknown option --${flag}${tool ? ` for ${command}` : ""}. Try deckhand help ${command}.`,
      );
    const kind = fieldKind(field);
    if (kind === "boolean") input[key] = inline === undefined ? true : inline !== "false";
    else if (kind === "number") input[key] = Number(value());
    else if (kind === "json") input[key] = jsonValue(flag, value());
    else input[key] = value();
  }

  let url: string | undefined;
  if (tool?.onPage && positionals.length > 0) {
    url = asUrl(positionals[0]!);
    if (url) positionals.shift();
  }
  if (tool) {
    const names = tool.positional;
    if (positionals.length > names.length)
      throw new UsageError(
        `${command} takes ${names.length ? names.join(", ") : "no arguments"}; got ${positionals.length}.`,
      );
    positionals.forEach((p, i) => {
      const name = names[i]!;
      input[name] = fieldKind(shape[name]!) === "number" ? Number(p) : p;
    });
  }
  // %name% variables from the environment: DECKHAND_VAR_email=... (never on the command line,
  // where other users of the machine can read them).
  if (tool && "variables" in shape) {
    const fromEnv = Object.fromEntries(
      Object.entries(env)
        .filter(([k, v]) => k.startsWith("DECKHAND_VAR_") && v !== undefined)
        .map(([k, v]) => [k.slice("DECKHAND_VAR_".length), v!]),
    );
    if (Object.keys(fromEnv).length) input.variables = { ...fromEnv, ...(input.variables as object) };
  }
  return { command, tool, url, input, common };
}

/** The usage text: generated from the tool definitions. */
export function usage(command?: string): string {
  const tool = command ? toolNamed(command) : undefined;
  if (tool) {
    const shape = tool.input.shape as Record<string, z.ZodType>;
    const args = [tool.onPage ? "[url]" : "", ...tool.positional.map((p) => `<${p}>`)]
      .filter(Boolean)
      .join(" ");
    const options = Object.entries(shape)
      .filter(([k]) => !tool.positional.includes(k))
      .map(
        ([k, s]) => `  --${kebab(k)}${fieldKind(s) === "boolean" ? "" : " <value>"}  ${s.description ?? ""}`,
      );
    return [
      `deckhand ${tool.name} ${args}`,
      "",
      tool.description,
      ...(tool.onPage ? ["", "With a URL first, it opens it in the current tab, then runs."] : []),
      ...(options.length ? ["", "Options:", ...options] : []),
      "",
      "Common options:",
      ...COMMON.map((c) => `  ${c.flag}${c.value ? ` <${c.value}>` : ""}  ${c.means}`),
    ].join("\n");
  }
  return [
    "deckhand: drive Chromium from a terminal, with or without a model.",
    "",
    "Usage: deckhand <command> [url] [arguments] [options]",
    "",
    "Commands:",
    ...TOOLS.map((t) => `  ${t.name.padEnd(11)} ${t.title}`),
    `  ${"mcp".padEnd(11)} Serve these tools to an AI assistant over MCP (stdio); http, https, data: and`,
    `  ${"".padEnd(11)} about:blank only, unless --allow-file-urls lets navigate open file: URLs too`,
    `  ${"close".padEnd(11)} End the browser or session kept by --keep-open`,
    `  ${"help".padEnd(11)} This text, or help <command>`,
    "",
    "Examples:",
    '  deckhand act https://example.com "click the More information link"',
    '  deckhand extract page.html "the product names" --schema schema.json',
    "  deckhand text https://example.com --max-tokens 2000",
    "  deckhand screenshot https://example.com -o page.png",
    '  deckhand agent https://example.com "find the contact page and read its email address" --model openai/gpt-4.1-mini',
    "",
    "Common options:",
    ...COMMON.map((c) => `  ${c.flag}${c.value ? ` <${c.value}>` : ""}  ${c.means}`),
    "",
    "Variables: DECKHAND_VAR_<name>=value in the environment fills %name% in an instruction.",
    "Exit codes: 0 done, 1 not done, 2 usage, 3 needs a model, 4 browser or page, 5 timeout, 6 service, 70 other.",
  ].join("\n");
}
