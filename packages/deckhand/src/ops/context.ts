// What every operation needs: the page, the model, logging, and its deadline.

import type { Page } from "../browser/page.ts";
import { ServiceCancelledError, ServiceTimeoutError } from "../errors.ts";
import type { ModelCaller } from "../llm/caller.ts";
import type { DeckhandLog, SecretRedactor } from "../log.ts";
import type { ModelConfiguration } from "../types.ts";

export interface OperationContext {
  page: Page;
  caller: ModelCaller;
  log: DeckhandLog;
  redactor: SecretRedactor;
  /** The per-call model, if any. */
  model: ModelConfiguration | undefined;
  domSettleTimeout: number;
  selfHeal: boolean;
  /** Aborted when the operation's deadline passes (or its caller gives up). */
  signal: AbortSignal;
  /** When the operation must be over (Date.now() milliseconds); undefined without a timeout. */
  deadline: number | undefined;
}

/**
 * Runs an operation under a deadline: at the deadline its signal aborts (stopping a model call in
 * flight) and the caller gets ServiceTimeoutError at once. Steps bound their own waits by the
 * deadline and check the signal before acting, so an abandoned operation does not act later.
 */
export async function withDeadline<T>(
  operation: string,
  timeoutMs: number | undefined,
  outer: AbortSignal | undefined,
  run: (signal: AbortSignal, deadline: number | undefined) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onOuterAbort = () =>
    controller.abort(outer?.reason ?? new ServiceCancelledError(`${operation} was cancelled.`));
  if (outer?.aborted) onOuterAbort();
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const expired = new Promise<never>((_, reject) => {
    if (timeoutMs === undefined) return;
    timer = setTimeout(() => {
      const error = new ServiceTimeoutError(operation, timeoutMs);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  const cancelled = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  try {
    return await Promise.race([run(controller.signal, deadline), expired, cancelled]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
    if (!controller.signal.aborted) controller.abort(new ServiceCancelledError(`${operation} finished.`));
  }
}

export function checkSignal(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}
