// From a SessionStart body to what the session is made of: the Deckhand options, the browser
// context's settings, or the browser to attach to (cdpUrl).
//
// A session lives in a browser shared with others, so launch options that belong to a browser
// process (which executable, its arguments, profile, debugging port, a visible window) are the
// operator's to set (deckhand-server flags), never a caller's: a caller who could pass `args` or
// `executablePath` could run programs on the server. What a caller may send is what the operator's
// browsers are anyway (an allow-list made from the pool's own settings): the same executable, args
// the browsers already run with (clients of the reference send `--no-sandbox`), the same headless
// mode. Anything that would change the process is refused with a 400 naming the field.

import { realpathSync } from "node:fs";
import { type ContextOptions, DEFAULT_VIEWPORT, type DeckhandOptions, type Logger } from "deckhand";
import { ApiError } from "../errors.ts";
import type { SessionStartParams } from "../schemas/session-start.ts";
import type { BrowserProcessSettings } from "./browser-pool.ts";
import { checkModelName } from "./model-config.ts";

export type SessionDeckhandOptions = Omit<DeckhandOptions, "env" | "localBrowserLaunchOptions">;

export interface SessionPlan {
  /** The start's modelName as the library reads it (a bare legacy name mapped to its provider). */
  modelName: string | undefined;
  /** Options of the session's Deckhand instance. */
  deckhand: SessionDeckhandOptions;
  /** Settings of its browser context (pool sessions). */
  context: ContextOptions;
  /** Attach to this browser instead of taking a place in the pool. */
  cdpUrl: string | undefined;
  connectTimeoutMs: number | undefined;
  /** The start's idle timeout (sessionCreateParams.timeout, seconds), in milliseconds. */
  idleTimeoutMs: number | undefined;
  /** sessionCreateParams.keepAlive: the session outlives its client's disconnection. */
  keepAlive: boolean;
}

/** The same file, whatever path names it (a symlink such as /usr/bin/chromium). */
function sameFile(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return undefined;
    }
  };
  const ra = real(a);
  return ra !== undefined && ra === real(b);
}

// Launch options that describe a browser process rather than a session: each is accepted when it
// says what the pool's browsers are anyway, refused otherwise.
const PROCESS_OPTIONS: Record<string, (value: unknown, operator: BrowserProcessSettings) => boolean> = {
  executablePath: (value, operator) =>
    typeof value === "string" &&
    operator.executablePath !== undefined &&
    sameFile(value, operator.executablePath),
  args: (value, operator) =>
    Array.isArray(value) && value.every((arg) => typeof arg === "string" && operator.args.includes(arg)),
  ignoreDefaultArgs: (value) => value === false || (Array.isArray(value) && value.length === 0),
  userDataDir: () => false,
  port: () => false,
  devtools: (value) => value === false,
  headless: (value, operator) => value === operator.headless,
  ignoreHTTPSErrors: (value) => value === false,
};

const PROCESS_OPTION_HINT: Record<string, string> = {
  executablePath: "only the browser the service runs may be named",
  args: "only arguments the service's browsers already run with are accepted",
  headless: "the service's browsers run with a fixed headless setting",
};

function invalid(field: string, message: string): ApiError {
  return new ApiError(400, "INVALID_REQUEST", `Invalid request: body field \`${field}\`: ${message}`);
}

export function planSession(
  params: SessionStartParams,
  logger: Logger,
  operator: BrowserProcessSettings,
  warn?: (message: string) => void,
): SessionPlan {
  const modelName =
    params.modelName !== undefined ? checkModelName(params.modelName, "modelName", warn) : undefined;
  const launch = params.browser?.launchOptions ?? {};
  for (const [name, allowed] of Object.entries(PROCESS_OPTIONS)) {
    const value = (launch as Record<string, unknown>)[name];
    if (value !== undefined && !allowed(value, operator)) {
      const hint = PROCESS_OPTION_HINT[name];
      throw invalid(
        `browser.launchOptions.${name}`,
        "is set by the service's operator for its shared browsers and cannot be chosen per session" +
          (hint ? ` (${hint})` : "") +
          ". Leave it out, or attach a browser of your own with browser.cdpUrl.",
      );
    }
  }
  const cdpUrl = params.browser?.cdpUrl ?? launch.cdpUrl;
  if (cdpUrl !== undefined && !/^(wss?|https?):\/\//.test(cdpUrl)) {
    throw invalid(
      params.browser?.cdpUrl !== undefined ? "browser.cdpUrl" : "browser.launchOptions.cdpUrl",
      "must be a ws://, wss://, http:// or https:// DevTools address.",
    );
  }

  // A pool session gets the library's default viewport; a browser of the caller's keeps its own.
  const viewport =
    params.sessionCreateParams?.browserSettings?.viewport ??
    launch.viewport ??
    (cdpUrl === undefined ? DEFAULT_VIEWPORT : undefined);
  const proxy = launch.proxy;
  const context: ContextOptions = {
    ...(viewport ? { viewport } : {}),
    ...(proxy ? { proxy: { server: proxy.server, ...(proxy.bypass ? { bypass: proxy.bypass } : {}) } } : {}),
    ...(proxy?.username
      ? { proxyCredentials: { username: proxy.username, password: proxy.password ?? "" } }
      : {}),
  };

  const deckhand: SessionDeckhandOptions = {
    verbose: params.verbose ?? 1,
    disablePino: true,
    logger,
    ...(modelName !== undefined ? { model: modelName } : {}),
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
    ...(params.selfHeal !== undefined ? { selfHeal: params.selfHeal } : {}),
    ...(params.explicitInstructions !== undefined
      ? { explicitInstructions: params.explicitInstructions }
      : {}),
    ...(params.experimental !== undefined ? { experimental: params.experimental } : {}),
    ...(params.domSettleTimeoutMs !== undefined ? { domSettleTimeout: params.domSettleTimeoutMs } : {}),
  };

  const timeout = params.sessionCreateParams?.timeout;
  return {
    modelName,
    deckhand,
    context,
    cdpUrl,
    connectTimeoutMs: launch.connectTimeoutMs,
    idleTimeoutMs: timeout !== undefined ? Math.round(timeout * 1000) : undefined,
    keepAlive: params.sessionCreateParams?.keepAlive ?? false,
  };
}
