import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, type TestService } from "./helpers.ts";

type Json = { [key: string]: unknown };

const OPERATIONS = {
  "post /v1/sessions/start": "SessionStart",
  "post /v1/sessions/{id}/act": "SessionAct",
  "post /v1/sessions/{id}/extract": "SessionExtract",
  "post /v1/sessions/{id}/observe": "SessionObserve",
  "post /v1/sessions/{id}/navigate": "SessionNavigate",
  "post /v1/sessions/{id}/agentExecute": "SessionAgentExecute",
  "post /v1/sessions/{id}/end": "SessionEnd",
  "get /v1/sessions/{id}/replay": "SessionReplay",
  "get /v1/sessions/{id}/script": "SessionScript",
  "get /v1/sessions/{id}/cdp": "SessionCdp",
  "get /healthz": "Health",
  "get /readyz": "Ready",
};

describe("GET /v1/openapi.json", () => {
  let service: TestService;
  let document: Json;
  let schemas: Record<string, Json>;

  /** Follows `$ref`s into components.schemas. */
  const resolve = (schema: Json): Json => {
    const ref = schema.$ref;
    if (typeof ref !== "string") return schema;
    const target = schemas[ref.replace("#/components/schemas/", "")];
    expect(target, `dangling ${ref}`).toBeDefined();
    return resolve(target!);
  };

  /** Every object schema reachable from `schema`, refs followed, each visited once. */
  const objectsIn = (schema: Json, seen = new Set<Json>()): Json[] => {
    const resolved = resolve(schema);
    if (seen.has(resolved)) return [];
    seen.add(resolved);
    const found: Json[] = resolved.type === "object" ? [resolved] : [];
    const children = [
      ...Object.values((resolved.properties ?? {}) as Record<string, Json>),
      ...(resolved.items ? [resolved.items as Json] : []),
      ...((resolved.anyOf ?? []) as Json[]),
      ...(typeof resolved.additionalProperties === "object" ? [resolved.additionalProperties as Json] : []),
    ];
    for (const child of children) found.push(...objectsIn(child, seen));
    return found;
  };

  const replayResponse = () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const responses = paths["/v1/sessions/{id}/replay"]!.get!.responses as Record<string, Json>;
    const content = responses["200"]!.content as Record<string, { schema: Json }>;
    return content["application/json"]!.schema;
  };

  beforeAll(async () => {
    service = await startService();
    document = await (await fetch(`${service.url}/v1/openapi.json`)).json();
    schemas = ((document.components as Json).schemas ?? {}) as Record<string, Json>;
  });
  afterAll(() => service.close());

  it("is OpenAPI 3.1.0, API version 3.1.0, labelled ALPHA", () => {
    expect(document.openapi).toBe("3.1.0");
    const info = document.info as Json;
    expect(info.version).toBe("3.1.0");
    expect(info.title).toContain("ALPHA");
    expect(info.description).toContain("ALPHA software and is not production ready");
    expect(info.description).toContain("milliseconds since the Unix epoch");
  });

  it("declares the API key scheme and the deprecated project id scheme", () => {
    const schemes = (document.components as Json).securitySchemes as Record<string, Json>;
    expect(schemes.PlatformApiKey).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "x-platform-api-key",
    });
    expect(schemes.PlatformProjectId).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "x-platform-project-id",
    });
    expect(schemes.PlatformProjectId?.description).toMatch(/^Deprecated/);
    expect(document.security).toEqual([
      { PlatformApiKey: [], PlatformProjectId: [] },
      { PlatformApiKey: [] },
    ]);
  });

  it("has exactly the design's operations, with their operation ids", () => {
    const found: Record<string, unknown> = {};
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(item))
        found[`${method} ${path}`] = operation.operationId;
    }
    expect(found).toEqual(OPERATIONS);
  });

  it("documents the streaming, language, SDK, model key and cache bypass headers of the operations", () => {
    const act = (document.paths as Record<string, Record<string, Json>>)["/v1/sessions/{id}/act"]!.post!;
    const headers = (act.parameters as Json[]).filter((p) => p.in === "header").map((p) => p.name);
    expect(headers.sort()).toEqual(
      [
        "x-language",
        "x-model-api-key",
        "x-platform-cache-bypass",
        "browserbase-cache-bypass",
        "x-sdk-version",
        "x-stream-response",
        "x-stream-event-names",
      ].sort(),
    );
    const ok = (act.responses as Record<string, Json>)["200"]!.content as Record<string, { schema: Json }>;
    expect(ok["text/event-stream"]?.schema).toEqual({ $ref: "#/components/schemas/StreamEvent" });
  });

  it("has no dangling references", () => {
    const refs = JSON.stringify(document).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs)
      expect(schemas[JSON.parse(ref).replace("#/components/schemas/", "")]).toBeDefined();
  });

  it("describes the replay response exactly as spec 2.2-2.6, closed to extra properties", () => {
    const root = resolve(replayResponse());
    expect(root.required).toEqual(["success", "data"]);
    const objects = objectsIn(replayResponse());
    const shaped = objects.filter((o) => o.properties);
    // ReplayResponse, ReplayResultOutput, ReplayPageOutput, ReplayActionOutput, TokenUsageOutput.
    expect(shaped).toHaveLength(5);
    for (const object of shaped) expect(object.additionalProperties).toBe(false);
    // The only open objects are the spec's "object with string keys and values of any type".
    const open = objects.filter((o) => !o.properties);
    expect(open).toHaveLength(2);
    for (const object of open) expect(object.propertyNames).toEqual({ type: "string" });

    const action = resolve(schemas.ReplayActionOutput!);
    expect(action.required).toEqual(["method", "parameters", "result", "timestamp"]);
    const page = resolve(schemas.ReplayPageOutput!);
    expect(page.required).toEqual(["url", "timestamp", "duration", "actions"]);
    expect(resolve(schemas.ReplayResultOutput!).required).toEqual(["pages"]);
    expect(resolve(schemas.TokenUsageOutput!).required).toBeUndefined();
  });

  it("says that timestamps are epoch milliseconds and durations milliseconds", () => {
    const action = resolve(schemas.ReplayActionOutput!).properties as Record<string, Json>;
    const page = resolve(schemas.ReplayPageOutput!).properties as Record<string, Json>;
    const usage = resolve(schemas.TokenUsageOutput!).properties as Record<string, Json>;
    expect(action.timestamp?.description).toContain("Milliseconds since the Unix epoch");
    expect(action.endTime?.description).toContain("Milliseconds since the Unix epoch");
    expect(page.timestamp?.description).toContain("Milliseconds since the Unix epoch");
    expect(page.duration?.description).toMatch(/^Milliseconds/);
    expect(usage.timeMs?.description).toContain("milliseconds");
  });
});
