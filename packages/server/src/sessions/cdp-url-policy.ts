// Which browsers a session's `browser.cdpUrl` may attach to. Attaching makes the service open an
// HTTP or WebSocket connection to whatever address a caller names, so the operator decides where
// (deckhand-server --cdp-url-hosts): any host (the default), a list of host names and addresses,
// or none at all. Whatever the setting, the service's own pool browsers are never reachable this
// way: their DevTools ports listen on loopback, and a session attached to one would sit beside
// other callers' sessions.

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { ApiError } from "../errors.ts";

/** `"*"`: any host; a list: only those host names or addresses (an empty list: no cdpUrl at all). */
export type CdpUrlHosts = "*" | readonly string[];

function refused(message: string): ApiError {
  return new ApiError(400, "INVALID_REQUEST", `Invalid request: body field \`browser.cdpUrl\`: ${message}`);
}

function hostOf(url: URL): string {
  // URL keeps the brackets of an IPv6 host.
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith("127.") || address === "0.0.0.0";
  const lower = address.toLowerCase();
  return lower === "::1" || lower === "::" || lower.startsWith("::ffff:127.");
}

function defaultPort(url: URL): string {
  if (url.port) return url.port;
  return url.protocol === "https:" || url.protocol === "wss:" ? "443" : "80";
}

/**
 * Throws a 400 naming `browser.cdpUrl` when the operator's setting does not allow its host, or
 * when it leads to one of `ownPorts` (the pool browsers' DevTools ports) on this machine.
 */
export async function checkCdpUrl(
  cdpUrl: string,
  allowed: CdpUrlHosts,
  ownPorts: readonly number[],
): Promise<void> {
  const url = new URL(cdpUrl);
  const host = hostOf(url);
  if (allowed !== "*") {
    if (allowed.length === 0) {
      throw refused(
        "this service does not attach sessions to browsers of their own. Leave browser.cdpUrl out to get a " +
          "browser of the service's (its operator can allow hosts with --cdp-url-hosts).",
      );
    }
    if (!allowed.some((h) => h.toLowerCase() === host)) {
      throw refused(
        `the host ${JSON.stringify(host)} is not one this service attaches to (allowed: ${allowed.join(", ")}). ` +
          "Use an allowed host, or ask the operator to add it (--cdp-url-hosts).",
      );
    }
  }
  if (ownPorts.length === 0 || !ownPorts.includes(Number(defaultPort(url)))) return;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return; // A name that does not resolve leads nowhere; connecting will say so.
  }
  if (host === "localhost" || addresses.some(isLoopback)) {
    throw refused("it leads to one of the service's own browsers, which sessions cannot attach to.");
  }
}

/** Parses the operator's setting: `*`, `none`, or a comma-separated list of hosts. */
export function parseCdpUrlHosts(value: string): CdpUrlHosts {
  const trimmed = value.trim();
  if (trimmed === "*") return "*";
  if (trimmed === "" || trimmed.toLowerCase() === "none") return [];
  return trimmed
    .split(",")
    .map((h) =>
      h
        .trim()
        .replace(/^\[|\]$/g, "")
        .toLowerCase(),
    )
    .filter((h) => h !== "");
}
