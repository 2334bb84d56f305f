// Serves files from fixtures/pages. HTML files get their origin placeholders filled in, so a page
// can point an iframe at "another site" without knowing the random ports of this run.
import { readFile, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { escapeHtml, htmlDocument } from "./html.ts";
import { pagesDir } from "./paths.ts";

/** The values that replace `{{ORIGIN}}`, `{{CROSS_ORIGIN}}` and `{{THIRD_ORIGIN}}` in served HTML. */
export interface OriginPlaceholders {
  ORIGIN: string;
  CROSS_ORIGIN: string;
  THIRD_ORIGIN: string;
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".gif": "image/gif",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

export function contentTypeFor(path: string): string {
  return contentTypes[extname(path).toLowerCase()] ?? "application/octet-stream";
}

export function fillPlaceholders(html: string, origins: OriginPlaceholders): string {
  return html.replace(/\{\{(ORIGIN|CROSS_ORIGIN|THIRD_ORIGIN)\}\}/g, (_, name: keyof OriginPlaceholders) => {
    return origins[name];
  });
}

/** Maps a URL path to a file under pagesDir, or undefined when it would escape that folder. */
function resolvePagePath(pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  const file = normalize(join(pagesDir, decoded));
  return file.startsWith(pagesDir) || `${file}${sep}` === pagesDir ? file : undefined;
}

export function sendNotFound(res: ServerResponse, pathname: string): void {
  res.writeHead(404, { "content-type": "text/html; charset=utf-8" });
  res.end(htmlDocument("Not found", `<h1>Not found</h1><p id="path">${escapeHtml(pathname)}</p>`));
}

export async function serveStaticFile(
  res: ServerResponse,
  pathname: string,
  method: string,
  origins: OriginPlaceholders,
): Promise<void> {
  let file = resolvePagePath(pathname);
  if (file !== undefined) {
    const info = await stat(file).catch(() => undefined);
    if (info?.isDirectory()) file = join(file, "index.html");
    else if (!info?.isFile()) file = undefined;
  }
  const content = file === undefined ? undefined : await readFile(file).catch(() => undefined);
  if (file === undefined || content === undefined) {
    sendNotFound(res, pathname);
    return;
  }
  const type = contentTypeFor(file);
  const body = type.startsWith("text/html")
    ? Buffer.from(fillPlaceholders(content.toString("utf8"), origins))
    : content;
  // no-cache: a test that counts requests should see every load reach the server.
  res.writeHead(200, { "content-type": type, "content-length": body.length, "cache-control": "no-cache" });
  res.end(method === "HEAD" ? undefined : body);
}
