// Logging for the whole library. Every line passes through one redactor first, so that no API key
// or variable value can reach a log backend, whoever wrote the call site.

import pino from "pino";
import type { Logger, LogLine } from "./types.ts";

const SECRET_KEY = /(^|[-_])(api[-_]?key|apikey|password|passwd|secret|token|authorization|cookie)$/i;
const REDACTED = "[redacted]";

/**
 * The rule for finding secrets in text, so that nothing leaks and nothing is garbled (the service
 * follows the same one): a value of MIN_SUBSTRING_SECRET characters or more is masked wherever it
 * appears; a shorter one only where it stands as a word of its own (not inside a longer word or
 * number: "u" is not masked in "Submit"); one shorter than MIN_TEXT_SECRET is not looked for in
 * text at all, since no text could hide it: masking "0" would turn "127.0.0.1" into holes that
 * garble it and tell the value by elimination. Such a value stays hidden where it stands as what
 * was typed into a field (the outline shows the field as `%name%`).
 */
export const MIN_SUBSTRING_SECRET = 8;
export const MIN_TEXT_SECRET = 3;

/**
 * Knows the secret values of one client (API keys, variable values) and removes them from any
 * text or value: `redact` for logs and errors (`[redacted]`), `mask` for what a model or a record
 * of the page sees (a variable's value becomes its `%name%`). Structural redaction also blanks
 * fields whose names look secret (apiKey, password, ...).
 */
export class SecretRedactor {
  /** Secret value -> the variable it belongs to (undefined for keys and passwords). */
  private readonly secrets = new Map<string, string | undefined>();
  private pattern: RegExp | undefined;

  /**
   * Registers a value that must never be shown; `variable` names the `%name%` variable it is the
   * value of. Values under MIN_TEXT_SECRET characters are not looked for in text.
   */
  add(secret: unknown, variable?: string): void {
    if (secret === undefined || secret === null) return;
    const text = String(secret);
    if (text.trim().length < MIN_TEXT_SECRET) return;
    if (this.secrets.has(text) && (this.secrets.get(text) !== undefined || variable === undefined)) return;
    this.secrets.set(text, variable);
    // Longest first, so that a secret containing another is removed whole.
    const alternatives = [...this.secrets.keys()]
      .sort((a, b) => b.length - a.length)
      .map((s) => {
        const escaped = s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        return s.length < MIN_SUBSTRING_SECRET
          ? `(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`
          : escaped;
      });
    this.pattern = new RegExp(alternatives.join("|"), "gu");
  }

  get size(): number {
    return this.secrets.size;
  }

  /** The text with every registered secret replaced by `[redacted]` (see MIN_SUBSTRING_SECRET for the rule). */
  redact(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, REDACTED);
  }

  /** The text with each variable's value replaced by its `%name%`, other secrets by `[redacted]`. */
  mask(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, (found) => {
      const variable = this.secrets.get(found);
      return variable === undefined ? REDACTED : `%${variable}%`;
    });
  }

  /** A deep copy of `value` with every string masked (see mask). */
  maskValue<T>(value: T, depth = 0): T {
    if (typeof value === "string") return this.mask(value) as T;
    if (value === null || typeof value !== "object" || depth > 32) return value;
    if (Array.isArray(value)) return value.map((v) => this.maskValue(v, depth + 1)) as T;
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = this.maskValue(v, depth + 1);
    return out as T;
  }

  /** A deep copy of `value` with secrets removed from strings and secret-named fields blanked. */
  redactValue<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.redact(value);
    if (value === null || typeof value !== "object" || depth > 20) return value;
    if (value instanceof Uint8Array) return value;
    if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1));
    if (value instanceof Error) return this.redact(value.message);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      out[key] =
        SECRET_KEY.test(key) && v !== undefined && v !== null && v !== ""
          ? REDACTED
          : this.walk(v, depth + 1);
    }
    return out;
  }
}

type AuxValue = NonNullable<LogLine["auxiliary"]>[string];

function toAuxiliary(values: Record<string, unknown>): LogLine["auxiliary"] {
  const out: Record<string, AuxValue> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    if (typeof value === "string") out[key] = { value, type: "string" };
    else if (typeof value === "boolean") out[key] = { value: String(value), type: "boolean" };
    else if (typeof value === "number")
      out[key] = { value: String(value), type: Number.isInteger(value) ? "integer" : "float" };
    else out[key] = { value: safeJson(value), type: "object" };
  }
  return out;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export interface LogOptions {
  verbose?: 0 | 1 | 2;
  logger?: Logger;
  disablePino?: boolean;
  /** The default logger's format (see DeckhandOptions.logFormat); DECKHAND_LOG_FORMAT when unset. */
  format?: "auto" | "pretty" | "json";
  redactor?: SecretRedactor;
}

