// Built-in dynamic paths of the fixture servers: status codes, slow responses, redirects, cookies
// and generated pages. Each answers one question a test asks of a browser ("does it report a
// 404?", "does it wait for a slow response?", "does a cookie survive a restart?").
import type { IncomingMessage, ServerResponse } from "node:http";
import { largePageHtml, longListHtml, productPageHtml } from "./generate.ts";
import { escapeHtml, htmlDocument } from "./html.ts";

const longestSlowMs = 120_000;

function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): void {
  const body = Buffer.from(html);
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": body.length,
    "cache-control": "no-store",
    ...headers,
  });
  res.end(body);
}

function intParam(url: URL, name: string, fallback: number, max: number): number {
  const value = Number.parseInt(url.searchParams.get(name) ?? "", 10);
  return Number.isFinite(value) && value >= 0 ? Math.min(value, max) : fallback;
}

function status(res: ServerResponse, code: number): void {
  if (!Number.isInteger(code) || code < 200 || code > 599) {
    sendHtml(res, 400, htmlDocument("Bad status", "<h1>Status must be 200-599</h1>"));
    return;
  }
  // These statuses must not carry a body.
  if (code === 204 || code === 205 || code === 304) {
    res.writeHead(code).end();
    return;
  }
  sendHtml(res, code, htmlDocument(`Status ${code}`, `<h1 id="status">Status ${code}</h1>`));
}

function slow(res: ServerResponse, url: URL): void {
  const ms = intParam(url, "ms", 1000, longestSlowMs);
  const body = url.searchParams.get("body") ?? "Slow response";
  const timer = setTimeout(() => {
    sendHtml(res, 200, htmlDocument("Slow", `<p id="body">${escapeHtml(body)}</p>`));
  }, ms);
  // A browser that gives up (or a server that closes) must not leave a timer behind.
  res.once("close", () => clearTimeout(timer));
}

function redirect(res: ServerResponse, url: URL): void {
  const to = url.searchParams.get("to");
  if (!to) {
    sendHtml(res, 400, htmlDocument("Bad redirect", "<h1>Missing ?to=</h1>"));
    return;
  }
  res.writeHead(302, { location: to, "cache-control": "no-store", "content-length": 0 }).end();
}

function setCookie(res: ServerResponse, url: URL): void {
  const name = url.searchParams.get("name") ?? "deckhand";
  const value = url.searchParams.get("value") ?? "1";
  // Persistent (not a session cookie), so a test can check it survives a browser restart.
  const tenYears = 10 * 365 * 24 * 3600;
  const expires = new Date(Date.now() + tenYears * 1000).toUTCString();
  const cookie = `${encodeURIComponent(name)}=${encodeURIComponent(value)}; Path=/; Max-Age=${tenYears}; Expires=${expires}`;
  sendHtml(
    res,
    200,
    htmlDocument("Cookie set", `<h1>Cookie set</h1><p id="cookie">${escapeHtml(`${name}=${value}`)}</p>`),
    { "set-cookie": cookie },
  );
}

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function echoCookies(req: IncomingMessage, res: ServerResponse): void {
  const pairs = (req.headers.cookie ?? "")
    .split(";")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      return `${decodeOrKeep(pair.slice(0, eq))}=${decodeOrKeep(pair.slice(eq + 1))}`;
    });
  const items = pairs.map((pair) => `<li>${escapeHtml(pair)}</li>`).join("");
  sendHtml(
    res,
    200,
    htmlDocument(
      "Cookies",
      `<h1>Cookies received</h1><p id="cookie-count">${pairs.length}</p><ul id="cookies">${items}</ul>`,
    ),
  );
}

/** Answers `url` if it is a helper path; returns false to let the static files have it. */
export function serveHelperRoute(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
  const path = url.pathname;
  const statusMatch = /^\/status\/(\d{3})$/.exec(path);
  const productMatch = /^\/products\/(\d+)$/.exec(path);
  if (statusMatch) status(res, Number(statusMatch[1]));
  else if (productMatch) sendHtml(res, 200, productPageHtml(Number(productMatch[1])));
  else if (path === "/slow") slow(res, url);
  // Browsers ask for it on every new page; a 404 would put an error in every console check.
  else if (path === "/favicon.ico") res.writeHead(204, { "cache-control": "max-age=3600" }).end();
  else if (path === "/redirect") redirect(res, url);
  else if (path === "/set-cookie") setCookie(res, url);
  else if (path === "/echo-cookies") echoCookies(req, res);
  else if (path === "/generated/large") {
    const elements = intParam(url, "elements", 5000, 500_000);
    sendHtml(res, 200, largePageHtml({ elements, seed: intParam(url, "seed", 1, 2 ** 31) }));
  } else if (path === "/generated/list")
    sendHtml(res, 200, longListHtml(intParam(url, "rows", 100, 100_000)));
  else return false;
  return true;
}
