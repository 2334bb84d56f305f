// Chromium's own DevTools front end, for the debugger link (debugUrl). Its files ship inside the
// installed Chromium and are served by a browser's DevTools HTTP endpoint (/devtools/...). Pool
// browsers have no such endpoint (they run on a pipe, docs/service.md), so the front end comes from
// one dedicated browser that holds no tenant's page: started when a debugger link is first opened,
// listening on a loopback port that no web page may use (no --remote-allow-origins: Chromium refuses
// a WebSocket that carries a page's Origin), and stopped again after a few idle minutes. The service
// serves its files under /devtools-frontend/ and keeps each one it fetched in memory.

import { type LaunchedChrome, launchChrome } from "deckhand";
import type { FastifyBaseLogger } from "fastify";

export interface DevToolsFrontendOptions {
  headless?: boolean;
  executablePath?: string;
  /** Extra Chromium arguments (the pool's). */
  args?: readonly string[];
  log: FastifyBaseLogger;
  /** Milliseconds without a file request after which the browser is stopped. Default 5 minutes. */
  idleMs?: number;
}

export interface FrontendFile {
  contentType: string;
  body: Buffer;
}

/** The URL path under which the service serves the front end. */
export const FRONTEND_PATH = "/devtools-frontend";

const FILE_PATH = /^[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,255}$/;
const MAX_CACHED_BYTES = 128 * 1024 * 1024;

export class DevToolsFrontend {
  private readonly options: DevToolsFrontendOptions;
  private launching: Promise<{ launched: LaunchedChrome; origin: string }> | undefined;
  private readonly cache = new Map<string, FrontendFile>();
  private cachedBytes = 0;
  private idle: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: DevToolsFrontendOptions) {
    this.options = options;
  }

  /** Starts the front end's browser (when a debugger link is opened). */
  async start(): Promise<void> {
    if (this.closed) throw new Error("The service is closing.");
    this.touch();
    await this.browser();
  }

  private browser(): Promise<{ launched: LaunchedChrome; origin: string }> {
    this.launching ??= (async () => {
      const launched = await launchChrome({
        headless: this.options.headless ?? true,
        // A port, on loopback, and no page may open it: the defaults' --remote-allow-origins=* is left out.
        ignoreDefaultArgs: ["--remote-allow-origins=*"],
        args: [...(this.options.args ?? []), "--remote-debugging-address=127.0.0.1"],
        ...(this.options.executablePath ? { executablePath: this.options.executablePath } : {}),
      });
      const endpoint = launched.wsEndpoint ? new URL(launched.wsEndpoint) : undefined;
      if (!endpoint) {
        await launched.kill();
        throw new Error("The DevTools front end's browser opened no endpoint.");
      }
      this.options.log.info({ pid: launched.pid }, "DevTools front end browser started");
      return { launched, origin: `http://127.0.0.1:${endpoint.port}` };
    })();
    this.launching.catch(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), this.options.idleMs ?? 5 * 60_000);
    this.idle.unref();
  }

  /**
   * A front end file (`inspector.html`, `entrypoints/...`), or null when there is no such file, or
   * when no debugger link started the front end and the file was never fetched.
   */
  async file(path: string): Promise<FrontendFile | null> {
    if (!FILE_PATH.test(path) || path.split("/").some((part) => part === ".." || part === ".")) return null;
    const cached = this.cache.get(path);
    if (cached) return cached;
    if (!this.launching || this.closed) return null;
    this.touch();
    const { origin } = await this.browser();
    const response = await fetch(`${origin}/devtools/${path}`, { redirect: "error" }).catch(() => undefined);
    if (!response?.ok) return null;
    const file: FrontendFile = {
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      body: Buffer.from(await response.arrayBuffer()),
    };
    if (this.cachedBytes + file.body.length <= MAX_CACHED_BYTES) {
      this.cache.set(path, file);
      this.cachedBytes += file.body.length;
    }
    return file;
  }

  private async stop(): Promise<void> {
    clearTimeout(this.idle);
    this.idle = undefined;
    const launching = this.launching;
    this.launching = undefined;
    const started = await launching?.catch(() => undefined);
    if (started) {
      await started.launched.kill();
      this.options.log.info("DevTools front end browser stopped");
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }
}
