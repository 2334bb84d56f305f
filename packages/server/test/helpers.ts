// Shared by the HTTP tests: a service on 127.0.0.1 with its own SQLite store in a temp directory,
// a key to call it with, and every log line it wrote.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type pino from "pino";
import { type AppOptions, createApp } from "../src/app.ts";
import { createLogger } from "../src/logger.ts";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import type { CreatedKey, SessionRecord, Store } from "../src/store/store.ts";

export interface TestService {
  url: string;
  store: Store;
  key: CreatedKey;
  /** Every log line so far, parsed. */
  logs(): Record<string, unknown>[];
  /** Every log line so far, as written. */
  logText(): string;
  /** A session of `key`'s project, created straight in the store. */
  session(): Promise<SessionRecord>;
  /** fetch against the service with the key (unless headers say otherwise). */
  call(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

export async function startService(options: Omit<AppOptions, "store" | "logger"> = {}): Promise<TestService> {
  const dir = mkdtempSync(path.join(tmpdir(), "deckhand-service-"));
  const store = new SqliteStore(dir);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: "debug", destination: sink as unknown as pino.DestinationStream });
  const app = await createApp({ shutdownGraceMs: 200, ...options, store, logger });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const key = await store.createKey({ name: "test" });

  return {
    url,
    store,
    key,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    logText: () => lines.join("\n"),
    session: () => store.createSession({ projectId: key.projectId, keyId: key.id }),
    call: (pathname, init = {}) => {
      const { json, headers, ...rest } = init;
      const merged = new Headers(headers);
      if (!merged.has("x-platform-api-key")) merged.set("x-platform-api-key", key.key);
      if (json !== undefined) merged.set("content-type", "application/json");
      return fetch(`${url}${pathname}`, {
        ...rest,
        headers: merged,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
    close: async () => {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A header-less call (no API key), for auth tests. */
export function anonymous(service: TestService, pathname: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${service.url}${pathname}`, init);
}
