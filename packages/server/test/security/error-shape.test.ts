// Every error the service sends, whoever produces it (a route, Fastify's router, Node's HTTP
// parser, the JSON parser, the shutdown), has the documented shape `{ success: false, error, message, code }`
// and says what was wrong. Each test sends the request an attacker (or a broken client) would.

import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionHandlers } from "../../src/routes/handlers.ts";
import { startService, type TestService } from "../helpers.ts";
import { rawRequest } from "./raw-http.ts";

function expectErrorShape(body: unknown, code: string): { error: string } {
  expect(body).toEqual({ success: false, error: expect.any(String), message: expect.any(String), code });
  // `message` is `error` again, under the reference service's name.
  expect((body as { message: string }).message).toBe((body as { error: string }).error);
  return body as { error: string };
}

describe("errors before any route runs", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({
      handlers: {
        async sessionStart() {
          return { available: true };
        },
        async sessionAct() {
          return { result: { success: true, message: "ok", actionDescription: "x" } };
        },
      },
    });
  });
  afterAll(() => service.close());

  it("a path that is not valid percent-encoding: 400 INVALID_URL, without repeating the path", async () => {
    const response = await service.call("/v1/sessions/%E0%A4%A/cdp?apiKey=sk-secret-in-query");
    expect(response.status).toBe(400);
    const body = expectErrorShape(await response.json(), "INVALID_URL");
    expect(body.error).toContain("percent-encoding");
    expect(body.error).not.toContain("sk-secret-in-query");
    expect(service.logText()).not.toContain("sk-secret-in-query");
  });

  it("a session id longer than a path parameter may be: 414 URI_TOO_LONG", async () => {
    const response = await service.call(`/v1/sessions/${"a".repeat(500)}/replay`);
    expect(response.status).toBe(414);
    expectErrorShape(await response.json(), "URI_TOO_LONG");
  });

  it("a request line and headers over 16 KiB: 431 HEADERS_TOO_LARGE", async () => {
    const response = await rawRequest(
      service.url,
      `GET /v1/${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(response.status).toBe(431);
    expect(response.headers["content-type"]).toContain("application/json");
    expectErrorShape(JSON.parse(response.body), "HEADERS_TOO_LARGE");
  });

  it.each([
    ["a request line that is not HTTP", "GARBAGE\r\n\r\n"],
    [
      "a Content-Length that is not a number",
      "POST /v1/sessions/start HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    ],
    [
      "both Content-Length and chunked encoding",
      "POST /v1/sessions/start HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
    ],
    ["a header name with a space", "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"],
  ])("%s: 400 BAD_HTTP_REQUEST", async (_what, request) => {
    const response = await rawRequest(service.url, request);
    expect(response.status).toBe(400);
    const body = expectErrorShape(JSON.parse(response.body), "BAD_HTTP_REQUEST");
    expect(body.error).toMatch(/not valid HTTP\/1\.1 \(HPE_[A-Z_]+\)/);
  });

  it("a body with a __proto__ key: 400 naming the key, not 'not valid JSON'", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"input":"click","options":{"__proto__":{"timeout":1}}}',
    });
    expect(response.status).toBe(400);
    const body = expectErrorShape(await response.json(), "FORBIDDEN_JSON_KEY");
    expect(body.error).toContain("`options.__proto__`");
  });

  it("a body with constructor.prototype: 400 naming the key", async () => {
    const response = await service.call("/v1/sessions/start", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"sessionCreateParams":{"userMetadata":{"constructor":{"prototype":{"isAdmin":true}}}}}',
    });
    expect(response.status).toBe(400);
    const body = expectErrorShape(await response.json(), "FORBIDDEN_JSON_KEY");
    expect(body.error).toContain("`sessionCreateParams.userMetadata.constructor`");
  });

  it("a body nested 3,000 levels deep: 400 BODY_TOO_DEEP, and the service goes on", async () => {
    const deep = `{"sessionCreateParams":{"userMetadata":{"a":${"[".repeat(3000)}${"]".repeat(3000)}}}}`;
    const response = await service.call("/v1/sessions/start", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: deep,
    });
    expect(response.status).toBe(400);
    const body = expectErrorShape(await response.json(), "BODY_TOO_DEEP");
    expect(body.error).toContain("100 levels");
    expect((await service.call("/v1/sessions/start", { method: "POST", json: {} })).status).toBe(200);
  });
});

describe("errors while the service shuts down", () => {
  it("an operation still running when the grace ends is answered 503 SHUTTING_DOWN", async () => {
    let calls = 0;
    let bothRunning!: () => void;
    const running = new Promise<void>((resolve) => {
      bothRunning = resolve;
    });
    const handlers: Partial<SessionHandlers> = {
      // An operation that never finishes by itself, until its signal aborts.
      sessionAct: (context) =>
        new Promise((_resolve, reject) => {
          if (++calls === 2) bothRunning();
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
        }),
    };
    const service = await startService({ handlers, shutdownGraceMs: 300 });
    const session = await service.session();
    const answer = service.call(`/v1/sessions/${session.id}/act`, { method: "POST", json: { input: "x" } });
    const streamed = service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "true" },
      json: { input: "x" },
    });
    await running;
    const closing = service.close();
    const json = await answer;
    expect(json.status).toBe(503);
    expectErrorShape(await json.json(), "SHUTTING_DOWN");
    const stream = await (await streamed).text();
    const events = stream
      .trim()
      .split("\n\n")
      .map((block) =>
        JSON.parse(
          block
            .split("\n")
            .find((line) => line.startsWith("data: "))!
            .slice("data: ".length),
        ),
      );
    expect(events.at(-1)).toMatchObject({
      type: "system",
      data: { status: "error", code: "SHUTTING_DOWN", error: expect.stringContaining("shutting down") },
    });
    await closing;
  });

  it("a request that arrives while the service closes is answered 503 SHUTTING_DOWN in the service's shape", async () => {
    const handlers: Partial<SessionHandlers> = {
      // Keeps the service closing for the grace (1.5 s).
      sessionAct: (context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
        }),
    };
    const service = await startService({ handlers, shutdownGraceMs: 1500 });
    const session = await service.session();
    const inFlight = service.call(`/v1/sessions/${session.id}/act`, { method: "POST", json: { input: "x" } });
    // A client half-way through sending its request when the close begins.
    const { hostname, port } = new URL(service.url);
    const socket = net.connect(Number(port), hostname);
    await new Promise((resolve) => socket.once("connect", resolve));
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.write(`GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = service.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write("Accept: application/json\r\n\r\n");
    await new Promise((resolve) => socket.once("close", resolve));
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expectErrorShape(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)), "SHUTTING_DOWN");
    expect((await inFlight).status).toBe(503);
    await closing;
  });
});
