// The action cache: a successful act is stored under instruction + URL + variable names, and a
// later identical act replays it without the model once each stored element is checked to still
// be there and still be what it was (role and name).
//
// Where entries live is a store: `cacheDir` gives the file store below (one JSON file per entry,
// written atomically); `actionCache` takes any object with `get` and `put` (a Redis hash, a
// database table: the Deckhand service keeps its entries in its own database this way). Whatever
// the store returns is checked here before a replay reads it, so a damaged or foreign entry is a
// warning and a miss, never a crash half-way through a replay; a store that throws is the same.

import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeckhandLog } from "../log.ts";
import type { RecordedStep, Variables } from "../types.ts";

/**
 * A cached step is the recorded step (types.ts), the same record the agent replay, the replay
 * endpoint and the script exports read: the cache cannot drift from them.
 */
export type CachedStep = RecordedStep;

export interface CacheEntry {
  version: 1;
  instruction: string;
  url: string;
  /** Names of the act's variables (never their values). */
  variables: string[];
  steps: CachedStep[];
  updatedAt: string;
}

/**
 * Where the action cache keeps its entries (the `actionCache` option). Keys are 40 hex digits;
 * an entry is plain JSON data. `get` answers undefined for a key it does not have. Errors thrown
 * by either method are logged as warnings and the act goes on without the cache.
 */
export interface ActionCacheStore {
  get(key: string): Promise<unknown>;
  put(key: string, entry: CacheEntry): Promise<void>;
  /** Names the store in log lines (e.g. the directory). */
  readonly label?: string;
}

/** The `cacheDir` store: `act-<key>.json` files in a directory, each written atomically. */
export class FileActionCacheStore implements ActionCacheStore {
  readonly dir: string;
  readonly label: string;

  constructor(dir: string) {
    this.dir = dir;
    this.label = dir;
  }

  /** The file of an entry. */
  file(key: string): string {
    return join(this.dir, `act-${key}.json`);
  }

  async get(key: string): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(this.file(key), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.file(key)} is not JSON: ${(error as Error).message}`);
    }
  }

  async put(key: string, entry: CacheEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `.tmp-${randomUUID()}`);
    await writeFile(tmp, `${JSON.stringify(entry, null, 2)}\n`);
    await rename(tmp, this.file(key));
  }
}

function isCachedStep(step: unknown): step is CachedStep {
  if (typeof step !== "object" || step === null) return false;
  const s = step as Record<string, unknown>;
  return (
    ["selector", "method", "description", "role", "name"].every((k) => typeof s[k] === "string") &&
    Array.isArray(s.arguments) &&
    s.arguments.every((a) => typeof a === "string")
  );
}

/** Checks every field a replay reads; throws with the reason when the entry cannot be used. */
function checkEntry(value: unknown): CacheEntry {
  const entry = value as CacheEntry | null;
  if (typeof entry !== "object" || entry === null) throw new Error("it is not an object");
  if (entry.version !== 1) throw new Error(`unknown version ${JSON.stringify(entry.version)}`);
  if (!Array.isArray(entry.steps) || entry.steps.length === 0) throw new Error("it has no steps");
  const bad = entry.steps.findIndex((s) => !isCachedStep(s));
  if (bad >= 0) throw new Error(`step ${bad + 1} is not a valid step`);
  return entry;
}

export class ActionCache {
  readonly store: ActionCacheStore;
  private readonly log: DeckhandLog;

  constructor(store: ActionCacheStore | string, log: DeckhandLog) {
    this.store = typeof store === "string" ? new FileActionCacheStore(store) : store;
    this.log = log;
  }

  key(instruction: string, url: string, variables: Variables | undefined): string {
    const names = Object.keys(variables ?? {}).sort();
    return createHash("sha256")
      .update(JSON.stringify([instruction.trim(), url, names]))
      .digest("hex")
      .slice(0, 40);
  }

  /** An entry, as log lines name it: its file, or its key in the store. */
  private where(key: string): string {
    return this.store instanceof FileActionCacheStore
      ? this.store.file(key)
      : `${key}${this.store.label ? ` in ${this.store.label}` : ""}`;
  }

  /** Logs that an entry read fine but cannot be used (a step this version cannot replay). */
  reject(key: string, reason: string): void {
    this.log.warn("cache", `ignoring the cache entry ${this.where(key)}: ${reason}`);
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    let value: unknown;
    try {
      value = await this.store.get(key);
    } catch (error) {
      this.log.warn(
        "cache",
        `could not read the cache entry ${this.where(key)}: ${(error as Error).message}`,
      );
      return undefined;
    }
    if (value === undefined || value === null) return undefined;
    try {
      return checkEntry(value);
    } catch (error) {
      this.log.warn(
        "cache",
        `ignoring the unreadable cache entry ${this.where(key)}: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  async put(key: string, entry: Omit<CacheEntry, "version" | "updatedAt">): Promise<void> {
    const full: CacheEntry = { version: 1, ...entry, updatedAt: new Date().toISOString() };
    try {
      await this.store.put(key, full);
    } catch (error) {
      this.log.warn(
        "cache",
        `could not write the cache entry ${this.where(key)}: ${(error as Error).message}`,
      );
    }
  }
}
