// Input that would stall or crash the service for everyone, sent by a tenant with a valid key to a
// real service (real Chromium, the scripted model): each is refused with a 400 naming the limit or
// the field, before any model call, and the service (and the bystander's session) carries on.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/cli/options.ts";
import {
  type Fixtures,
  type LiveService,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "../live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
let attacker: string;
let bystander: string;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  [attacker, bystander] = await Promise.all([svc.start(), svc.start({}, { key: svc.otherKey.key })]);
  await ok(await svc.op(attacker, "navigate", { url: fx.site.url("table.html") }));
  await ok(await svc.op(bystander, "navigate", { url: fx.site.url("form.html") }, { key: svc.otherKey.key }));
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});
beforeEach(() => {
  fx.model.clear();
  fx.model.resetRequests();
});

/** The error body of a 400, checked to have the service's shape. */
async function refused(
  response: Response,
): Promise<{ error: string; code: string; details?: Record<string, unknown> }> {
  const text = await response.text();
  expect(response.status, text).toBe(400);
  const body = JSON.parse(text);
  expect(body).toMatchObject({ success: false, error: expect.any(String), code: expect.any(String) });
  return body;
}

async function bystanderStillWorks(): Promise<void> {
  const started = performance.now();
  const text = await ok<{ result: { pageText: string } }>(
    await svc.op(bystander, "extract", {}, { key: svc.otherKey.key }),
  );
  expect(text.result.pageText).toContain("textbox: Username");
  // Generous: the point is that nobody waited a minute behind someone else's schema.
  expect(performance.now() - started).toBeLessThan(15_000);
}

function extract(schema: unknown) {
  return svc.op(
    attacker,
    "extract",
    { instruction: "the colour", schema, options: { model: scriptedModelConfig(fx.model) } },
    { headers: WITH_MODEL_KEY },
  );
}

describe("extract schemas", () => {
  it("an enum of 60,000 values (a 0.5 MB body): 400 naming the limit, no model call", async () => {
    const schema = {
      type: "object",
      properties: {
        colour: { type: "string", enum: Array.from({ length: 60_000 }, (_, i) => `colour-${i}`) },
      },
    };
    const answer = extract(schema);
    await bystanderStillWorks();
    const body = await refused(await answer);
    expect(body.code).toBe("INVALID_ARGUMENT");
    expect(body.error).toContain("an enum of 60000 values; at most 1000 are allowed (limit maxEnumValues)");
    expect(body.details).toMatchObject({ limit: "maxEnumValues", max: 1000, path: "properties.colour.enum" });
    expect(fx.model.requests).toHaveLength(0);
  });

  it("a schema that refers to itself: 400, no model call", async () => {
    const body = await refused(
      await extract({
        type: "object",
        properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      }),
    );
    expect(body.details).toMatchObject({ limit: "ref", path: "properties.children.items.$ref" });
    expect(fx.model.requests).toHaveLength(0);
  });

  it("a schema 3,000 levels deep: 400, no model call, no stack overflow", async () => {
    const deep = `${'{"type":"object","properties":{"a":'.repeat(3000)}{"type":"string"}${"}}".repeat(3000)}`;
    const response = await svc.call(`/v1/sessions/${attacker}/extract`, {
      method: "POST",
      headers: { "content-type": "application/json", ...WITH_MODEL_KEY },
      body: `{"instruction":"the colour","options":{"model":${JSON.stringify(scriptedModelConfig(fx.model))}},"schema":${deep}}`,
    });
    const body = await refused(response);
    expect(body.code).toBe("BODY_TOO_DEEP");
    expect(fx.model.requests).toHaveLength(0);
    // Just within the body's limit but over the schema's: the schema's own limit answers.
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) schema = { type: "object", properties: { a: schema } };
    expect((await refused(await extract(schema))).details).toMatchObject({ limit: "maxDepth", max: 64 });
    expect(fx.model.requests).toHaveLength(0);
  });

  it("a schema within the limits still reaches the model and is answered", async () => {
    fx.model.on("the colour", { colour: "colour-7" });
    const schema = {
      type: "object",
      properties: { colour: { type: "string", enum: Array.from({ length: 1000 }, (_, i) => `colour-${i}`) } },
      required: ["colour"],
    };
    const data = await ok<{ result: Record<string, unknown> }>(await extract(schema));
    expect(data.result).toMatchObject({ colour: "colour-7" });
  });
});

describe("timeouts and sizes", () => {
  const overflow = 2 ** 31;

  it("an operation timeout of 2^31 ms: 400 naming options.timeout (not an immediate 504)", async () => {
    for (const name of ["act", "extract", "observe", "navigate"]) {
      const body = await refused(
        await svc.op(attacker, name, {
          ...(name === "act" ? { input: "click" } : {}),
          ...(name === "navigate" ? { url: fx.site.url("table.html") } : {}),
          options: { timeout: overflow },
        }),
      );
      expect(body.error).toContain("`options.timeout`: must be at most 3600000");
    }
    // The largest allowed timeout means what it says: the call runs and answers.
    const data = await ok(
      await svc.op(attacker, "navigate", { url: fx.site.url("table.html"), options: { timeout: 3_600_000 } }),
    );
    expect(data.result).toMatchObject({ status: 200 });
  });

  it("session timeouts of 2^31: 400 naming the field, and the largest allowed keeps the session", async () => {
    for (const [body, field] of [
      [{ sessionCreateParams: { timeout: overflow / 1000 } }, "`sessionCreateParams.timeout`"],
      [{ browserbaseSessionCreateParams: { timeout: overflow } }, "`browserbaseSessionCreateParams.timeout`"],
      [{ actTimeoutMs: overflow }, "`actTimeoutMs`"],
      [{ domSettleTimeoutMs: overflow }, "`domSettleTimeoutMs`"],
      [{ browser: { type: "local", launchOptions: { connectTimeoutMs: overflow } } }, "connectTimeoutMs"],
      [{ sessionCreateParams: { browserSettings: { viewport: { width: 100_000, height: 100 } } } }, "width"],
    ] as const) {
      const answer = await refused(await svc.call("/v1/sessions/start", { json: body }));
      expect(answer.error).toContain(field);
    }
    const id = await svc.start({ sessionCreateParams: { timeout: 86_400 }, actTimeoutMs: 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await svc.store.getSession(id))?.status).toBe("active");
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    await ok(await svc.call(`/v1/sessions/${id}/end`, { method: "POST" }));
  });

  it("operator durations beyond what a timer holds are refused at start-up", () => {
    expect(() => parseCommand(["--session-idle-timeout", String(overflow)], {})).toThrow(
      /--session-idle-timeout must be a number greater than 0 and at most 2147483 \(seconds\)/,
    );
    expect(parseCommand(["--session-idle-timeout", "2147483"], {})).toMatchObject({
      sessionIdleTimeoutMs: 2_147_483_000,
    });
  });
});
