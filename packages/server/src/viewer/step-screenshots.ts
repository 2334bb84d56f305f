// The screenshot of every step: the viewport as a JPEG after each operation (and before it, for an
// act), kept with the session's replay record (Store.putScreenshot) for the session page.
//
// Cost: a capture takes the browser tens of milliseconds on a loaded machine (it waits for a
// compositor frame and encodes it), so none is on a client's critical path. The "after" one is
// taken once the client has its answer and before the next operation starts (OperationQueue's
// deferred work); the "before" one of an act is asked for as the act starts and runs beside its
// snapshot and model call. `npm run bench -- --only=viewer` measures what an operation pays.
//
// Variable values stay out of the pictures as they stay out of the record: the session's values
// (kept in memory only) are hidden on the page for the moment of the capture, in the fields that
// hold them (any length) and in its text (by the library's rule: 8 characters or more wherever
// they appear, 3 to 7 as a word of their own), then shown again. The live view and the debugger
// show the page as it is.

import { captureStepScreenshot, type Page } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import type { ScreenshotKind, Store } from "../store/store.ts";

export interface StepScreenshotOptions {
  /** Take them at all. Default true. */
  enabled?: boolean;
  /** JPEG quality, 1-100. Default 60. */
  quality?: number;
  /** Milliseconds a screenshot is kept; older ones are deleted (hourly). Default 7 days. */
  retentionMs?: number;
}

export const DEFAULT_SCREENSHOT_RETENTION_MS = 7 * 24 * 3600_000;
/** A capture that takes longer than this (a page stuck in a dialog, a hung renderer) is given up. */
const CAPTURE_TIMEOUT_MS = 3000;
const PRUNE_EVERY_MS = 3600_000;

export class StepScreenshots {
  readonly quality: number;
  readonly retentionMs: number;
  private readonly store: Store;
  private readonly log: FastifyBaseLogger;
  private pruner: NodeJS.Timeout | undefined;

  constructor(store: Store, log: FastifyBaseLogger, options: StepScreenshotOptions = {}) {
    const quality = options.quality ?? 60;
    if (!Number.isInteger(quality) || quality < 1 || quality > 100)
      throw new TypeError(`Screenshot quality must be a whole number from 1 to 100, got ${quality}.`);
    this.quality = quality;
    this.retentionMs = options.retentionMs ?? DEFAULT_SCREENSHOT_RETENTION_MS;
    this.store = store;
    this.log = log;
  }

  /**
   * The page's viewport as a JPEG, `secrets` (variable values) hidden, or null when it could not be
   * taken (closed page, timeout).
   */
  async capture(page: Page, secrets: readonly string[] = []): Promise<Buffer | null> {
    return captureStepScreenshot(page, {
      quality: this.quality,
      secrets,
      timeoutMs: CAPTURE_TIMEOUT_MS,
    });
  }

  /** Stores a capture for the action `seq` of the session (nothing when there is none). */
  async keep(sessionId: string, seq: number, kind: ScreenshotKind, jpeg: Buffer | null): Promise<void> {
    if (!jpeg) return;
    try {
      await this.store.putScreenshot(sessionId, seq, kind, jpeg);
    } catch (error) {
      this.log.warn({ sessionId, err: error }, "could not keep a step's screenshot");
    }
  }

  /** Deletes screenshots past the retention limit now and every hour until stop(). */
  startPruning(): void {
    const prune = async () => {
      try {
        const gone = await this.store.pruneScreenshots(Date.now() - this.retentionMs);
        if (gone > 0) this.log.info({ screenshots: gone }, "deleted screenshots past their retention");
      } catch (error) {
        this.log.warn({ err: error }, "deleting old screenshots failed");
      }
    };
    void prune();
    this.pruner = setInterval(() => void prune(), Math.min(PRUNE_EVERY_MS, this.retentionMs));
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
    this.pruner = undefined;
  }
}
