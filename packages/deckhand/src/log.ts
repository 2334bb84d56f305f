// Logging for the whole library. Every line passes through one redactor first, so that no API key
// or variable value can reach a log backend, whoever wrote the call site.

import pino from "pino";
import type { Logger, LogLine } from "./types.ts";

const SECRET_KEY = /(^|[-_])(api[-_]?key|apikey|password|passwd|secret|token|authorization|cookie)$/i;
const REDACTED = "[redacted]";

/**
 * Knows the secret values of one client (API keys, variable values) and removes them from any
 * text or value. Structural redaction also blanks fields whose names look secret (apiKey, password, ...).
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;

  /** Registers a value that must never be shown. Empty values are ignored. */
  add(secret: unknown): void {
    if (secret === undefined || secret === null) return;
    const text = String(secret);
    if (text.length === 0 || this.secrets.has(text)) return;
    this.secrets.add(text);
    // Longest first, so that a secret containing another is removed whole.
    const alternatives = [...this.secrets]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.pattern = new RegExp(alternatives.join("|"), "g");
  }

  get size(): number {
    return this.secrets.size;
  }

  /** The text with every registered secret replaced by `[redacted]`. */
  redact(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, REDACTED);
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
  redactor?: SecretRedactor;
}

type Severity = "error" | "warn" | "info" | "debug";

/**
 * Lines at or below `verbose` are delivered. With a `logger`, the caller's function is the backend;
 * otherwise pino writes JSON lines to stderr, unless `disablePino` is set.
 */
export class DeckhandLog {
  readonly verbose: 0 | 1 | 2;
  readonly redactor: SecretRedactor;
  private readonly sink: Logger | undefined;
  private readonly pinoLogger: pino.Logger | undefined;

  constructor(options: LogOptions = {}) {
    this.verbose = options.verbose ?? 1;
    this.redactor = options.redactor ?? new SecretRedactor();
    this.sink = options.logger;
    if (!this.sink && !options.disablePino) {
      this.pinoLogger = pino({ level: "debug", base: null }, pino.destination({ dest: 2, sync: true }));
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
    return level <= this.verbose && (this.sink !== undefined || this.pinoLogger !== undefined);
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
    this.pinoLogger?.[severity]({ category: line.category, auxiliary: line.auxiliary }, line.message);
  }
}
