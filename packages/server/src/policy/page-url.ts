// Which URLs a session's pages may be sent to, by any way in: the HTTP navigate endpoint, and every
// CDP command that carries a URL (Page.navigate, Target.createTarget, request interception that
// rewrites a URL, Network.loadNetworkResource, ...). An allow-list: the web (http, https), the
// empty page (about:blank) and inline documents (data:). Everything else is refused: file: (the
// server's own files), the browser's internal pages (chrome:, and about: pages, which Chrome maps
// to chrome: ones; some of them crash the browser), view-source:, javascript:, blob:,
// filesystem:, devtools: and extension schemes.

const ALLOWED_SCHEMES = new Set(["http:", "https:", "data:"]);

export type PageUrlCheck = { ok: true; href: string } | { ok: false; problem: string };

/**
 * Whether `url` may be loaded in a session's page. When it may, `href` is the URL as parsed here:
 * pass that on rather than the original spelling, so that the browser loads what was checked.
 */
export function checkPageUrl(url: unknown): PageUrlCheck {
  if (typeof url !== "string") return { ok: false, problem: "it is not a string" };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {
      ok: false,
      problem: `${JSON.stringify(url.slice(0, 200))} is not an absolute URL (e.g. https://example.com/)`,
    };
  }
  if (ALLOWED_SCHEMES.has(parsed.protocol) || (parsed.protocol === "about:" && parsed.pathname === "blank")) {
    return { ok: true, href: parsed.href };
  }
  return {
    ok: false,
    problem:
      `${parsed.protocol} URLs cannot be opened in a session (only http:, https:, data: and about:blank ` +
      "can: the service's files and the browser's own pages are not the session's)",
  };
}
