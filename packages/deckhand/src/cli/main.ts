// `deckhand`: the tools of tools/definitions.ts as terminal commands, and `deckhand mcp` to serve
// them to an AI assistant over MCP (stdio). What a command prints: on a terminal, what it did, its
// result, tokens, and progress lines on stderr while it works; otherwise (or with --json) one JSON
// object on stdout. The exit code tells kinds of failure apart (see EXIT).

import { readFileSync, writeFileSync } from "node:fs";
import {
  BrowserbaseSessionNotFoundError,
  InvalidAISDKModelFormatError,
  MissingEnvironmentVariableError,
  MissingLLMConfigurationError,
  ServiceApiError,
  ServiceBrowserClosedError,
  ServiceEnvironmentError,
  ServiceError,
  ServiceInitError,
  ServiceInvalidArgumentError,
  ServiceNavigationError,
  ServiceTimeoutError,
  UnsupportedModelError,
  withModelAdvice,
} from "../errors.ts";
import { exportScript, recordFromReport, type ScriptFormat } from "../export/script.ts";
import type { ToolResult } from "../tools/definitions.ts";
import type { LogLine } from "../types.ts";
import { type Parsed, parseArgs, UsageError, usage } from "./args.ts";
import { closeKept, openSession, ServiceUnreachableError } from "./session.ts";

/** Exit codes: one per kind of failure a script may want to tell apart. */
export const EXIT = {
  done: 0,
  notDone: 1,
  usage: 2,
  needsModel: 3,
  browser: 4,
  timeout: 5,
  service: 6,
  other: 70,
} as const;

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof ServiceInvalidArgumentError) return EXIT.usage;
  if (error instanceof ServiceEnvironmentError) return EXIT.usage;
  if (
    error instanceof MissingLLMConfigurationError ||
    error instanceof InvalidAISDKModelFormatError ||
    error instanceof UnsupportedModelError
  )
    return EXIT.needsModel;
  if (error instanceof ServiceTimeoutError) return EXIT.timeout;
  if (
    error instanceof ServiceUnreachableError ||
    error instanceof ServiceApiError ||
    error instanceof BrowserbaseSessionNotFoundError ||
    error instanceof MissingEnvironmentVariableError
  )
    return EXIT.service;
  if (
    error instanceof ServiceInitError ||
    error instanceof ServiceBrowserClosedError ||
    error instanceof ServiceNavigationError
  )
    return EXIT.browser;
  if (error instanceof ServiceError) return EXIT.notDone;
  return EXIT.other;
}

/**
 * What to do when a model (or its key, or its address) was missing, in the command's terms: its
 * flags and the provider's variable, not the library's options.
 */
function cliModelAdvice(error: MissingLLMConfigurationError): string {
  if (error.missing === "baseURL") return "Pass --base-url with the address of the model's server.";
  const variable = error.keyEnv
    ? error.keyEnv.split(", ")[0]
    : "the provider's key variable (OPENAI_API_KEY, ...)";
  return (
    `Set ${variable} in the environment (and --model provider/model for another model), or write an explicit ` +
    'instruction that names one element ("click the Sign in button").'
  );
}

/** The error's message, its advice in the command's terms. */
function messageOf(error: unknown): string {
  return withModelAdvice(error, cliModelAdvice);
}

/** What to do about an error, after its message. */
function adviceFor(code: number): string {
  switch (code) {
    case EXIT.usage:
      return "See deckhand help.";
    case EXIT.timeout:
      return "Try --timeout with a larger number of milliseconds.";
    case EXIT.service:
      return "Check --remote and PLATFORM_API_KEY.";
    default:
      return "";
  }
}

interface Printer {
  progress(message: string): void;
  result(parsed: Parsed, result: ToolResult, extra: Record<string, unknown>): void;
  error(command: string, error: unknown, code: number): void;
}

