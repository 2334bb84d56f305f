// The browser-level DevTools WebSocket URL of a running browser, from either form users give:
// the ws:// URL itself, or the http://host:port address of its DevTools HTTP server.

import { ServiceInitError } from "../errors.ts";

/** A browser-level WebSocket URL from a ws:// URL or an http://host:port DevTools address. */
export async function browserEndpoint(cdpUrl: string): Promise<string> {
  if (cdpUrl.startsWith("ws")) return cdpUrl;
  const url = new URL("/json/version", cdpUrl);
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new ServiceInitError(
      `No browser answered at ${cdpUrl} (${(error as Error).message}). Is it running with --remote-debugging-port?`,
    );
  }
  if (!response.ok)
    throw new ServiceInitError(`${url} answered ${response.status}; is it a Chrome DevTools address?`);
  const body = (await response.json()) as { webSocketDebuggerUrl?: string };
  if (!body.webSocketDebuggerUrl) throw new ServiceInitError(`${url} did not name a webSocketDebuggerUrl.`);
  return body.webSocketDebuggerUrl;
}
