// A session's operations run one at a time, in the order they arrived: two clicks sent together
// must not interleave their snapshots and input events, and the token usage of one operation is
// then exactly the change of the session's metrics across it.

import { ServiceCancelledError } from "deckhand";

export class OperationQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** Resolves once every operation queued so far, and the work it deferred, is over. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Operations queued or running. */
  get length(): number {
    return this.waiting;
  }

  /**
   * Runs `task` after every operation queued before it. When `signal` aborts while the task still
   * waits its turn, the promise rejects at once and the task never starts; once started, the task
   * itself answers the signal.
   *
   * Work the task `defer`s runs once the task is over and its caller has its answer, before the
   * next operation starts (e.g. the screenshot after a step: the client does not wait for it, the
   * next step cannot change the page before it is taken). Its failures are its own.
   */
  run<T>(task: (defer: (work: () => Promise<void>) => void) => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.waiting++;
    const turn = this.tail;
    let started = false;
    const deferred: (() => Promise<void>)[] = [];
    const result = turn.then(() => {
      started = true;
      signal?.throwIfAborted();
      return task((work) => deferred.push(work));
    });
    const ignore = () => undefined;
    this.tail = result
      .then(ignore, ignore)
      .then(async () => {
        for (const work of deferred) await work().catch(ignore);
      })
      .then(() => this.waiting--);
    if (!signal) return result;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!started) reject(signal.reason ?? new ServiceCancelledError("The operation was cancelled."));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }
}
