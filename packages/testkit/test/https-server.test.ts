import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixtureTls, type HttpsFixtureServer, startHttpsServer } from "../src/index.ts";
import { request } from "./support/http.ts";

let server: HttpsFixtureServer;

beforeAll(async () => {
  server = await startHttpsServer();
});

afterAll(async () => {
  await server?.close();
});

it("serves the fixture pages over HTTPS on 127.0.0.1", async () => {
  expect(server.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  const response = await request(server.url("index.html"), { ca: fixtureTls().cert });
  expect(response.status).toBe(200);
  expect(response.body).toContain("<title>Deckhand fixture</title>");
});

it("uses a certificate that is not trusted by default", async () => {
  await expect(request(server.url("index.html"))).rejects.toThrow(/self-signed|self signed/);
});

it("has a certificate for 127.0.0.1 and localhost that is valid for decades", () => {
  const cert = new X509Certificate(fixtureTls().cert);
  expect(cert.subjectAltName).toContain("IP Address:127.0.0.1");
  expect(cert.subjectAltName).toContain("DNS:localhost");
  expect(new Date(cert.validTo).getFullYear()).toBeGreaterThan(new Date().getFullYear() + 50);
  expect(Buffer.from(fixtureTls().spkiSha256, "base64")).toHaveLength(32);
});

it("fills every origin placeholder with its own HTTPS origin", async () => {
  const page = await request(server.url("frames/cross-site.html"), { ca: fixtureTls().cert });
  expect(page.body).toContain(`src="${server.origin}/frames/child.html"`);
});

it("supports routes and logs requests like the HTTP server", async () => {
  const unregister = server.route("/secure-only", (_req, res) => {
    res.end("secure");
  });
  const response = await request(server.url("/secure-only"), { ca: fixtureTls().cert });
  expect(response.body).toBe("secure");
  expect(server.requests.some((r) => r.path === "/secure-only")).toBe(true);
  unregister();
});