function printer(asJson: boolean): Printer {
  const tty = !asJson;
  const dim = (s: string) => (process.stderr.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
  return {
    progress(message) {
      if (tty) process.stderr.write(`${dim(`… ${message}`)}\n`);
    },
    result(parsed, result, extra) {
      if (asJson) {
        const { output } = result;
        const body =
          output.kind === "image"
            ? { file: extra.file, bytes: Buffer.from(output.base64, "base64").length }
            : (output.data ?? output.text);
        process.stdout.write(
          `${JSON.stringify({ ok: result.ok, command: parsed.command, result: body, ...extra })}\n`,
        );
        return;
      }
      const mark = result.ok ? "✔" : "✘";
      process.stdout.write(`${mark} ${parsed.command}${parsed.url ? ` ${parsed.url}` : ""}\n`);
      process.stdout.write(
        `${result.output.kind === "image" ? `${result.output.text} Saved to ${extra.file}.` : result.output.text}\n`,
      );
      const tokens = extra.tokens as { prompt: number; completion: number } | undefined;
      const spent =
        tokens && tokens.prompt + tokens.completion > 0
          ? `${tokens.prompt} prompt + ${tokens.completion} completion tokens`
          : "no model tokens";
      process.stdout.write(`${dim(`${spent} · ${extra.ms} ms`)}\n`);
    },
    error(command, error, code) {
      const message = messageOf(error);
      if (asJson) {
        const name = error instanceof Error ? error.name : "Error";
        process.stdout.write(
          `${JSON.stringify({ ok: false, command, error: { name, message }, exitCode: code })}\n`,
        );
        return;
      }
      const advice = adviceFor(code);
      process.stderr.write(`✘ ${command}: ${message}${advice ? `\n  ${advice}` : ""}\n`);
    },
  };
}

/** Log lines worth showing as progress on a terminal (what Deckhand is doing right now). */
function progressLogger(print: Printer): (line: LogLine) => void {
  return (line) => {
    if (line.level <= 1 && line.category !== "init") print.progress(`${line.category}: ${line.message}`);
  };
}

/**
 * A usage mistake: with JSON output, one JSON object on stdout like every other outcome (the
 * usage is in it); on a terminal, the message and the usage on stderr.
 */
function usageError(asJson: boolean, command: string, message: string, help: string): number {
  if (asJson) {
    process.stdout.write(
      `${JSON.stringify({ ok: false, command, error: { name: "UsageError", message, usage: help }, exitCode: EXIT.usage })}\n`,
    );
  } else {
    process.stderr.write(`${message}\n\n${help}\n`);
  }
  return EXIT.usage;
}

export async function main(argv: readonly string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    // The options could not be read: --json is looked for as it was written.
    const asJson = argv.includes("--json") || !process.stdout.isTTY;
    return usageError(asJson, argv[0] ?? "", (error as Error).message, usage(argv[0]));
  }
  const asJson = parsed.common.json || !process.stdout.isTTY;
  const print = printer(asJson);

  if (parsed.command === "help" || parsed.command === "--help" || parsed.command === "-h") {
    process.stdout.write(`${usage(argv[1])}\n`);
    return EXIT.done;
  }
  if (parsed.command === "close") {
    const ended = await closeKept();
    process.stdout.write(
      asJson
        ? `${JSON.stringify({ ok: true, command: "close", ended: ended ?? null })}\n`
        : `${ended ? `Ended the ${ended}.` : "Nothing was kept open."}\n`,
    );
    return EXIT.done;
  }
  if (parsed.command === "mcp") {
    const { serveStdio } = await import("./mcp-stdio.ts");
    await serveStdio(parsed.common, { allowFileUrls: parsed.common.allowFileUrls === true });
    return EXIT.done;
  }
  const tool = parsed.tool;
  if (!tool)
    return usageError(asJson, parsed.command, `Unknown command ${JSON.stringify(parsed.command)}.`, usage());
  const input = tool.input.safeParse(parsed.input);
  if (!input.success) {
    const issue = input.error.issues[0]!;
    return usageError(
      asJson,
      parsed.command,
      `${parsed.command}: ${issue.path.join(".") || "input"}: ${issue.message}`,
      usage(parsed.command),
    );
  }

  if (tool.name === "export" && parsed.common.fromReport)
    return exportReport(parsed, input.data as { format?: ScriptFormat; assertExtracts?: boolean }, print);

  const started = performance.now();
  let session: Awaited<ReturnType<typeof openSession>> | undefined;
  try {
    print.progress(
      parsed.common.remote ? `starting a session on ${parsed.common.remote}` : "starting the browser",
    );
    session = await openSession(parsed.common, asJson ? undefined : progressLogger(print));
    const { dh } = session;
    // %name% values from the environment are secrets in every command, not only the one that
    // types them: a later `text` of the same page shows %name%, not the value.
    for (const [key, value] of Object.entries(process.env))
      if (key.startsWith("DECKHAND_VAR_") && value) dh.redactor.add(value, key.slice("DECKHAND_VAR_".length));
    if (parsed.url) {
      print.progress(`opening ${parsed.url}`);
      await dh.page.goto(parsed.url);
    }
    print.progress(
      `${tool.name}${typeof parsed.input.instruction === "string" ? `: ${parsed.input.instruction}` : ""}`,
    );
    const result = await tool.run(dh, input.data);
    const metrics = await dh.metrics;
    const extra: Record<string, unknown> = {
      url: dh.page.url(),
      tokens: { prompt: metrics.totalPromptTokens, completion: metrics.totalCompletionTokens },
      ms: Math.round(performance.now() - started),
    };
    if (result.output.kind === "image") {
      const file = parsed.common.output ?? "screenshot.png";
      writeFileSync(file, Buffer.from(result.output.base64, "base64"));
      extra.file = file;
    }
    if (tool.name === "export" && parsed.common.output && result.output.kind === "text") {
      writeFileSync(parsed.common.output, result.output.text);
      extra.file = parsed.common.output;
    }
    if (parsed.common.keepOpen || session.reused) extra.keptOpen = true;
    print.result(parsed, result, extra);
    return result.ok ? EXIT.done : EXIT.notDone;
  } catch (error) {
    const code = exitCodeOf(error);
    print.error(parsed.command, error, code);
    return code;
  } finally {
    await session?.done().catch(() => undefined);
  }
}

/** `deckhand export --from-report file`: a saved LOCAL report's run as a script, with no browser. */
function exportReport(
  parsed: Parsed,
  input: { format?: ScriptFormat; assertExtracts?: boolean },
  print: Printer,
): number {
  const file = parsed.common.fromReport!;
  try {
    let html: string;
    try {
      html = readFileSync(file, "utf8");
    } catch (error) {
      throw new ServiceInvalidArgumentError(
        `--from-report: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}).`,
      );
    }
    const script = exportScript(recordFromReport(html, file), {
      ...(input.format ? { format: input.format } : {}),
      ...(input.assertExtracts ? { assertExtracts: true } : {}),
      recordedIn: `the report ${file}`,
    });
    const extra: Record<string, unknown> = { from: file };
    if (parsed.common.output) {
      writeFileSync(parsed.common.output, script);
      extra.file = parsed.common.output;
    }
    print.result(parsed, { ok: true, output: { kind: "text", text: script } }, extra);
    return EXIT.done;
  } catch (error) {
    const code = exitCodeOf(error);
    print.error(parsed.command, error, code);
    return code;
  }
}
