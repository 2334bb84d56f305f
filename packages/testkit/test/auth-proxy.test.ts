import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type AuthProxy,
  type FixtureServer,
  fixtureTls,
  type HttpsFixtureServer,
  startAuthProxy,
  startFixtureServer,
  startHttpsServer,
} from "../src/index.ts";
import { basicAuth, requestViaProxy } from "./support/http.ts";

let proxy: AuthProxy;
let pages: FixtureServer;
let securePages: HttpsFixtureServer;
const goodAuth = basicAuth("deck", "hand s3cret");

beforeAll(async () => {
  [proxy, pages, securePages] = await Promise.all([
    startAuthProxy({ username: "deck", password: "hand s3cret" }),
    startFixtureServer(),
    startHttpsServer(),
  ]);
});

afterAll(async () => {
  await Promise.all([proxy?.close(), pages?.close(), securePages?.close()]);
});

/** Opens a CONNECT tunnel through the proxy; resolves to the status and, on 200, the socket. */
function connect(
  target: string,
  headers: Record<string, string>,
): Promise<{ status: number; socket: Socket }> {
  const { hostname, port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: hostname,
      port,
      method: "CONNECT",
      path: target,
      headers,
      agent: false,
    });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, socket: res.socket });
    });
    req.on("error", reject);
    req.end();
  });
}

it("exposes its address as a URL and as host:port", () => {
  expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(proxy.server).toBe(proxy.url.slice("http://".length));
});

it("answers 407 with a Basic challenge when credentials are missing or wrong", async () => {
  const before = proxy.authFailures;
  const missing = await requestViaProxy(proxy.url, pages.url("index.html"));
  expect(missing.status).toBe(407);
  expect(missing.headers["proxy-authenticate"]).toMatch(/^Basic realm="[^"]+"$/);
  const wrong = await requestViaProxy(proxy.url, pages.url("index.html"), {
    "proxy-authorization": basicAuth("deck", "nope"),
  });
  expect(wrong.status).toBe(407);
  expect(proxy.authFailures).toBe(before + 2);
  expect(proxy.proxiedRequests).not.toContain(pages.url("index.html"));
});

it("forwards a plain HTTP request when the credentials are right", async () => {
  const target = pages.crossUrl("form.html");
  const response = await requestViaProxy(proxy.url, target, { "proxy-authorization": goodAuth });
  expect(response.status).toBe(200);
  expect(response.body).toContain("<title>Sign in</title>");
  expect(proxy.proxiedRequests).toContain(target);
  // The credentials are for the proxy only and must not travel on.
  const received = pages.requests.findLast((r) => r.path === "/form.html");
  expect(received?.headers["proxy-authorization"]).toBeUndefined();
});

it("tunnels CONNECT to an HTTPS server when the credentials are right", async () => {
  const target = new URL(securePages.origin).host;
  const { status, socket } = await connect(target, { "proxy-authorization": goodAuth });
  expect(status).toBe(200);
  expect(proxy.proxiedRequests).toContain(target);
  const body = await new Promise<string>((resolve, reject) => {
    const req = https.get(
      securePages.url("index.html"),
      { createConnection: () => tls.connect({ socket, host: "127.0.0.1", ca: fixtureTls().cert }) },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve(text));
      },
    );
    req.on("error", reject);
  });
  expect(body).toContain("<title>Deckhand fixture</title>");
  socket.destroy();
});

it("refuses CONNECT without credentials", async () => {
  const before = proxy.authFailures;
  const { status, socket } = await connect(new URL(securePages.origin).host, {});
  socket.destroy();
  expect(status).toBe(407);
  expect(proxy.authFailures).toBe(before + 1);
});
