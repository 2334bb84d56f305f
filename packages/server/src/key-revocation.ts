// Revoking a key takes effect on what that key holds open, not only on its next request: the CDP
// proxy sockets and event streams a key opened are closed within a second of its revocation,
// whichever process revoked it (`deckhand-server keys revoke` writes the database from a process
// of its own). While any key holds something open, the store is asked every `intervalMs` which of
// those keys are revoked: one indexed query, only for keys in use, and none when nothing is open.

import type { FastifyBaseLogger } from "fastify";
import type { Store } from "./store/store.ts";

/** How often the store is asked, in milliseconds: well within the second a revocation may take. */
export const REVOCATION_POLL_MS = 250;

export class RevocationWatch {
  private readonly store: Store;
  private readonly log: FastifyBaseLogger | undefined;
  private readonly intervalMs: number;
  private readonly held = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(store: Store, options: { log?: FastifyBaseLogger; intervalMs?: number } = {}) {
    this.store = store;
    this.log = options.log;
    this.intervalMs = options.intervalMs ?? REVOCATION_POLL_MS;
  }

  /** Calls `close` once `keyId` is revoked. Returns the function that stops watching it for this holder. */
  track(keyId: string, close: () => void): () => void {
    let closers = this.held.get(keyId);
    if (!closers) {
      closers = new Set();
      this.held.set(keyId, closers);
    }
    closers.add(close);
    this.start();
    return () => {
      const set = this.held.get(keyId);
      set?.delete(close);
      if (set?.size === 0) this.held.delete(keyId);
      if (this.held.size === 0) this.stop();
    };
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.held.size === 0) return;
    this.polling = true;
    try {
      const revoked = await this.store.revokedKeyIds([...this.held.keys()]);
      for (const keyId of revoked) {
        const closers = this.held.get(keyId);
        this.held.delete(keyId);
        if (!closers) continue;
        this.log?.info({ keyId, closed: closers.size }, "key revoked: closing what it held open");
        for (const close of closers) {
          try {
            close();
          } catch {
            // One closer failing must not keep the others open.
          }
        }
      }
      if (this.held.size === 0) this.stop();
    } catch (error) {
      this.log?.warn({ err: error }, "checking for revoked keys failed");
    } finally {
      this.polling = false;
    }
  }
}
