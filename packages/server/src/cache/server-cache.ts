// The server cache of act, extract and observe: an answer computed once with the model is served
// again, without the model, to the same project for the same question on the same page. Entries
// live in the store (so they survive restarts and are shared by the nodes of one database) under
// the API key's project: another project never reads them, whatever it asks.
//
// The key of an extract or observe entry is a hash of everything that shapes the answer: the
// method, the instruction, the extract schema, the page URL, the names of the variables (never
// their values), and the scoping options (selector, ignoreSelectors, screenshot); an extract key
// also holds a hash of what the extraction reads (the outline the model would see, and the
// screenshot), so that changed content under the same URL is a miss. act entries are
// the library's action cache entries, under its key (instruction, URL, variable names); see
// session-action-cache.ts.

import { createHash } from "node:crypto";
import type { Action, CacheEntry as ActionCacheEntry } from "deckhand";
import type { Store } from "../store/store.ts";

export interface CacheKeyParts {
  method: "extract" | "observe";
  instruction: string;
  url: string;
  schema?: unknown;
  /** A hash of the content the answer is computed from (extract: outline and screenshot). */
  content?: string;
  variableNames?: readonly string[];
  selector?: string;
  ignoreSelectors?: readonly string[];
  screenshot?: boolean;
}

export type CacheEntry =
  // An entry of the library's action cache (see session-action-cache.ts), under its own key.
  | { kind: "act"; entry: ActionCacheEntry }
  | { kind: "extract"; result: unknown }
  | { kind: "observe"; actions: Action[] };

/** JSON with object keys sorted, so that equal schemas give equal keys whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function cacheKey(parts: CacheKeyParts): string {
  const normalized = {
    v: 1,
    method: parts.method,
    instruction: parts.instruction,
    url: parts.url,
    schema: parts.schema,
    content: parts.content,
    variables: parts.variableNames ? [...parts.variableNames].sort() : undefined,
    selector: parts.selector,
    ignoreSelectors: parts.ignoreSelectors,
    screenshot: parts.screenshot || undefined,
  };
  return `${parts.method}:${createHash("sha256").update(canonicalJson(normalized)).digest("hex")}`;
}

/** Cache reads and writes of one project. A failing store never fails the operation: it is a miss. */
export class ProjectCache {
  private readonly store: Store;
  private readonly projectId: string;
  private readonly onError: (error: unknown) => void;

  constructor(store: Store, projectId: string, onError: (error: unknown) => void) {
    this.store = store;
    this.projectId = projectId;
    this.onError = onError;
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    try {
      const value = (await this.store.cacheGet(this.projectId, key)) as CacheEntry | undefined;
      return value && typeof value === "object" && "kind" in value ? value : undefined;
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  async put(key: string, entry: CacheEntry): Promise<void> {
    try {
      await this.store.cachePut(this.projectId, key, entry);
    } catch (error) {
      this.onError(error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.store.cacheDelete(this.projectId, key);
    } catch (error) {
      this.onError(error);
    }
  }
}
