import { randomUUID } from "node:crypto";
import { ServiceElementNotFoundError, ServiceInvalidArgumentError } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionHandlers } from "../src/routes/handlers.ts";
import { startService, type TestService } from "./helpers.ts";

const actResult = { success: true, message: "clicked", actionDescription: "click it" };

describe("error answers", () => {
  let service: TestService;
  let failWith: unknown;
  let cacheStatus: "HIT" | "MISS" | undefined;

  const handlers: Partial<SessionHandlers> = {
    async sessionStart() {
      return { available: true };
    },
    async sessionAct() {
      if (failWith) throw failWith;
      return { result: { ...actResult, ...(cacheStatus ? { cacheStatus } : {}) }, actionId: "a1" };
    },
    async sessionEnd() {},
  };

  beforeAll(async () => {
    service = await startService({ handlers, bodyLimit: 2000, maxSessions: 3, maxSessionsPerProject: 3 });
  });
  afterAll(() => service.close());

  it("400 names the missing field", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, { method: "POST", json: {} });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ success: false, code: "INVALID_REQUEST" });
    expect(body.error).toContain("`input`");
  });

  it("400 names a nested field with a wrong type", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      json: { input: "click", options: { timeout: "soon" } },
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain("`options.timeout`");
  });

  it("400 for a body that is not JSON", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      error: "The request body is not valid JSON.",
      message: "The request body is not valid JSON.",
      code: "INVALID_JSON",
    });
  });

  it("400 for a header with a value it does not allow", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "maybe" },
      json: { input: "click" },
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain("`x-stream-response`");
  });

  it("413 for a body over the configured limit", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      json: { input: "x".repeat(5000) },
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ success: false, code: "BODY_TOO_LARGE" });
  });

  it("404 alike for an unknown session and another project's session", async () => {
    const unknownId = randomUUID();
    const unknown = await service.call(`/v1/sessions/${unknownId}/act`, {
      method: "POST",
      json: { input: "x" },
    });
    const foreign = await service.store.createSession({ projectId: "proj_someone_else", keyId: "k" });
    const theirs = await service.call(`/v1/sessions/${foreign.id}/act`, {
      method: "POST",
      json: { input: "x" },
    });
    expect(unknown.status).toBe(404);
    expect(theirs.status).toBe(404);
    const [a, b] = [await unknown.json(), await theirs.json()];
    expect(a.code).toBe("SESSION_NOT_FOUND");
    expect(b.code).toBe("SESSION_NOT_FOUND");
    expect(b.error.replace(foreign.id, unknownId)).toBe(a.error);
  });

  it("410 for an operation on an ended session, whose replay stays readable", async () => {
    const session = await service.session();
    // No body at all, with a JSON content type, as some clients send it.
    const end = await service.call(`/v1/sessions/${session.id}/end`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(end.status).toBe(200);
    expect(await end.json()).toEqual({ success: true });
    const act = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      json: { input: "x" },
    });
    expect(act.status).toBe(410);
    expect(await act.json()).toMatchObject({ success: false, code: "SESSION_ENDED" });
    const again = await service.call(`/v1/sessions/${session.id}/end`, { method: "POST" });
    expect(again.status).toBe(410);
    expect((await service.call(`/v1/sessions/${session.id}/replay`)).status).toBe(200);
  });

  it("429 when the service is at its session limit, until a session ends", async () => {
    for (const active of await service.store.listActiveSessions()) await service.store.endSession(active.id);
    const started: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await service.call("/v1/sessions/start", { method: "POST", json: {} });
      expect(response.status).toBe(200);
      started.push((await response.json()).data.sessionId);
    }
    const refused = await service.call("/v1/sessions/start", { method: "POST", json: {} });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ success: false, code: "AT_CAPACITY" });
    await service.call(`/v1/sessions/${started[0]}/end`, { method: "POST" });
    expect((await service.call("/v1/sessions/start", { method: "POST", json: {} })).status).toBe(200);
    for (const active of await service.store.listActiveSessions()) await service.store.endSession(active.id);
  });

  it("500 tells the client nothing of the cause, and the log everything", async () => {
    const session = await service.session();
    failWith = new Error("db password is hunter2 at /srv/secret/path");
    try {
      const response = await service.call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        json: { input: "x" },
      });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).not.toContain("hunter2");
      expect(text).not.toContain("/srv/secret");
      expect(text).not.toMatch(/at .*\.ts:\d+/);
      const body = JSON.parse(text);
      expect(body).toMatchObject({ success: false, code: "INTERNAL" });
      const logged = service.logs().find((line) => line.msg === "request failed")!;
      expect(JSON.stringify(logged)).toContain("hunter2 at /srv/secret/path");
      expect((logged.err as { stack?: string }).stack).toContain("errors.test.ts");
      expect(body.error).toContain(String(logged.reqId));
    } finally {
      failWith = undefined;
    }
  });

  it("passes Deckhand's own errors on with their code, message and fields", async () => {
    const session = await service.session();
    failWith = new ServiceElementNotFoundError("//button[@id='buy']");
    try {
      const notFound = await service.call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        json: { input: "x" },
      });
      expect(notFound.status).toBe(422);
      // `details`: what a client needs to rebuild the error (here the selector and the reason a
      // program switches on), never its cause.
      expect(await notFound.json()).toEqual({
        success: false,
        code: "ELEMENT_NOT_FOUND",
        error: (failWith as Error).message,
        message: (failWith as Error).message,
        details: { selector: "//button[@id='buy']", reason: "not-found" },
      });
      failWith = new ServiceInvalidArgumentError("method 'dance' is not supported");
      const invalid = await service.call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        json: { input: "x" },
      });
      expect(invalid.status).toBe(400);
      expect(await invalid.json()).toMatchObject({ code: "INVALID_ARGUMENT" });
    } finally {
      failWith = undefined;
    }
  });

  it("reports a server cache hit in the x-platform-cache-status header", async () => {
    const session = await service.session();
    failWith = undefined;
    cacheStatus = "HIT";
    try {
      const response = await service.call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        json: { input: "x" },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-platform-cache-status")).toBe("HIT");
      // Under the reference's name too, for its SDKs.
      expect(response.headers.get("browserbase-cache-status")).toBe("HIT");
      const { data } = await response.json();
      expect(data.result.cacheStatus).toBe("HIT");
      expect(data.cacheStatus).toBe("HIT");
    } finally {
      cacheStatus = undefined;
    }
  });

  it("404 JSON for an unknown route outside /v1", async () => {
    const response = await fetch(`${service.url}/nowhere`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      success: false,
      error: "No route GET /nowhere. See GET /v1/openapi.json for the API.",
      // The reference service's clients read `message`.
      message: "No route GET /nowhere. See GET /v1/openapi.json for the API.",
      code: "NOT_FOUND",
    });
  });
});

describe("routes without a handler", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(() => service.close());

  it.each([
    ["sessions/start", {}],
    ["sessions/{id}/act", { input: "x" }],
    ["sessions/{id}/extract", {}],
    ["sessions/{id}/observe", {}],
    ["sessions/{id}/navigate", { url: "https://example.test/" }],
    ["sessions/{id}/agentExecute", { agentConfig: {}, executeOptions: { instruction: "do it" } }],
    ["sessions/{id}/end", undefined],
  ])("POST /v1/%s answers 501 NOT_IMPLEMENTED", async (route, json) => {
    const session = await service.session();
    const response = await service.call(`/v1/${route.replace("{id}", session.id)}`, {
      method: "POST",
      ...(json !== undefined ? { json } : {}),
    });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({
      success: false,
      error: "not implemented yet",
      message: "not implemented yet",
      code: "NOT_IMPLEMENTED",
    });
  });
});
