// The fixture pages over HTTPS with the committed self-signed certificate. Browsers do not trust
// it, which is what tests of certificate errors need; tests that want the page to load pass
// --ignore-certificate-errors-spki-list with `fixtureTls().spkiSha256` (or ignore all errors).
import { createHash, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { join } from "node:path";
import { type FixtureRequest, FixtureSite, joinUrl, type RouteHandler } from "./fixture-site.ts";
import { listenOnFreePort, trackConnections } from "./listen.ts";
import { tlsDir } from "./paths.ts";

export interface FixtureTls {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
  /** Base64 SHA-256 of the public key, the form Chromium's --ignore-certificate-errors-spki-list takes. */
  spkiSha256: string;
}

export function fixtureTls(): FixtureTls {
  const certPath = join(tlsDir, "cert.pem");
  const keyPath = join(tlsDir, "key.pem");
  const cert = readFileSync(certPath, "utf8");
  const spki = new X509Certificate(cert).publicKey.export({ type: "spki", format: "der" });
  return {
    certPath,
    keyPath,
    cert,
    key: readFileSync(keyPath, "utf8"),
    spkiSha256: createHash("sha256").update(spki).digest("base64"),
  };
}

export interface HttpsFixtureServer {
  /** Like "https://127.0.0.1:41234". */
  readonly origin: string;
  url(path?: string): string;
  route(path: string, handler: RouteHandler): () => void;
  readonly requests: FixtureRequest[];
  close(): Promise<void>;
}

/**
 * One site only (the certificate names 127.0.0.1 and localhost): in pages served from here,
 * `{{CROSS_ORIGIN}}` and `{{THIRD_ORIGIN}}` are the same HTTPS origin, so frame pages load
 * same-origin. Use startFixtureServer() for cross-site frames.
 */
export async function startHttpsServer(): Promise<HttpsFixtureServer> {
  const tls = fixtureTls();
  const origins = { ORIGIN: "", CROSS_ORIGIN: "", THIRD_ORIGIN: "" };
  const site = new FixtureSite(() => origins);
  const server = createServer({ cert: tls.cert, key: tls.key }, site.handle);
  const close = trackConnections(server);
  let port: number;
  try {
    port = await listenOnFreePort(server, "127.0.0.1");
  } catch (error) {
    await close();
    throw error;
  }
  const origin = `https://127.0.0.1:${port}`;
  Object.assign(origins, { ORIGIN: origin, CROSS_ORIGIN: origin, THIRD_ORIGIN: origin });
  return {
    origin,
    url: (path) => joinUrl(origin, path),
    route: (path, handler) => site.route(path, handler),
    requests: site.requests,
    close,
  };
}
