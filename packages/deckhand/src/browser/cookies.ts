// Cookies of one browser context (the Storage domain, held to the context by its id): list them
// (optionally those a set of URLs would send), add, and clear (all, or those matching a name,
// domain or path).

import type { Protocol } from "devtools-protocol";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";

export type Cookie = Protocol.Network.Cookie;

/** A cookie to add: `url`, or `domain` and `path`, says where it belongs. */
export interface CookieParam {
  name: string;
  value: string;
  url?: string;
  domain?: string;
  path?: string;
  /** Seconds since the Unix epoch; absent or -1: a session cookie. */
  expires?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: "Strict" | "Lax" | "None";
}

/** What clearCookies removes; every given field must match (a RegExp or an exact string). */
export interface ClearCookiesOptions {
  name?: string | RegExp;
  domain?: string | RegExp;
  path?: string | RegExp;
}

export class ContextCookies {
  private readonly root: CdpSession;
  private readonly contextId: string | undefined;

  constructor(root: CdpSession, contextId: string | undefined) {
    this.root = root;
    this.contextId = contextId;
  }

  private get scope(): { browserContextId?: string } {
    return this.contextId ? { browserContextId: this.contextId } : {};
  }

  async list(urls?: string | string[]): Promise<Cookie[]> {
    const { cookies } = await this.root.send("Storage.getCookies", this.scope);
    if (urls === undefined) return cookies;
    const parsed = (Array.isArray(urls) ? urls : [urls]).map((url) => {
      try {
        return new URL(url);
      } catch {
        throw new ServiceInvalidArgumentError(`cookies: ${JSON.stringify(url)} is not an absolute URL.`);
      }
    });
    return cookies.filter((cookie) => parsed.some((url) => sentTo(cookie, url)));
  }

  async add(cookies: CookieParam[]): Promise<void> {
    if (!Array.isArray(cookies))
      throw new ServiceInvalidArgumentError("addCookies takes an array of cookies.");
    const params = cookies.map((cookie, index) => checkCookie(cookie, index));
    if (params.length === 0) return;
    await this.root.send("Storage.setCookies", { cookies: params, ...this.scope });
  }

  async clear(options: ClearCookiesOptions = {}): Promise<void> {
    const filters = Object.entries(options).filter(([, value]) => value !== undefined);
    if (filters.length === 0) {
      await this.root.send("Storage.clearCookies", this.scope);
      return;
    }
    const all = await this.list();
    const keep = all.filter(
      (cookie) =>
        !filters.every(([field, wanted]) => matches(cookie[field as keyof ClearCookiesOptions], wanted)),
    );
    if (keep.length === all.length) return;
    await this.root.send("Storage.clearCookies", this.scope);
    if (keep.length > 0) {
      await this.root.send("Storage.setCookies", { cookies: keep.map(asParam), ...this.scope });
    }
  }
}

function matches(value: string, wanted: string | RegExp): boolean {
  return typeof wanted === "string" ? value === wanted : wanted.test(value);
}

/** Whether a request to `url` would carry the cookie (domain, path and secure rules of RFC 6265). */
function sentTo(cookie: Cookie, url: URL): boolean {
  const host = url.hostname;
  const domain = cookie.domain.startsWith(".") ? cookie.domain.slice(1) : cookie.domain;
  const domainOk = cookie.domain.startsWith(".")
    ? host === domain || host.endsWith(`.${domain}`)
    : host === domain;
  if (!domainOk) return false;
  const path = url.pathname || "/";
  const pathOk =
    path === cookie.path ||
    (path.startsWith(cookie.path) && (cookie.path.endsWith("/") || path[cookie.path.length] === "/"));
  if (!pathOk) return false;
  return !cookie.secure || url.protocol === "https:" || host === "localhost" || host === "127.0.0.1";
}

function checkCookie(cookie: CookieParam, index: number): Protocol.Network.CookieParam {
  const where = `addCookies: cookie ${index}`;
  if (typeof cookie !== "object" || cookie === null)
    throw new ServiceInvalidArgumentError(`${where} is not an object.`);
  if (typeof cookie.name !== "string" || cookie.name === "")
    throw new ServiceInvalidArgumentError(`${where} needs a name.`);
  if (typeof cookie.value !== "string")
    throw new ServiceInvalidArgumentError(`${where} (${cookie.name}) needs a string value.`);
  if (cookie.url === undefined && cookie.domain === undefined) {
    throw new ServiceInvalidArgumentError(
      `${where} (${cookie.name}) needs a url, or a domain and a path, to say which site it belongs to.`,
    );
  }
  if (cookie.url !== undefined && cookie.domain !== undefined) {
    throw new ServiceInvalidArgumentError(`${where} (${cookie.name}): give url or domain, not both.`);
  }
  return {
    name: cookie.name,
    value: cookie.value,
    ...(cookie.url !== undefined ? { url: cookie.url } : {}),
    ...(cookie.domain !== undefined ? { domain: cookie.domain, path: cookie.path ?? "/" } : {}),
    ...(cookie.url !== undefined && cookie.path !== undefined ? { path: cookie.path } : {}),
    ...(cookie.expires !== undefined && cookie.expires !== -1 ? { expires: cookie.expires } : {}),
    ...(cookie.httpOnly !== undefined ? { httpOnly: cookie.httpOnly } : {}),
    ...(cookie.secure !== undefined ? { secure: cookie.secure } : {}),
    ...(cookie.sameSite !== undefined ? { sameSite: cookie.sameSite } : {}),
  };
}

function asParam(cookie: Cookie): Protocol.Network.CookieParam {
  return {
    name: cookie.name,
    value: cookie.value,
    domain: cookie.domain,
    path: cookie.path,
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
    ...(cookie.sameSite ? { sameSite: cookie.sameSite } : {}),
    ...(cookie.session ? {} : { expires: cookie.expires }),
    ...(cookie.priority ? { priority: cookie.priority } : {}),
    ...(cookie.partitionKey ? { partitionKey: cookie.partitionKey } : {}),
  };
}
