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
//
// A deadline also keeps the operation's call log: every wait and retry under it (or under any of
// its steps) writes a line ("waiting for locator(...)", "<div id=consent> intercepts pointer
// events - retrying", "waiting for navigation to ..."), so that a failure explains every attempt,
// not only the last. The log is bounded (lines and characters; a line repeated at once is folded as
// "x N") and each line is masked as it is written (the facade passes its redactor's mask: typed
// `variables` values and keys never reach it). ServiceTimeoutError, ServiceClickError and
// ServiceElementNotFoundError messages end with it (explain()).
//
// Where deadlines start, and where a layer takes a shorter limit of its own. Nothing else calls
// Deadline.start, or gives child() or limited() a limit; test/client/deadline.test.ts
// checks this list against the source (one line per call site: kind, file, what).
// - start deckhand.ts: underDeadline, every operation of the facade (the caller's timeout and signal)
// - start deckhand.ts: agent().execute() with stream (its deadline outlives the call)
// - start browser/locator-resolve.ts: begin, the public Locator API for a caller that passed no deadline
// - start browser/navigation.ts: navigationDeadline, the public goto/reload/... for a caller that passed no deadline
// - start snapshot/snapshot.ts: takeSnapshot, the public API, for a caller that passed no deadline
// - start agent/cua/run.ts: runComputerUse for a caller that passed no deadline (its own tests)
// - start agent/tools.ts: step, each tool call of the DOM agent (`toolTimeout`, ended by the run's
//   deadline): an operation of its own, so that the call log its answer to the model ends with is
//   that call's, not the whole run's
// - limit ops/execute.ts: a step's action timeout (ACTION_TIMEOUT) for each locator wait of the step
// - limit ops/execute.ts: noteTypedText finds a field the typing replaced (500 ms)
// - limit ops/act-common.ts: whatIsAt, one try (0 ms) for the element a selector leads to now
// - limit ops/act-common.ts: whatIsAt, then up to 500 ms of the page's calm for it to come back
// - limit ops/act-model.ts: the element a model's selector leads to (500 ms)
// - limit snapshot/snapshot.ts: one try (0 ms) for the subtree `selector` names
// - limit snapshot/snapshot.ts: one try (0 ms) for each element an ignored selector names
// - limit browser/locator.ts: setChecked reads the box back (500 ms)
// - limit browser/navigation.ts: awaitInputNavigation, the wait for the navigation an input started
// - limit agent/cua/tabs.ts: follow, the wait for a tab an action opened to load (NEW_TAB_MS)
// - limit agent/cua/tabs.ts: waitForNewTab, the wait for a tab the page asked for to attach (NEW_TAB_MS)
// - limit agent/facts.ts: identityAt, what a recorded step's selector leads to now (300 ms after an
//   act, 1 s in a replay): an element that is not there at once is not the one recorded

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
  /**
   * Masks each call log line as it is written (the facade's redactor): secrets never reach the
   * log. Default: lines as written.
   */
  mask?: (text: string) => string;
  /**
   * The time limit bounds retries only (see limited()): running out does not abort the deadline,
   * the caller fails with its own explanation. For the public Locator API.
   */
  retriesOnly?: boolean;
}

/** How much of a call log is kept: lines (the first and the latest) and characters per line. */
export const CALL_LOG_LINES = 24;
export const CALL_LOG_LINE_CHARS = 240;
/** Lines kept from the start of a log that grew past CALL_LOG_LINES (the rest are the latest). */
const CALL_LOG_HEAD = 4;

const CALL_LOG_HEADING = "\nCall log:\n";

/**
 * An operation's call log: one line per wait or retry, bounded, with a line repeated at once folded
 * into one ("x N"), masked as it is written. Shared by a deadline and its steps.
 */
export class CallLog {
  private readonly entries: { text: string; count: number }[] = [];
  private left = 0;
  private readonly mask: (text: string) => string;

  constructor(mask: (text: string) => string = (text) => text) {
    this.mask = mask;
  }

  write(line: string): void {
    let text = this.mask(line.replace(/\s+/g, " ").trim());
    if (!text) return;
    if (text.length > CALL_LOG_LINE_CHARS) text = `${text.slice(0, CALL_LOG_LINE_CHARS - 1)}…`;
    const last = this.entries.at(-1);
    if (last?.text === text) {
      last.count++;
      return;
    }
    this.entries.push({ text, count: 1 });
    // The first lines say what was asked for, the latest why it failed: the middle goes.
    if (this.entries.length > CALL_LOG_LINES) {
      this.entries.splice(CALL_LOG_HEAD, 1);
      this.left++;
    }
  }

  lines(): string[] {
    const lines = this.entries.map((e) => (e.count > 1 ? `${e.text} x ${e.count}` : e.text));
    if (this.left > 0)
      lines.splice(CALL_LOG_HEAD, 0, `... ${this.left} more line${this.left === 1 ? "" : "s"} ...`);
    return lines;
  }
}

