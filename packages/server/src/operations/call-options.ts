// Per-call settings every AI operation decides the same way: whether the server cache is in play,
// how long the call may take, and which values are secrets.

import type { OperationContext } from "../routes/handlers.ts";
import type { LiveSession } from "../sessions/live-session.ts";

/**
 * The server cache is in play unless the header `x-platform-cache-bypass: true` turns it off, then
 * the call's `serverCache`, then the session's (start's `serverCache`, default true) decide.
 */
export function cacheInPlay(
  context: OperationContext<unknown>,
  live: LiveSession,
  perCall: boolean | undefined,
): boolean {
  if (context.cacheBypass) return false;
  return perCall ?? live.defaults.serverCache;
}

/** The call's timeout, else the given default, else the service's. */
export function timeoutOf(
  perCall: number | undefined,
  fallback: number | undefined,
  service: number,
): number {
  return perCall ?? fallback ?? service;
}

/** The key of a body's model object, if it carries one. */
export function modelKeyOf(model: unknown): unknown {
  return typeof model === "object" && model !== null ? (model as { apiKey?: unknown }).apiKey : undefined;
}

/**
 * Where a deprecation notice about the call's model (a bare legacy name) goes: the service's log,
 * and the operation's log (a streaming client's log events).
 */
export function modelWarning(context: OperationContext<unknown>): (message: string) => void {
  return (message) => {
    context.request.log.warn(message);
    context.log({ category: "deprecation", message, level: 0 });
  };
}
