// The fixture pages on three sites at once. Chromium groups pages into processes by site (scheme
// plus host for IP addresses), and another port on the same host is the same site; so to get
// real out-of-process iframes the servers listen on three loopback addresses, all of which Linux
// routes to lo.
import { createServer } from "node:http";
import { type FixtureRequest, FixtureSite, joinUrl, type RouteHandler } from "./fixture-site.ts";
import { listenOnFreePort, trackConnections } from "./listen.ts";

export interface FixtureServer {
  /** The main site, like "http://127.0.0.1:41234". */
  readonly origin: string;
  /** A second site (127.0.0.2): frames from here are out-of-process under --site-per-process. */
  readonly crossOrigin: string;
  /** A third site (127.0.0.3), for a cross-site frame inside a cross-site frame. */
  readonly thirdOrigin: string;
  /** `path` on the main site ("form.html" and "/form.html" both work). */
  url(path?: string): string;
  crossUrl(path?: string): string;
  thirdUrl(path?: string): string;
  /** Serves `path` with `handler` on all three sites until the returned function is called. */
  route(path: string, handler: RouteHandler): () => void;
  /** Every request received on any of the three sites, in order. */
  readonly requests: FixtureRequest[];
  /** Stops the servers and destroys every open connection, keep-alive ones included. */
  close(): Promise<void>;
}

const hosts = ["127.0.0.1", "127.0.0.2", "127.0.0.3"] as const;

export async function startFixtureServer(): Promise<FixtureServer> {
  const origins = { ORIGIN: "", CROSS_ORIGIN: "", THIRD_ORIGIN: "" };
  const site = new FixtureSite(() => origins);
  const servers = hosts.map((host) => {
    const server = createServer(site.handle);
    return { host, server, close: trackConnections(server) };
  });
  const closeAll = () => Promise.all(servers.map((s) => s.close())).then(() => undefined);
  let ports: number[];
  try {
    ports = await Promise.all(servers.map((s) => listenOnFreePort(s.server, s.host)));
  } catch (error) {
    await closeAll();
    throw error;
  }
  const [origin, crossOrigin, thirdOrigin] = hosts.map((host, i) => `http://${host}:${ports[i]}`) as [
    string,
    string,
    string,
  ];
  Object.assign(origins, { ORIGIN: origin, CROSS_ORIGIN: crossOrigin, THIRD_ORIGIN: thirdOrigin });

  return {
    origin,
    crossOrigin,
    thirdOrigin,
    url: (path) => joinUrl(origin, path),
    crossUrl: (path) => joinUrl(crossOrigin, path),
    thirdUrl: (path) => joinUrl(thirdOrigin, path),
    route: (path, handler) => site.route(path, handler),
    requests: site.requests,
    close: closeAll,
  };
}
