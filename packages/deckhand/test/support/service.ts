// The Deckhand service in-process, for the tests that run in REMOTE mode: the whole service
// (sessions, browser pool, CDP proxy, SQLite store in a temp directory) on 127.0.0.1, an API key to
// call it with, every log line it wrote, and a check that it left no Chrome behind.

import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, createService, openStore, type Service, type ServiceOptions } from "@deckhand/server";
import { liveChromeProcesses, waitForNoChrome } from "@deckhand/testkit";
import type { SessionReplay } from "deckhand";
import { QUIET_ARGS } from "./browser.ts";

/** A replay record as GET /v1/sessions/{id}/replay answers it (spec 2.3). */
export type Replay = SessionReplay;

export interface TestService {
  /** http://127.0.0.1:port, the `apiUrl` of a REMOTE client. */
  url: string;
  /** A key of one project, and one of another. */
  apiKey: string;
  otherApiKey: string;
  /** A key of a new project (with nothing in the server cache yet). */
  createKey(): Promise<string>;
  service: Service;
  /** Every line the service logged (level debug and up). */
  logText(): string;
  /** Everything the store has written to disk, as text (to search for what must not be there). */
  storedText(): Promise<string>;
  /** The session's replay record, read over HTTP with `apiKey`. */
  replay(sessionId: string): Promise<Replay>;
  /** The Chrome processes of this service still running. */
  chromes(): number[];
  /** Closes the service, its store and data directory; fails if a Chrome of it is left. */
  close(): Promise<void>;
}

export async function startTestService(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dir = await mkdtemp(join(tmpdir(), "deckhand-remote-test-"));
  const store = await openStore({ dataDir: dir });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // On the command line of every Chrome this service starts, so that a leak check finds exactly those.
  const marker = `--deckhand-remote-test=${randomBytes(6).toString("hex")}`;
  let service: Service | undefined;
  try {
    service = await createService({
      store,
      logger: createLogger({ level: "debug", destination: sink }),
      maxSessions: 20,
      shutdownGraceMs: 500,
      ...options,
      browsers: { lingerMs: 500, ...options.browsers, args: [...QUIET_ARGS, marker] },
    });
    await service.app.listen({ host: "127.0.0.1", port: 0 });
  } catch (error) {
    await service?.app.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const address = service.app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const [key, otherKey] = await Promise.all([
    store.createKey({ name: "test" }),
    store.createKey({ name: "another project" }),
  ]);
  const running = service;

  return {
    url,
    apiKey: key.key,
    otherApiKey: otherKey.key,
    createKey: async () => (await store.createKey({ name: "fresh project" })).key,
    storedText: async () => {
      // Every file the store wrote: the database, and the step screenshots in folders under it.
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      const files = entries
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name));
      const contents = await Promise.all(files.map((file) => readFile(file)));
      return contents.map((bytes) => bytes.toString("latin1")).join("\n");
    },
    service: running,
    logText: () => lines.join(""),
    replay: async (sessionId) => {
      const response = await fetch(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/replay`, {
        headers: { "x-platform-api-key": key.key },
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`replay answered ${response.status}: ${text}`);
      return (JSON.parse(text) as { data: Replay }).data;
    },
    chromes: () => liveChromeProcesses(marker).map((p) => p.pid),
    close: async () => {
      await running.app.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
      const left = await waitForNoChrome(marker);
      if (left.length > 0) throw new Error(`Chrome left running: ${left.map((p) => p.pid).join(", ")}`);
    },
  };
}
