// From a SessionStart body to what the session is made of: the Deckhand options, the browser
// context's settings, or the browser to attach to (cdpUrl).
//
// A session lives in a browser shared with others, so launch options that belong to a browser
// process (which executable, its arguments, profile, debugging port, a visible window) are the
// operator's to set (deckhand-server flags), never a caller's: a caller who could pass `args` or
// `executablePath` could run programs on the server. They are refused with a 400 naming the field.

import type { ContextOptions, DeckhandOptions, Logger } from "deckhand";
import { ApiError } from "../errors.ts";
import type { SessionStartParams } from "../schemas/session-start.ts";
import { checkModelName } from "./model-config.ts";

export type SessionDeckhandOptions = Omit<DeckhandOptions, "env" | "localBrowserLaunchOptions">;

export interface SessionPlan {
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

// Launch options that describe a browser process rather than a session. The value each may have
// (because it is what the pool's browsers are anyway) is accepted; any other is refused.
const PROCESS_OPTIONS: Record<string, (value: unknown) => boolean> = {
  executablePath: () => false,
  args: (value) => Array.isArray(value) && value.length === 0,
  ignoreDefaultArgs: (value) => value === false,
  userDataDir: () => false,
  port: () => false,
  devtools: (value) => value === false,
  headless: (value) => value === true,
  ignoreHTTPSErrors: (value) => value === false,
};

function invalid(field: string, message: string): ApiError {
  return new ApiError(400, "INVALID_REQUEST", `Invalid request: body field \`${field}\`: ${message}`);
}

export function planSession(params: SessionStartParams, logger: Logger): SessionPlan {
  if (params.modelName !== undefined) checkModelName(params.modelName, "modelName");
  const launch = params.browser?.launchOptions ?? {};
  for (const [name, allowed] of Object.entries(PROCESS_OPTIONS)) {
    const value = (launch as Record<string, unknown>)[name];
    if (value !== undefined && !allowed(value)) {
      throw invalid(
        `browser.launchOptions.${name}`,
        "is set by the service's operator for its shared browsers and cannot be chosen per session. " +
          "Leave it out, or attach a browser of your own with browser.cdpUrl.",
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

  const viewport = params.sessionCreateParams?.browserSettings?.viewport ?? launch.viewport;
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
    ...(params.modelName !== undefined ? { model: params.modelName } : {}),
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
    ...(params.selfHeal !== undefined ? { selfHeal: params.selfHeal } : {}),
    ...(params.experimental !== undefined ? { experimental: params.experimental } : {}),
    ...(params.domSettleTimeoutMs !== undefined ? { domSettleTimeout: params.domSettleTimeoutMs } : {}),
  };

  const timeout = params.sessionCreateParams?.timeout;
  return {
    deckhand,
    context,
    cdpUrl,
    connectTimeoutMs: launch.connectTimeoutMs,
    idleTimeoutMs: timeout !== undefined ? Math.round(timeout * 1000) : undefined,
    keepAlive: params.sessionCreateParams?.keepAlive ?? false,
  };
}