const LEVEL_NAMES: Record<Severity, string> = {
  error: "ERROR",
  warn: "WARN ",
  info: "INFO ",
  debug: "DEBUG",
};
const LEVEL_COLORS: Record<Severity, string> = { error: "31", warn: "33", info: "36", debug: "90" };

/** An auxiliary value as it reads in a line: plain when it can be, quoted when it has spaces. */
function auxText(value: AuxValue): string {
  const text = value.value.length > 160 ? `${value.value.slice(0, 157)}...` : value.value;
  return value.type === "string" && /[\s"=]/.test(text) ? JSON.stringify(text) : text;
}

/**
 * One log line as a person reads it: time, level, category, message, and the auxiliary fields as
 * key=value. With `color`, the level and the details are tinted (ANSI) for a terminal.
 */
export function formatLogLine(line: LogLine, severity: Severity, color = false): string {
  const time = line.timestamp.slice(11, 23);
  const tint = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const aux = Object.entries(line.auxiliary ?? {})
    .map(([key, value]) => `${key}=${auxText(value)}`)
    .join(" ");
  return `${tint("90", time)} ${tint(LEVEL_COLORS[severity], LEVEL_NAMES[severity])} ${tint("1", `[${line.category}]`)} ${line.message}${aux ? `  ${tint("90", aux)}` : ""}`;
}

function resolveFormat(format: LogOptions["format"]): "pretty" | "json" {
  const wanted = format ?? (process.env.DECKHAND_LOG_FORMAT as LogOptions["format"] | undefined) ?? "auto";
  if (wanted === "pretty" || wanted === "json") return wanted;
  return process.stderr.isTTY ? "pretty" : "json";
}

export type Severity = "error" | "warn" | "info" | "debug";

/**
 * Lines at or below `verbose` are delivered. With a `logger`, the caller's function is the backend;
 * otherwise pino writes JSON lines to stderr, unless `disablePino` is set.
 */
export class DeckhandLog {
  readonly verbose: 0 | 1 | 2;
  readonly redactor: SecretRedactor;
  private readonly sink: Logger | undefined;
  private readonly pinoLogger: pino.Logger | undefined;
  /** Readable lines to stderr (the default logger on a terminal, or when asked). */
  private readonly pretty: { color: boolean } | undefined;

  constructor(options: LogOptions = {}) {
    this.verbose = options.verbose ?? 1;
    this.redactor = options.redactor ?? new SecretRedactor();
    this.sink = options.logger;
    if (!this.sink && !options.disablePino) {
      if (resolveFormat(options.format) === "pretty") this.pretty = { color: process.stderr.isTTY === true };
      else this.pinoLogger = pino({ level: "debug", base: null }, pino.destination({ dest: 2, sync: true }));
    }
  }

  error(category: string, message: string, auxiliary?: Record<string, unknown>): void {
    this.emit(0, "error", category, message, auxiliary);
  }

  warn(category: string, message: string, auxiliary?: Record<string, unknown>): void {
    this.emit(0, "warn", category, message, auxiliary);
  }

  info(category: string, message: string, auxiliary?: Record<string, unknown>): void {
    this.emit(1, "info", category, message, auxiliary);
  }

  debug(category: string, message: string, auxiliary?: Record<string, unknown>): void {
    this.emit(2, "debug", category, message, auxiliary);
  }

  /** Whether a line of this level would be delivered (skip building expensive messages otherwise). */
  enabled(level: 0 | 1 | 2): boolean {
    return (
      level <= this.verbose &&
      (this.sink !== undefined || this.pinoLogger !== undefined || this.pretty !== undefined)
    );
  }

  private emit(
    level: 0 | 1 | 2,
    severity: Severity,
    category: string,
    message: string,
    auxiliary: Record<string, unknown> | undefined,
  ): void {
    if (!this.enabled(level)) return;
    const line: LogLine = {
      category,
      message: this.redactor.redact(message),
      level,
      timestamp: new Date().toISOString(),
    };
    if (auxiliary) line.auxiliary = toAuxiliary(this.redactor.redactValue(auxiliary));
    if (this.sink) {
      try {
        this.sink(line);
      } catch {
        // A faulty user logger must not break the operation that logged.
      }
      return;
    }
    if (this.pretty) {
      process.stderr.write(`${formatLogLine(line, severity, this.pretty.color)}\n`);
      return;
    }
    this.pinoLogger?.[severity]({ category: line.category, auxiliary: line.auxiliary }, line.message);
  }
}
