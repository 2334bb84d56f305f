// act through the server cache. The library's action cache does the work: on a repeated act it
// checks each stored step's element (the same role and name at the same XPath, one element at a
// time: no listing of the whole page) and replays it with real input events, or asks the model
// from where the page is when something changed. This class is that cache's store for one
// session: entries go to the project's server cache (the service's database), and only while an
// act that has the cache in play runs. Outside `during`, it has nothing and keeps nothing.
//
// HIT means what the client would expect: the act was done entirely from an entry, without the
// model. The library reads an entry and, when the replay fails, asks the model and writes the
// entry again; so a HIT is "an entry was found, nothing was written, and the act succeeded".

import type { CacheEntry as ActionCacheEntry, ActionCacheStore } from "deckhand";
import type { ProjectCache } from "./server-cache.ts";

export type CacheStatus = "HIT" | "MISS";

interface CacheCall {
  cache: ProjectCache;
  found: boolean;
  stored: boolean;
}

/** Server cache keys of act entries; the rest of the key is the library's hash. */
const PREFIX = "act:";

export class SessionActionCache implements ActionCacheStore {
  readonly label = "the server cache";
  private call: CacheCall | undefined;

  /**
   * Runs one act (or agent run: its stored runs are entries of this cache too) with the project's
   * cache in play and says whether it was served from it.
   */
  async during<T extends { success: boolean }>(
    cache: ProjectCache,
    act: () => Promise<T>,
  ): Promise<{ result: T; cacheStatus: CacheStatus }> {
    const call: CacheCall = { cache, found: false, stored: false };
    // A session's operations run one at a time, so one call at a time is in play.
    this.call = call;
    try {
      const result = await act();
      return { result, cacheStatus: call.found && !call.stored && result.success ? "HIT" : "MISS" };
    } finally {
      if (this.call === call) this.call = undefined;
    }
  }

  async get(key: string): Promise<unknown> {
    const call = this.call;
    if (!call) return undefined;
    const entry = await call.cache.get(PREFIX + key);
    if (entry?.kind !== "act") return undefined;
    call.found = true;
    return entry.entry;
  }

  async put(key: string, entry: ActionCacheEntry): Promise<void> {
    const call = this.call;
    if (!call) return;
    call.stored = true;
    await call.cache.put(PREFIX + key, { kind: "act", entry });
  }
}
