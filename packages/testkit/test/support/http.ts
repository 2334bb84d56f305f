// A plain request helper on node:http/https, for what fetch() cannot do in tests: custom CAs,
// requests through a proxy (absolute-form targets) and paths that fetch would normalize.
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";

export interface SimpleResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function request(url: string, options: https.RequestOptions = {}): Promise<SimpleResponse> {
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { agent: false, ...options }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** A request sent to `proxyUrl` for the absolute URL `target`, as a browser using an HTTP proxy does. */
export function requestViaProxy(
  proxyUrl: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<SimpleResponse> {
  const proxy = new URL(proxyUrl);
  return request(proxyUrl, {
    host: proxy.hostname,
    port: proxy.port,
    path: target,
    headers: { host: new URL(target).host, ...headers },
  });
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}
