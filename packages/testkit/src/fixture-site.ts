// The request handling that every fixture server shares: log the request, then try the test's own
// routes, the built-in helper paths and the static pages, in that order, so a test can override
// any page for itself.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { serveHelperRoute } from "./helper-routes.ts";
import { type OriginPlaceholders, serveStaticFile } from "./static-files.ts";

/** One request as the server received it. */
export interface FixtureRequest {
  /** The Host header, e.g. "127.0.0.2:41234" (compare with `new URL(server.crossOrigin).host`). */
  host: string;
  method: string;
  /** Path and query as requested, e.g. "/slow?ms=100". */
  path: string;
  headers: IncomingHttpHeaders;
  /** When it arrived (Date.now()): a test that runs pages elsewhere orders their requests by it. */
  at: number;
}

/** A test's own handler for one path; it gets Node's request and response as they are. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

interface Route {
  path: string;
  handler: RouteHandler;
}

export class FixtureSite {
  readonly requests: FixtureRequest[] = [];
  readonly #routes: Route[] = [];
  readonly #origins: () => OriginPlaceholders;

  /** `origins` is read per request because the ports are only known after listening. */
  constructor(origins: () => OriginPlaceholders) {
    this.#origins = origins;
  }

  /**
   * Serves `path` (the pathname, without query) with `handler` on every host of the server until
   * the returned function is called. A later route for the same path wins over an earlier one.
   */
  route(path: string, handler: RouteHandler): () => void {
    const route: Route = { path, handler };
    this.#routes.push(route);
    return () => {
      const index = this.#routes.indexOf(route);
      if (index >= 0) this.#routes.splice(index, 1);
    };
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? "GET";
    const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
    this.requests.push({ host, method, path: req.url ?? "/", headers: { ...req.headers }, at: Date.now() });
    this.#dispatch(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      res
        .writeHead(500, { "content-type": "text/plain; charset=utf-8" })
        .end(`Fixture handler failed: ${message}`);
    });
  };

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Only the path and query matter; the base keeps odd Host headers out of the parse.
    const url = new URL(req.url ?? "/", "http://fixture.invalid");
    const route = this.#routes.findLast((r) => r.path === url.pathname);
    if (route) await route.handler(req, res);
    else if (!serveHelperRoute(req, res, url)) {
      await serveStaticFile(res, url.pathname, req.method ?? "GET", this.#origins());
    }
  }
}

/** Joins an origin and a path given with or without its leading slash. */
export function joinUrl(origin: string, path = "/"): string {
  return path.startsWith("/") ? `${origin}${path}` : `${origin}/${path}`;
}
