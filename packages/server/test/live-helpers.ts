// Shared by the tests that drive real browsers: the whole service (session manager, browser pool,
// CDP proxy) on 127.0.0.1, two API keys of different projects, the fixture site, the scripted
// model, and a way to find every Chrome process this service started.

import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import {
  type FixtureServer,
  liveChromeProcesses,
  type ScriptedModel,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import type pino from "pino";
import { createLogger } from "../src/logger.ts";
import { createService, type Service, type ServiceOptions } from "../src/service.ts";
import type { CdpTarget } from "../src/sessions/live-session.ts";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import type { CreatedKey, Store } from "../src/store/store.ts";

/** Keeps Chromium off the (closed) network at start-up. */
export const QUIET_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run"];

/** The provider key tests send in x-model-api-key; the scripted model records what it receives. */
export const MODEL_KEY = "sk-test-model-key-0123456789";

export interface LiveService {
  url: string;
  store: Store;
  service: Service;
  /** A key of one project, and one of another. */
  key: CreatedKey;
  otherKey: CreatedKey;
  /** On the command line of every Chrome this service starts (for leak checks). */
  marker: string;
  /** Every log line so far. */
  logText(): string;
  call(pathname: string, init?: RequestInit & { json?: unknown; key?: string }): Promise<Response>;
  /** Starts a session; its id. */
  start(
    body?: Record<string, unknown>,
    init?: { key?: string; headers?: Record<string, string> },
  ): Promise<string>;
  /** POST /v1/sessions/{id}/{name}, answered as JSON. */
  op(
    id: string,
    name: string,
    body?: unknown,
    init?: { key?: string; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response>;
  /** The Chrome processes of this service still running. */
  chromes(): number[];
  /** Closes the service (and the store and data directory it made). */
  close(): Promise<void>;
}

export interface LiveServiceOptions extends Partial<Omit<ServiceOptions, "logger">> {
  /** Use these keys (a restarted service) instead of creating two. */
  keys?: { key: CreatedKey; otherKey: CreatedKey };
}

export async function startLiveService(options: LiveServiceOptions = {}): Promise<LiveService> {
  const ownStore = options.store === undefined;
  const dir = ownStore ? mkdtempSync(path.join(tmpdir(), "deckhand-live-")) : undefined;
  const store = options.store ?? new SqliteStore(dir!);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const marker = `--deckhand-test-run=${randomBytes(6).toString("hex")}`;
  const { keys, browsers, ...rest } = options;
  const service = await createService({
    shutdownGraceMs: 500,
    ...rest,
    store,
    logger: createLogger({ level: "debug", destination: sink as unknown as pino.DestinationStream }),
    // No warm browser unless the test asks for some: most tests count the pool's browsers and
    // Chrome processes exactly, and a spare Chromium in each of them would load the machine for
    // nothing. test/warm-browsers.test.ts covers them.
    browsers: {
      lingerMs: 500,
      warmBrowsers: 0,
      ...browsers,
      args: [...QUIET_ARGS, marker, ...(browsers?.args ?? [])],
    },
  });
  await service.app.listen({ host: "127.0.0.1", port: 0 });
  const address = service.app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const key = keys?.key ?? (await store.createKey({ name: "first" }));
  const otherKey = keys?.otherKey ?? (await store.createKey({ name: "other project" }));

  // Each started session's own directory, which must be gone once the service closed.
  const sessionDirs: string[] = [];
  const call: LiveService["call"] = (pathname, init = {}) => {
    const { json, headers, key: keyOverride, ...requestInit } = init;
    const merged = new Headers(headers);
    if (!merged.has("x-platform-api-key")) merged.set("x-platform-api-key", keyOverride ?? key.key);
    if (json !== undefined) merged.set("content-type", "application/json");
    return fetch(`${url}${pathname}`, {
      method: json !== undefined ? "POST" : "GET",
      ...requestInit,
      headers: merged,
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  };

  return {
    url,
    store,
    service,
    key,
    otherKey,
    marker,
    logText: () => lines.join("\n"),
    call,
    start: async (body = {}, init = {}) => {
      const response = await call("/v1/sessions/start", {
        json: body,
        ...(init.key ? { key: init.key } : {}),
        ...(init.headers ? { headers: init.headers } : {}),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`start answered ${response.status}: ${text}`);
      const id = JSON.parse(text).data.sessionId as string;
      const dir = service.sessions.get(id)?.downloadDir;
      if (dir) sessionDirs.push(dir);
      return id;
    },
    op: (id, name, body = {}, init = {}) =>
      call(`/v1/sessions/${id}/${name}`, {
        json: body,
        ...(init.key ? { key: init.key } : {}),
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      }),
    chromes: () => liveChromeProcesses(marker).map((p) => p.pid),
    close: async () => {
      await service.app.close();
      if (ownStore) {
        await store.close();
        rmSync(dir!, { recursive: true, force: true });
      }
      const left = await waitForNoChrome(marker);
      if (left.length > 0) throw new Error(`Chrome left running: ${left.map((p) => p.pid).join(", ")}`);
      const dirs = sessionDirs.filter((dir) => existsSync(dir));
      if (dirs.length > 0) throw new Error(`session directories left: ${dirs.join(", ")}`);
    },
  };
}

/** The per-call model that reaches the scripted model server (the key travels in x-model-api-key). */
export function scriptedModelConfig(model: ScriptedModel) {
  return { modelName: "openai/gpt-4.1-mini", baseURL: model.baseURL };
}

/** Headers of a call that uses the scripted model. */
export const WITH_MODEL_KEY = { "x-model-api-key": MODEL_KEY };

/** The body of a JSON answer, checked to be a 200. */
export async function ok<T = Record<string, unknown>>(response: Response): Promise<T> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${text}`);
  return JSON.parse(text).data as T;
}

export interface StreamEvent {
  type: "system" | "log";
  id: string;
  data: {
    status: string;
    /** A log event's line: category, message, level, auxiliary. */
    message?: { category: string; message: string; level: number; auxiliary?: Record<string, unknown> };
    result?: unknown;
    actionId?: string;
    cacheStatus?: string;
    error?: string;
    code?: string;
  };
}

/**
 * The events of a Server-Sent Events body, checking its framing: one `data:` line per event, after
 * an `event:` line naming its status when the service took the client for a generated SDK.
 */
export function parseEvents(text: string): StreamEvent[] {
  if (!text.endsWith("\n\n"))
    throw new Error(`stream not ended by a blank line: ${JSON.stringify(text.slice(-80))}`);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((block) => {
      const lines = block.split("\n");
      const named = lines.length === 2 && lines[0]!.startsWith("event: ");
      const data = lines.at(-1)!;
      if (!(lines.length === 1 || named) || !data.startsWith("data: "))
        throw new Error(`bad SSE block: ${block}`);
      const event = JSON.parse(data.slice("data: ".length)) as StreamEvent;
      if (named && lines[0] !== `event: ${event.data.status}`)
        throw new Error(`event line does not match: ${block}`);
      return event;
    });
}

export interface Fixtures {
  site: FixtureServer;
  model: ScriptedModel;
  close(): Promise<void>;
}

export async function startFixtures(): Promise<Fixtures> {
  const [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  return { site, model, close: async () => void (await Promise.all([site.close(), model.close()])) };
}

/** The element id the outline gives a line like `[12] button: Sign in`. */
export function idOf(outline: string, line: RegExp): number {
  const source = line.source.replace(/^\^/, "");
  const match = new RegExp(`\\[(\\d+)\\] ${source}`).exec(outline);
  if (!match) throw new Error(`no ${line} in the outline:\n${outline.slice(0, 2000)}`);
  return Number(match[1]);
}

/** One CDP command on a fresh WebSocket to `wsEndpoint` (headers for the service's proxy). */
export async function cdpCall<T = Record<string, unknown>>(
  wsEndpoint: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  sessionId?: string,
): Promise<T> {
  const { default: WebSocket } = await import("ws");
  const ws = new WebSocket(wsEndpoint, { headers });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return await new Promise<T>((resolve, reject) => {
      ws.on("message", (data) => {
        const message = JSON.parse(data.toString());
        if (message.id !== 1) return;
        if (message.error) reject(new Error(message.error.message));
        else resolve(message.result as T);
      });
      ws.send(JSON.stringify({ id: 1, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  } finally {
    ws.close();
  }
}

/**
 * The browser contexts of a session's browser, asked over the service's own connection to it
 * (pool browsers have no other); none once that browser has closed.
 */
export async function browserContextsOf(cdp: CdpTarget): Promise<string[]> {
  if (!cdp.browser.isConnected()) return [];
  try {
    const { browserContextIds } = await cdp.browser.connection.root.send("Target.getBrowserContexts");
    return browserContextIds;
  } catch {
    return [];
  }
}

/** The targets of a session's browser (see browserContextsOf); none once it has closed. */
export async function browserTargetsOf(
  cdp: CdpTarget,
): Promise<{ browserContextId?: string; type: string }[]> {
  if (!cdp.browser.isConnected()) return [];
  try {
    return (await cdp.browser.connection.root.send("Target.getTargets")).targetInfos;
  } catch {
    return [];
  }
}

/** Resolves once `check` is true, or fails after `timeoutMs`. */
/**
 * The least time `eventually` gives a condition: one only a stall reaches (a loaded 2-core machine
 * can take seconds to end a browser or a session). A test's own, shorter number says how soon it
 * normally comes; it cannot fail a test on a busy machine. Waiting ends as soon as it holds.
 */
export const STALL_MS = 60_000;

export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = "condition",
) {
  const deadline = Date.now() + Math.max(timeoutMs, STALL_MS);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pid of the pool browser a session runs in. */
export function browserPid(svc: LiveService, id: string): number {
  const pid = svc.service.sessions.get(id)?.cdp.browser.launched?.pid;
  if (!pid) throw new Error(`session ${id} has no pool browser`);
  return pid;
}

/** Whether a process runs (not gone, not a zombie), from /proc. */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