/** The text a message ends with for a call log: a heading and one indented line per entry. */
export function callLogText(lines: readonly string[]): string {
  return lines.length === 0 ? "" : `${CALL_LOG_HEADING}${lines.map((line) => `  - ${line}`).join("\n")}`;
}

/** A message and the call log it ends with, apart (the session page shows the log as a list). */
export function splitCallLog(message: string): { text: string; lines: string[] } {
  const at = message.indexOf(CALL_LOG_HEADING);
  if (at < 0) return { text: message, lines: [] };
  const lines = message
    .slice(at + CALL_LOG_HEADING.length)
    .split("\n")
    .map((line) => line.replace(/^ {2}- /, ""));
  return { text: message.slice(0, at), lines };
}

/** A message without the call log it ends with (for a result that states the failure in a sentence). */
export function withoutCallLog(message: string): string {
  return splitCallLog(message).text;
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
  /** Its own limit bounds retries and does not abort it (limited()). */
  private readonly retriesOnly: boolean;
  /** Date.now() time of its own limit (Infinity: none). */
  private readonly ownExpiresAt: number;
  /** The operation's call log, shared with every step of it. */
  readonly callLog: CallLog;

  /** A deadline for an operation the caller started: `timeout` and `signal` as the caller gave them. */
  static start(operation: string, options: DeadlineOptions = {}): Deadline {
    return new Deadline(
      operation,
      checkTimeout(options.timeout),
      options.signal,
      options.hint,
      undefined,
      options.retriesOnly === true,
      new CallLog(options.mask),
    );
  }

  private constructor(
    operation: string,
    timeoutMs: number | undefined,
    outer: AbortSignal | undefined,
    hint: string | undefined,
    parent: Deadline | undefined,
    retriesOnly: boolean,
    log: CallLog,
  ) {
    this.operation = operation;
    this.timeoutMs = timeoutMs;
    this.retriesOnly = retriesOnly;
    this.callLog = log;
    const own = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    const inherited = parent ? parent.expiresAt : Number.POSITIVE_INFINITY;
    this.ownExpiresAt = own;
    this.expiresAt = Math.min(own, inherited);
    const source = parent?.signal ?? outer;
    if (source?.aborted) {
      this.controller.abort(parent ? source.reason : cancelReason(source, operation));
      return;
    }
    // When the parent ends first, its own timer aborts it and that reaches this one: the error
    // then names the operation the caller started, not this step. A limit on retries only sets
    // no timer: whoever retries stops when timeLeft() is 0 and says what it waited for.
    if (timeoutMs !== undefined && own < inherited && !retriesOnly) {
      this.timer = setTimeout(() => {
        this.ownExpiry = true;
        this.controller.abort(this.explain(new ServiceTimeoutError(operation, timeoutMs, hint)));
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
    return new Deadline(operation, checkTimeout(timeoutMs), undefined, hint, this, false, this.callLog);
  }

  /**
   * A step of this deadline whose own limit (`timeoutMs`) bounds its retries: when it runs out,
   * timeLeft() is 0 and `expired` is true, but nothing is aborted, so the step can fail with its
   * own explanation (what it waited for, and why) instead of a bare timeout. This deadline's end
   * still aborts it at once. Only the layers in the list at the top of this file take one.
   */
  limited(operation: string, timeoutMs: number): Deadline {
    return new Deadline(operation, checkTimeout(timeoutMs), undefined, undefined, this, true, this.callLog);
  }

  /** Runs `fn` under limited(operation, timeoutMs), and disposes of that step afterwards. */
  async withLimit<T>(operation: string, timeoutMs: number, fn: (step: Deadline) => Promise<T>): Promise<T> {
    const step = this.limited(operation, timeoutMs);
    try {
      return await fn(step);
    } finally {
      step.dispose();
    }
  }

  /** Writes a line to the operation's call log (masked, bounded, repeats folded). */
  log(line: string): void {
    this.callLog.write(line);
  }

  /**
   * The error with the call log at the end of its message (and in `callLog`), once: for
   * ServiceTimeoutError, ServiceClickError and ServiceElementNotFoundError (and the XPath form of
   * not-found), whose message should say what was tried.
   */
  explain<E>(error: E): E {
    if (!(error instanceof ServiceError) || error.callLog !== undefined) return error;
    const lines = this.callLog.lines();
    if (lines.length === 0) return error;
    error.callLog = lines;
    error.message += callLogText(lines);
    return error;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /**
   * Whether its own time ran out (not a parent's, not a cancel): it aborted for it, or, for a
   * limit on retries (limited()), the limit has passed.
   */
  get expired(): boolean {
    return this.ownExpiry || (this.retriesOnly && !this.aborted && Date.now() >= this.ownExpiresAt);
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
