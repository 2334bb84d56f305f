import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionHandlers } from "../src/routes/handlers.ts";
import { ReplayResponse } from "../src/schemas/session-replay.ts";
import { startService, type TestService } from "./helpers.ts";

describe("GET /v1/sessions/{id}/replay", () => {
  let service: TestService;
  const handlers: Partial<SessionHandlers> = {
    async sessionStart() {
      return { available: true, cdpUrl: "ws://127.0.0.1:1/devtools/browser/x" };
    },
  };

  beforeAll(async () => {
    service = await startService({ handlers });
  });
  afterAll(() => service.close());

  it("answers the session's actions grouped into pages, exactly in the spec's shape", async () => {
    const started = await service.call("/v1/sessions/start", {
      method: "POST",
      headers: { "x-language": "python" },
      json: { browserbaseSessionCreateParams: { timeout: 60 } },
    });
    expect(started.status).toBe(200);
    const { data } = await started.json();
    expect(data).toEqual({
      sessionId: expect.any(String),
      available: true,
      cdpUrl: "ws://127.0.0.1:1/devtools/browser/x",
    });
    const stored = await service.store.getSession(data.sessionId);
    // The alias is stored under its primary name.
    expect(stored?.params).toEqual({ sessionCreateParams: { timeout: 60 } });

    await service.store.appendAction(data.sessionId, {
      method: "act",
      parameters: { input: "click" },
      result: { success: true },
      timestamp: 1000,
      endTime: 1300,
      pageUrl: "https://a.test/",
      tokenUsage: { inputTokens: 10, outputTokens: 2, timeMs: 250 },
    });
    await service.store.appendAction(data.sessionId, {
      method: "extract",
      parameters: {},
      result: { pageText: "hello" },
      timestamp: 2000,
      pageUrl: "https://b.test/",
    });

    const response = await service.call(`/v1/sessions/${data.sessionId}/replay`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toStrictEqual({
      success: true,
      data: {
        pages: [
          {
            url: "https://a.test/",
            timestamp: 1000,
            duration: 300,
            actions: [
              {
                method: "act",
                parameters: { input: "click" },
                result: { success: true },
                timestamp: 1000,
                endTime: 1300,
                tokenUsage: { inputTokens: 10, outputTokens: 2, timeMs: 250 },
              },
            ],
          },
          {
            url: "https://b.test/",
            timestamp: 2000,
            duration: 0,
            actions: [{ method: "extract", parameters: {}, result: { pageText: "hello" }, timestamp: 2000 }],
          },
        ],
        clientLanguage: "python",
      },
    });
    // The strict schema (no extra properties anywhere) accepts it.
    expect(ReplayResponse.safeParse(body).success).toBe(true);
  });

  it("stays readable after the session ended", async () => {
    const session = await service.session();
    await service.store.endSession(session.id);
    const response = await service.call(`/v1/sessions/${session.id}/replay`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, data: { pages: [] } });
  });

  it("answers 404 for an unknown session and for another project's, alike", async () => {
    const foreign = await service.store.createSession({ projectId: "proj_other", keyId: "k" });
    const theirs = await service.call(`/v1/sessions/${foreign.id}/replay`);
    const unknownId = randomUUID();
    const unknown = await service.call(`/v1/sessions/${unknownId}/replay`);
    expect([theirs.status, unknown.status]).toEqual([404, 404]);
    const [a, b] = [await theirs.json(), await unknown.json()];
    expect(a.error.replace(foreign.id, unknownId)).toBe(b.error);
    expect(a.code).toBe("SESSION_NOT_FOUND");
  });

  it("refuses sessionId and browserbaseSessionID that disagree", async () => {
    const response = await service.call("/v1/sessions/start", {
      method: "POST",
      json: { sessionId: randomUUID(), browserbaseSessionID: randomUUID() },
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain("`browserbaseSessionID`");
  });

  it("resumes the caller's own session through the alias browserbaseSessionID", async () => {
    const session = await service.session();
    const response = await service.call("/v1/sessions/start", {
      method: "POST",
      json: { browserbaseSessionID: session.id },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).data.sessionId).toBe(session.id);
    const foreign = await service.store.createSession({ projectId: "proj_other", keyId: "k" });
    const refused = await service.call("/v1/sessions/start", {
      method: "POST",
      json: { sessionId: foreign.id },
    });
    expect(refused.status).toBe(404);
  });
});
