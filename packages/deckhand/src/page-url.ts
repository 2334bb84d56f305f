// Which URLs a page may be sent to when the one asking is not to be trusted with the machine: a
// tenant of the service (its HTTP navigate and every CDP command that carries a URL), or an
// assistant driving the MCP tools (whose page text can talk it into anything). An allow-list: the
// web (http, https), the empty page (about:blank) and inline documents (data:). Everything else is
// refused: file: (the machine's own files; `allowFile` lets them through where the user says so),
// the browser's internal pages (chrome:, and about: pages, which Chrome maps to chrome: ones; some
// of them crash the browser), view-source:, javascript:, blob:, filesystem:, devtools: and
// extension schemes. The service and the library's MCP server share this one rule.

const ALLOWED_SCHEMES = new Set(["http:", "https:", "data:"]);

export type PageUrlCheck = { ok: true; href: string } | { ok: false; problem: string };

export interface PageUrlPolicy {
  /** Also allow file: URLs (the local MCP server's `--allow-file-urls`). Default false. */
  allowFile?: boolean;
  /** Whose pages they are, for the message: "a session" (default), "this MCP server", ... */
  where?: string;
  /** Said after the refusal of a file: URL: how to allow them, where that can be done. */
  fileHint?: string;
}

/**
 * Whether `url` may be loaded. When it may, `href` is the URL as parsed here: pass that on rather
 * than the original spelling, so that the browser loads what was checked.
 */
export function checkPageUrl(url: unknown, policy: PageUrlPolicy = {}): PageUrlCheck {
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
  if (
    ALLOWED_SCHEMES.has(parsed.protocol) ||
    (parsed.protocol === "about:" && parsed.pathname === "blank") ||
    (policy.allowFile === true && parsed.protocol === "file:")
  ) {
    return { ok: true, href: parsed.href };
  }
  const where = policy.where ?? "a session";
  if (parsed.protocol === "file:") {
    return {
      ok: false,
      problem:
        `file: URLs cannot be opened in ${where} (only http:, https:, data: and about:blank can: the ` +
        "machine's files are not the page's)" +
        (policy.fileHint ? `; ${policy.fileHint}` : ""),
    };
  }
  return {
    ok: false,
    problem:
      `${parsed.protocol} URLs cannot be opened in ${where} (only http:, https:, data: and about:blank ` +
      "can: the machine's files and the browser's own pages are not the page's)",
  };
}
