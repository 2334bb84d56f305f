// The action cache (`cacheDir`): a successful act is stored under instruction + URL + variable
// names, and a later identical act replays it without the model once each stored element is
// checked to still be there and still be what it was (role and name). One JSON file per entry,
// written atomically; an unreadable entry is ignored with a warning.

import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeckhandLog } from "../log.ts";
import type { Variables } from "../types.ts";

export interface CachedStep {
  /** Absolute XPath of the element (or "" for a page-level action such as a key press). */
  selector: string;
  method: string;
  /** With `%name%` tokens, never values. */
  arguments: string[];
  description: string;
  /** What the element was when the step was recorded. */
  role: string;
  name: string;
}

export interface CacheEntry {
  version: 1;
  instruction: string;
  url: string;
  variables: string[];
  steps: CachedStep[];
  updatedAt: string;
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

export class ActionCache {
  readonly dir: string;
  private readonly log: DeckhandLog;

  constructor(dir: string, log: DeckhandLog) {
    this.dir = dir;
    this.log = log;
  }

  key(instruction: string, url: string, variables: Variables | undefined): string {
    const names = Object.keys(variables ?? {}).sort();
    return createHash("sha256")
      .update(JSON.stringify([instruction.trim(), url, names]))
      .digest("hex")
      .slice(0, 40);
  }

  private file(key: string): string {
    return join(this.dir, `act-${key}.json`);
  }

  /** Logs that an entry read fine but cannot be used (a step this version cannot replay). */
  reject(key: string, reason: string): void {
    this.log.warn("cache", `ignoring the cache entry ${this.file(key)}: ${reason}`);
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(key), "utf8");
    } catch {
      return undefined;
    }
    try {
      const entry = JSON.parse(text) as CacheEntry;
      if (entry?.version !== 1) throw new Error(`unknown version ${JSON.stringify(entry?.version)}`);
      if (!Array.isArray(entry.steps) || entry.steps.length === 0) throw new Error("it has no steps");
      // Every field a replay reads, checked here, so that a damaged file is a warning and never a
      // crash half-way through replaying it.
      const bad = entry.steps.findIndex((s) => !isCachedStep(s));
      if (bad >= 0) throw new Error(`step ${bad + 1} is not a valid step`);
      return entry;
    } catch (error) {
      this.log.warn(
        "cache",
        `ignoring the unreadable cache entry ${this.file(key)}: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  async put(key: string, entry: Omit<CacheEntry, "version" | "updatedAt">): Promise<void> {
    const full: CacheEntry = { version: 1, ...entry, updatedAt: new Date().toISOString() };
    try {
      await mkdir(this.dir, { recursive: true });
      const tmp = join(this.dir, `.tmp-${randomUUID()}`);
      await writeFile(tmp, `${JSON.stringify(full, null, 2)}\n`);
      await rename(tmp, this.file(key));
    } catch (error) {
      this.log.warn("cache", `could not write the cache entry in ${this.dir}: ${(error as Error).message}`);
    }
  }
}
