// Where a caller may make the service connect: a session's `browser.cdpUrl` (the service attaches
// to a browser there) and a call's model `baseURL` (the service sends the model request there).
// Both make the service open a connection to an address a key holder chose, from inside the
// operator's network, so the operator decides where (deckhand-server --cdp-url-hosts,
// --model-base-url-hosts), and the rules are checked against the addresses a name resolves to,
// not its spelling: `[::ffff:127.0.0.1]`, `0x7f.1` and a name that resolves to 127.0.0.1 are all
// loopback. Every address must be allowed, and the connection then goes to the address that was
// checked (`pinnedLookup`), so that a name that resolves differently the second time (DNS
// rebinding) cannot lead elsewhere. The service's own port on this machine is never a target.
//
// A setting is `*` (anywhere), `none`, or a comma-separated list of: `public` (any address on the
// public internet: not loopback, private, link-local, shared, multicast or reserved), host names
// (whatever they resolve to), addresses, and CIDR ranges (`10.1.0.0/16`, `fd00::/8`).

import { lookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

type Rule =
  | { kind: "any" }
  | { kind: "public" }
  | { kind: "host"; host: string }
  | { kind: "range"; range: [Address, number]; text: string };

export interface EgressPolicy {
  /** Empty: nowhere. */
  readonly rules: readonly Rule[];
  /** The setting as given, for messages. */
  readonly text: string;
}

export const ANYWHERE: EgressPolicy = { rules: [{ kind: "any" }], text: "*" };
export const NOWHERE: EgressPolicy = { rules: [], text: "none" };
export const PUBLIC_ONLY: EgressPolicy = { rules: [{ kind: "public" }], text: "public" };

export class EgressSettingError extends Error {}

/** Parses an operator's setting (see the file comment). Throws EgressSettingError naming `flag`. */
export function parseEgressPolicy(value: string, flag: string): EgressPolicy {
  const text = value.trim();
  if (text === "*") return ANYWHERE;
  if (text === "" || text.toLowerCase() === "none") return NOWHERE;
  const rules: Rule[] = [];
  for (const raw of text.split(",")) {
    const item = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "");
    if (item === "") continue;
    if (item === "*") {
      throw new EgressSettingError(
        `${flag}: "*" stands alone (anywhere); drop the other entries or the "*".`,
      );
    }
    if (item === "public") rules.push({ kind: "public" });
    else if (item.includes("/")) {
      try {
        rules.push({ kind: "range", range: ipaddr.parseCIDR(item), text: item });
      } catch {
        throw new EgressSettingError(
          `${flag}: ${JSON.stringify(item)} is not a CIDR range (e.g. 10.1.0.0/16).`,
        );
      }
    } else if (ipaddr.isValid(item)) {
      const address = ipaddr.process(item);
      rules.push({ kind: "range", range: [address, address.kind() === "ipv4" ? 32 : 128], text: item });
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(item)) {
      rules.push({ kind: "host", host: item.replace(/\.$/, "") });
    } else {
      throw new EgressSettingError(
        `${flag}: ${JSON.stringify(item)} is not a host name, an address, a CIDR range or "public".`,
      );
    }
  }
  return rules.length === 0 ? NOWHERE : { rules, text };
}

/** Whether a listening host keeps the service on this machine (then everything may be reached). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === "loopback";
}

function isPublic(address: Address): boolean {
  return address.range() === "unicast";
}

function allowedBy(rule: Rule, host: string, address: Address): boolean {
  switch (rule.kind) {
    case "any":
      return true;
    case "public":
      return isPublic(address);
    case "host":
      return host === rule.host;
    case "range":
      return address.kind() === rule.range[0].kind() && address.match(rule.range);
  }
}

/** This machine's own addresses (for "never the service's own port"). */
function localAddresses(): Address[] {
  const found: Address[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) {
      if (ipaddr.isValid(entry.address)) found.push(ipaddr.process(entry.address));
    }
  }
  return found;
}

function isThisMachine(address: Address): boolean {
  if (address.range() === "loopback" || address.range() === "unspecified") return true;
  return localAddresses().some(
    (own) => own.kind() === address.kind() && own.toString() === address.toString(),
  );
}

export interface EgressTarget {
  /** The host name (or address) as the URL spells it, without brackets. */
  host: string;
  port: number;
  /** The address checked and to connect to. */
  address: string;
  family: 4 | 6;
}

export type EgressCheck = { ok: true; target: EgressTarget } | { ok: false; problem: string };

function defaultPort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" || url.protocol === "wss:" ? 443 : 80;
}

/**
 * Checks where `url` leads under `policy`: every address its host resolves to must be allowed,
 * and none may be this service's own port on this machine. The problem says which rule refused,
 * never anything learned from the network beyond the addresses.
 */
export async function checkEgress(
  url: URL,
  policy: EgressPolicy,
  ownPort: number | undefined,
): Promise<EgressCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = defaultPort(url);
  if (policy.rules.length === 0)
    return { ok: false, problem: "this service connects nowhere of the caller's choosing" };
  let addresses: Address[];
  if (ipaddr.isValid(host)) addresses = [ipaddr.process(host)];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => ipaddr.process(a.address));
    } catch {
      addresses = [];
    }
  }
  if (addresses.length === 0)
    return { ok: false, problem: `the host ${JSON.stringify(host)} does not resolve` };
  for (const address of addresses) {
    if (!policy.rules.some((rule) => allowedBy(rule, host, address))) {
      return {
        ok: false,
        problem:
          `the host ${JSON.stringify(host)} (${address.toString()}) is not one this service connects to ` +
          `(allowed: ${policy.text})`,
      };
    }
    if (ownPort !== undefined && port === ownPort && isThisMachine(address)) {
      return { ok: false, problem: "it leads to this service itself" };
    }
  }
  const first = addresses[0]!;
  return {
    ok: true,
    target: { host, port, address: first.toString(), family: first.kind() === "ipv4" ? 4 : 6 },
  };
}

/** A `lookup` for node:net / http / ws that answers the checked address whatever name is asked. */
export function pinnedLookup(target: EgressTarget): LookupFunction {
  return ((_hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    if (typeof options === "object" && options !== null && (options as { all?: boolean }).all)
      callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}
