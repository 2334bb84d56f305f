// Attaching a session to a browser of the caller's (`browser.cdpUrl`). The service opens the
// connection itself, after the operator's egress rules (policy/egress.ts, --cdp-url-hosts) passed
// every address the host resolves to, and to the address that was checked; for an http(s) URL it
// reads the browser's /json/version there and connects to the WebSocket it names on that same
// address (never to a host the answer names). Whatever goes wrong out there, the caller learns the
// same thing: nothing usable answered. What answered, if anything, stays in the service's log.

import { Browser, WebSocketTransport } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import { ApiError } from "../errors.ts";
import { checkEgress, type EgressPolicy, pinnedLookup } from "../policy/egress.ts";
import { pinnedGetJson } from "../policy/pinned-http.ts";

function invalid(message: string): ApiError {
  return new ApiError(400, "INVALID_REQUEST", `Invalid request: body field \`browser.cdpUrl\`: ${message}`);
}

/**
 * Nothing usable answered at `browser.cdpUrl` (as opposed to an address the caller may not use):
 * a start takes the session anyway and attaches when it is first used (SessionManager).
 */
export class CdpUrlUnreachable extends ApiError {}

const UNUSABLE =
  "no browser could be attached there: nothing answered as a Chrome DevTools endpoint (or it cannot be " +
  "reached from this service). Check the address, and that the browser runs with --remote-debugging-port.";

export interface CdpUrlAttach {
  policy: EgressPolicy;
  /** The service's own port (never attached to). */
  ownPort: number | undefined;
  timeoutMs: number;
  viewport?: { width: number; height: number };
  log: FastifyBaseLogger;
}

/** Connects to the browser at `cdpUrl`, or throws a 400 naming `browser.cdpUrl`. */
export async function attachCdpUrl(cdpUrl: string, options: CdpUrlAttach): Promise<Browser> {
  let url: URL;
  try {
    url = new URL(cdpUrl);
  } catch {
    throw invalid("it is not an absolute URL (ws://host:port/devtools/browser/... or http://host:port).");
  }
  if (!["ws:", "wss:", "http:", "https:"].includes(url.protocol)) {
    throw invalid(`${url.protocol} is not a DevTools address: use ws://, wss://, http:// or https://.`);
  }
  const check = await checkEgress(url, options.policy, options.ownPort);
  if (!check.ok) {
    throw invalid(
      `${check.problem}. Leave browser.cdpUrl out to get a browser of the service's (its operator chooses the ` +
        "hosts sessions may attach to with --cdp-url-hosts).",
    );
  }
  const { target } = check;
  try {
    let wsUrl = url;
    if (url.protocol === "http:" || url.protocol === "https:") {
      const version = (await pinnedGetJson(new URL("/json/version", url), target, options.timeoutMs)) as {
        webSocketDebuggerUrl?: unknown;
      };
      if (typeof version.webSocketDebuggerUrl !== "string") throw new Error("no webSocketDebuggerUrl");
      // Only the path is taken from the answer: the connection stays on the address checked.
      const named = new URL(version.webSocketDebuggerUrl);
      wsUrl = new URL(
        `${url.protocol === "https:" ? "wss" : "ws"}://${url.host}${named.pathname}${named.search}`,
      );
    }
    const transport = await WebSocketTransport.connect(wsUrl.href, {
      timeoutMs: options.timeoutMs,
      lookup: pinnedLookup(target),
    });
    return await Browser.connect(transport, {
      ...(options.viewport ? { viewport: options.viewport } : {}),
    });
  } catch (error) {
    options.log.info({ err: error, host: target.host }, "attaching to a caller's browser failed");
    throw new CdpUrlUnreachable(
      400,
      "INVALID_REQUEST",
      `Invalid request: body field \`browser.cdpUrl\`: ${UNUSABLE}`,
    );
  }
}
