// One object carries an operation's time limit, its cancellation and its cleanups through every
// layer (navigation, locator actions, settle, the operations themselves), so that no layer
// invents its own timeout arithmetic and nothing acts after its caller stopped waiting.
//
// A deadline aborts its `signal` when its own time runs out (with ServiceTimeoutError naming the
// operation), when the caller's signal aborts (with the caller's reason when it is a Deckhand
// error, else ServiceCancelledError), when its parent aborts (the parent's reason), or when
// someone calls abort() (a browser that went away aborts every operation with
// ServiceBrowserClosedError). A child deadline is one step of its parent: never later than the
// parent, and gone when the parent goes.

import {
  ServiceCancelledError,
  ServiceError,
  ServiceInvalidArgumentError,
  ServiceTimeoutError,
} from "./errors.ts";

/** The longest timer Node keeps (a longer one fires at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export interface DeadlineOptions {
  /** Milliseconds; unset: no time limit of its own. */
  timeout?: number;
  /** The caller's cancellation. */
  signal?: AbortSignal;
  /** What to do about a timeout, the end of the ServiceTimeoutError's message. */
  hint?: string;
}

/** Throws ServiceInvalidArgumentError unless `timeout` is a usable number of milliseconds. */
export function checkTimeout(timeout: unknown, option = "timeout"): number | undefined {
  if (timeout === undefined) return undefined;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0 || timeout > MAX_TIMEOUT_MS) {
    throw new ServiceInvalidArgumentError(
      `\`${option}\` must be a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(timeout)}.`,
    );
  }
  return timeout;
}

/** What a cancelled caller's signal means: its reason when that is a Deckhand error. */
export function cancelReason(signal: AbortSignal, operation: string): ServiceError {
  return signal.reason instanceof ServiceError
    ? signal.reason
    : new ServiceCancelledError(`${operation} was cancelled: its caller stopped waiting.`);
}

export class Deadline {
  readonly operation: string;
  /** This deadline's own limit (ms), if it has one. */
  readonly timeoutMs: number | undefined;
  private readonly controller = new AbortController();
  /** Date.now() time by which it aborts (its own limit or an ancestor's); Infinity: none. */
  private readonly expiresAt: number;
  private timer: NodeJS.Timeout | undefined;
  private ownExpiry = false;
  private readonly cleanups: (() => void)[] = [];
  private unlink: (() => void) | undefined;

  /** A deadline for an operation the caller started: `timeout` and `signal` as the caller gave them. */
  static start(operation: string, options: DeadlineOptions = {}): Deadline {
    return new Deadline(operation, checkTimeout(options.timeout), options.signal, options.hint, undefined);
  }

  /** A deadline with no time limit and no cancellation (for internal calls that need none). */
  static none(operation = "the operation"): Deadline {
    return new Deadline(operation, undefined, undefined, undefined, undefined);
  }

  private constructor(
    operation: string,
    timeoutMs: number | undefined,
    outer: AbortSignal | undefined,
    hint: string | undefined,
    parent: Deadline | undefined,
  ) {
    this.operation = operation;
    this.timeoutMs = timeoutMs;
    const own = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    const inherited = parent ? parent.expiresAt : Number.POSITIVE_INFINITY;
    this.expiresAt = Math.min(own, inherited);
    const source = parent?.signal ?? outer;
    if (source?.aborted) {
      this.controller.abort(parent ? source.reason : cancelReason(source, operation));
      return;
    }
    // When the parent ends first, its own timer aborts it and that reaches this one: the error
    // then names the operation the caller started, not this step.
    if (timeoutMs !== undefined && own < inherited) {
      this.timer = setTimeout(() => {
        this.ownExpiry = true;
        this.controller.abort(new ServiceTimeoutError(operation, timeoutMs, hint));
      }, timeoutMs);
    }
    if (source) {
      const onAbort = () => this.controller.abort(parent ? source.reason : cancelReason(source, operation));
      source.addEventListener("abort", onAbort, { once: true });
      this.unlink = () => source.removeEventListener("abort", onAbort);
    }
  }

  /** A step of this deadline: at most `timeoutMs` (when given), never past this one, aborted with it. */
  child(operation: string, timeoutMs?: number, hint?: string): Deadline {
    return new Deadline(operation, checkTimeout(timeoutMs), undefined, hint, this);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** Whether it aborted because its own time ran out (not a parent's, not a cancel). */
  get expired(): boolean {
    return this.ownExpiry;
  }

  /** Milliseconds left (Infinity without a limit, 0 once aborted). */
  timeLeft(): number {
    if (this.aborted) return 0;
    return Math.max(0, this.expiresAt - Date.now());
  }

  /** At most `ms`, and no more than the time left. */
  cap(ms: number): number {
    return Math.min(ms, this.timeLeft());
  }

  /** Throws the reason it aborted, if it did: call before anything that acts on the page. */
  check(): void {
    if (this.aborted) throw this.controller.signal.reason;
  }

  /** The promise's outcome, or the abort reason as soon as it aborts. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) {
      promise.catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }

  /** Waits `ms` (no longer than the time left); rejects with the reason when it aborts meanwhile. */
  sleep(ms: number): Promise<void> {
    const wait = Math.min(ms, this.timeLeft());
    return this.race(new Promise<void>((resolve) => setTimeout(resolve, wait)));
  }

  /** Runs `cleanup` when the deadline is disposed of. */
  defer(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  /** Aborts with `reason` (a browser that went away, a caller that gave up). */
  abort(reason: Error): void {
    if (!this.aborted) this.controller.abort(reason);
  }

  /**
   * Ends the deadline: its timer stops, it lets go of its parent or caller, its cleanups run, and
   * its signal aborts (ServiceCancelledError) so that nothing started under it goes on.
   */
  dispose(): void {
    clearTimeout(this.timer);
    this.unlink?.();
    this.unlink = undefined;
    for (const cleanup of this.cleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        // A cleanup that fails must not hide the operation's own outcome.
      }
    }
    this.abort(new ServiceCancelledError(`${this.operation} finished.`));
  }

  /** Runs `fn` under this deadline: its outcome or the abort reason, then dispose(). */
  async run<T>(fn: (deadline: Deadline) => Promise<T>): Promise<T> {
    try {
      this.check();
      return await this.race(fn(this));
    } finally {
      this.dispose();
    }
  }
}
