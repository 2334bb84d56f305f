import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperatorKeys } from "../src/store/api-keys.ts";
import { anonymous, startService, type TestService } from "./helpers.ts";

describe("API key authentication", () => {
  let service: TestService;
  const operatorKey = "operator-key-for-tests-0123456789";

  beforeAll(async () => {
    service = await startService({ operatorKeys: [operatorKey] });
  });
  afterAll(() => service.close());

  it("answers 401 with a JSON error body when the key is missing", async () => {
    const session = await service.session();
    const response = await anonymous(service, `/v1/sessions/${session.id}/replay`);
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      success: false,
      error: "Missing API key: send it in the x-platform-api-key header.",
      message: "Missing API key: send it in the x-platform-api-key header.",
      code: "UNAUTHORIZED",
    });
  });

  it("answers 401 for a wrong key", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/replay`, {
      headers: { "x-platform-api-key": `${service.key.key.slice(0, -2)}xx` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
  });

  it("answers 401 for a revoked key", async () => {
    const revoked = await service.store.createKey({ name: "revoked", projectId: service.key.projectId });
    await service.store.revokeKey(revoked.id);
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/replay`, {
      headers: { "x-platform-api-key": revoked.key },
    });
    expect(response.status).toBe(401);
  });

  it("lets a valid key through and ignores x-platform-project-id", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/replay`, {
      headers: { "x-platform-project-id": "some-other-project" },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, data: { pages: [] } });
  });

  it("accepts an operator key from DECKHAND_API_KEYS, in a project derived from the key", async () => {
    const identity = new OperatorKeys([operatorKey]).verify(operatorKey)!;
    // The same key gives the same project in another process or node.
    expect(new OperatorKeys([" other ", operatorKey]).verify(operatorKey)).toEqual(identity);
    expect(new OperatorKeys([operatorKey]).verify("not-it")).toBeNull();
    const session = await service.store.createSession({
      projectId: identity.projectId,
      keyId: identity.keyId,
    });
    const response = await service.call(`/v1/sessions/${session.id}/replay`, {
      headers: { "x-platform-api-key": operatorKey },
    });
    expect(response.status).toBe(200);
  });

  it("serves the OpenAPI document without a key", async () => {
    const response = await anonymous(service, "/v1/openapi.json");
    expect(response.status).toBe(200);
    expect((await response.json()).openapi).toBe("3.1.0");
  });

  it("does not reveal which /v1 routes exist to a caller without a key", async () => {
    expect((await anonymous(service, "/v1/no-such-route")).status).toBe(401);
    const withKey = await service.call("/v1/no-such-route");
    expect(withKey.status).toBe(404);
    expect(await withKey.json()).toMatchObject({ success: false, code: "NOT_FOUND" });
  });
});
