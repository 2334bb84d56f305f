// An HTTP proxy that demands Basic credentials, for tests of the `proxy` launch option (server,
// username, password). The forwarding and CONNECT tunnelling come from the `proxy` package; this
// file adds the credential check and the records a test asserts on.
//
// Chromium sends loopback traffic past any proxy unless told otherwise: a test that proxies the
// fixture server must launch with --proxy-bypass-list=<-loopback>.
import type { IncomingMessage } from "node:http";
import { createServer } from "node:http";
import { createProxy } from "proxy";
import { listenOnFreePort, trackConnections } from "./listen.ts";

export interface AuthProxyOptions {
  username: string;
  password: string;
}

export interface AuthProxy {
  /** Like "http://127.0.0.1:41234". */
  readonly url: string;
  /** Like "127.0.0.1:41234", the form of the `proxy.server` launch option. */
  readonly server: string;
  /** What was forwarded after a successful check: absolute URLs, and "host:port" for CONNECT. */
  readonly proxiedRequests: string[];
  /** How many requests were answered 407 (missing or wrong credentials). */
  readonly authFailures: number;
  close(): Promise<void>;
}

function hasCredentials(req: IncomingMessage, { username, password }: AuthProxyOptions): boolean {
  const header = req.headers["proxy-authorization"];
  if (typeof header !== "string") return false;
  const [scheme, encoded] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== "basic" || encoded === undefined) return false;
  return Buffer.from(encoded, "base64").toString("utf8") === `${username}:${password}`;
}

export async function startAuthProxy(options: AuthProxyOptions): Promise<AuthProxy> {
  const proxiedRequests: string[] = [];
  let authFailures = 0;
  const server = createProxy(createServer());
  // The package answers 407 with `Proxy-Authenticate: Basic realm="proxy"` when this is false.
  server.authenticate = (req) => {
    if (hasCredentials(req, options)) {
      proxiedRequests.push(req.url ?? "");
      return true;
    }
    authFailures += 1;
    return false;
  };
  const close = trackConnections(server);
  const port = await listenOnFreePort(server, "127.0.0.1");
  return {
    url: `http://127.0.0.1:${port}`,
    server: `127.0.0.1:${port}`,
    proxiedRequests,
    get authFailures() {
      return authFailures;
    },
    close,
  };
}
