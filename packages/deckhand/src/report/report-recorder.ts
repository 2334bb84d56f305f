// The LOCAL report (`report: "./reports"`): every operation of the instance as a step (parameters
// with variable values redacted, result or error, times, tokens) with its screenshots, written as
// one self-contained HTML file (renderSessionReport, images embedded) that opens offline. A CI run
// that fails leaves it behind for whoever looks at the failure.

import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Page } from "../browser/page.ts";
import { CALL_LOG, type DeckhandMetrics } from "../types.ts";
import { type ReportStep, renderSessionReport, reportCsp } from "./session-report.ts";
import { captureStepScreenshot } from "./step-screenshot.ts";

export interface ReportRecorderOptions {
  /** The directory the report is written to (created if needed). */
  dir: string;
  /** The instance's metrics now (for each step's tokens). */
  metrics(): Promise<DeckhandMetrics>;
  /** Removes secrets from text (error messages). */
  redact(text: string): string;
}

function dataUrl(jpeg: Buffer | null): string | undefined {
  return jpeg ? `data:image/jpeg;base64,${jpeg.toString("base64")}` : undefined;
}

function asObject(value: unknown): Record<string, unknown> {
  if (value !== null && typeof value === "object" && !Array.isArray(value))
    return value as Record<string, unknown>;
  return Array.isArray(value) ? { actions: value } : { value };
}

export class ReportRecorder {
  private readonly options: ReportRecorderOptions;
  private readonly steps: ReportStep[] = [];
  private readonly secrets = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  private readonly startedAt = Date.now();
  /** The file written, once it was. */
  file: string | undefined;

  constructor(options: ReportRecorderOptions) {
    this.options = options;
  }

  /** Values to hide in the screenshots from now on (variable values). */
  addSecrets(values: readonly unknown[]): void {
    for (const value of values) if (String(value) !== "") this.secrets.add(String(value));
  }

  private capture(page: Page): Promise<Buffer | null> {
    return captureStepScreenshot(page, { secrets: [...this.secrets] });
  }

  /** Runs an operation and records it as a step, success or failure (which is thrown on). */
  async run<T>(
    method: string,
    page: Page,
    parameters: Record<string, unknown>,
    operation: () => Promise<T>,
  ): Promise<T> {
    const before = method === "act" ? await this.capture(page) : null;
    const metricsBefore = await this.options.metrics();
    const timestamp = Date.now();
    let result: Record<string, unknown>;
    let failure: unknown;
    let failed = false;
    let value: T | undefined;
    try {
      value = await operation();
      result = asObject(value);
      const callLog = (value as { [CALL_LOG]?: readonly string[] } | undefined)?.[CALL_LOG];
      if (callLog) result = { ...result, callLog };
    } catch (error) {
      failed = true;
      failure = error;
      const message = error instanceof Error ? error.message : String(error);
      result = { success: false, error: this.options.redact(message) };
    }
    const endTime = Date.now();
    const metricsAfter = await this.options.metrics().catch(() => metricsBefore);
    const after = page.isClosed() ? null : await this.capture(page);
    const tokens = (key: keyof DeckhandMetrics) => metricsAfter[key] - metricsBefore[key];
    const inputTokens = tokens("totalPromptTokens");
    const outputTokens = tokens("totalCompletionTokens");
    this.steps.push({
      method,
      pageUrl: page.isClosed() ? "about:blank" : page.url(),
      parameters,
      result,
      timestamp,
      endTime,
      ...(inputTokens > 0 || outputTokens > 0
        ? { tokenUsage: { inputTokens, outputTokens, timeMs: tokens("totalInferenceTimeMs") } }
        : {}),
      screenshots: {
        ...(before ? { before: dataUrl(before)! } : {}),
        ...(after ? { after: dataUrl(after)! } : {}),
      },
    });
    if (failed) throw failure;
    return value as T;
  }

  /** A navigation made through the page API (page.goto): a step with its screenshot after. */
  navigated(page: Page, parameters: Record<string, unknown>, result: Record<string, unknown>): void {
    const step: ReportStep = {
      method: "navigate",
      pageUrl: page.url(),
      parameters,
      result,
      timestamp: Date.now(),
    };
    this.steps.push(step);
    const shot = this.capture(page).then((jpeg) => {
      if (jpeg) step.screenshots = { after: dataUrl(jpeg)! };
    });
    this.pending.add(shot);
    void shot.finally(() => this.pending.delete(shot));
  }

  /** Writes the report (again, with every step so far); resolves to its path. */
  async write(title = "Deckhand run", record?: readonly unknown[]): Promise<string> {
    await Promise.all([...this.pending]);
    const html = renderSessionReport(
      {
        title,
        startedAt: this.startedAt,
        endedAt: Date.now(),
        steps: this.steps,
        ...(record ? { record } : {}),
      },
      { csp: reportCsp("data:") },
    );
    await mkdir(this.options.dir, { recursive: true });
    this.file ??= path.resolve(
      this.options.dir,
      `deckhand-report-${new Date(this.startedAt).toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}.html`,
    );
    await writeFile(this.file, html);
    return this.file;
  }
}
