// The replay of a real session, checked against SERVICE-SPEC.md 2.2-2.6 by walking the answer:
// every object has exactly the spec's fields (required ones present, no others) with the spec's
// types. Token usage and cost come from the session's metrics around each operation.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { match } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import {
  type Fixtures,
  idOf,
  type LiveService,
  MODEL_KEY,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

// ---------- the spec's tables, as data ----------

type FieldType = "boolean" | "string" | "number" | "anyObject" | { object: string } | { arrayOf: string };
interface Field {
  type: FieldType;
  required: boolean;
}

/** Spec 2.2-2.6. */
const SPEC: Record<string, Record<string, Field>> = {
  ReplayResponse: {
    success: { type: "boolean", required: true },
    data: { type: { object: "ReplayResultOutput" }, required: true },
  },
  ReplayResultOutput: {
    pages: { type: { arrayOf: "ReplayPageOutput" }, required: true },
    clientLanguage: { type: "string", required: false },
  },
  ReplayPageOutput: {
    url: { type: "string", required: true },
    timestamp: { type: "number", required: true },
    duration: { type: "number", required: true },
    actions: { type: { arrayOf: "ReplayActionOutput" }, required: true },
  },
  ReplayActionOutput: {
    method: { type: "string", required: true },
    parameters: { type: "anyObject", required: true },
    result: { type: "anyObject", required: true },
    timestamp: { type: "number", required: true },
    endTime: { type: "number", required: false },
    tokenUsage: { type: { object: "TokenUsageOutput" }, required: false },
  },
  TokenUsageOutput: {
    inputTokens: { type: "number", required: false },
    outputTokens: { type: "number", required: false },
    timeMs: { type: "number", required: false },
    cost: { type: "number", required: false },
  },
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Every way `value` departs from the spec's `shape`, as "path: problem" lines. */
function departures(value: unknown, shape: string, at = "$"): string[] {
  if (!isPlainObject(value)) return [`${at}: not an object`];
  const fields = SPEC[shape]!;
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (!(key in fields)) problems.push(`${at}.${key}: not a field of ${shape}`);
  }
  for (const [name, field] of Object.entries(fields)) {
    const child = value[name];
    const where = `${at}.${name}`;
    if (child === undefined) {
      if (field.required) problems.push(`${where}: required by ${shape}, missing`);
      continue;
    }
    const type = field.type;
    if (type === "anyObject") {
      if (!isPlainObject(child)) problems.push(`${where}: not an object`);
    } else if (typeof type === "string") {
      if (typeof child !== type || (type === "number" && !Number.isFinite(child)))
        problems.push(`${where}: not a ${type}`);
    } else if ("object" in type) {
      problems.push(...departures(child, type.object, where));
    } else if (!Array.isArray(child)) {
      problems.push(`${where}: not an array`);
    } else {
      child.forEach((item, i) => {
        problems.push(...departures(item, type.arrayOf, `${where}[${i}]`));
      });
    }
  }
  return problems;
}

// ---------- the test ----------

let svc: LiveService;
let fx: Fixtures;
let dir: string;
let store: SqliteStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "deckhand-replay-"));
  store = new SqliteStore(dir);
  [svc, fx] = await Promise.all([startLiveService({ store }), startFixtures()]);
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /v1/sessions/{id}/replay of a real session", () => {
  it("is exactly spec 2.2-2.6, grouped by page, with token usage, cost and the client's language", async () => {
    const model = scriptedModelConfig(fx.model);
    const id = await svc.start({ serverCache: false }, { headers: { "x-language": "python" } });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["%user%"],
      description: "type the user name",
      completed: true,
    }));
    fx.model.on(match.schemaName("observe"), (request) => ({
      elements: [{ elementId: idOf(request.text, /button: Sign in/), description: "sign in" }],
    }));
    fx.model.on(match.schemaName("extract"), { extraction: "a form" });
    const call = { headers: WITH_MODEL_KEY };
    await ok(
      await svc.op(
        id,
        "act",
        { input: "type the user", options: { model, variables: { user: "replay-secret" } } },
        call,
      ),
    );
    await ok(await svc.op(id, "observe", { instruction: "the sign-in button", options: { model } }, call));
    await ok(await svc.op(id, "extract", { instruction: "what is it", options: { model } }, call));
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    // A failing operation is recorded too.
    expect(
      (
        await svc.op(id, "act", {
          input: { selector: "//nothing", description: "x", method: "dance", arguments: [] },
        })
      ).status,
    ).toBe(400);
    await ok(await svc.op(id, "extract", {}));

    const response = await svc.call(`/v1/sessions/${id}/replay`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(departures(body, "ReplayResponse")).toEqual([]);

    expect(body.success).toBe(true);
    expect(body.data.clientLanguage).toBe("python");
    const pages = body.data.pages as {
      url: string;
      timestamp: number;
      duration: number;
      actions: {
        method: string;
        parameters: Record<string, unknown>;
        result: Record<string, unknown>;
        timestamp: number;
        endTime: number;
        tokenUsage?: Record<string, number>;
      }[];
    }[];
    expect(pages.map((p) => [p.url, p.actions.map((a) => a.method)])).toEqual([
      [fx.site.url("form.html"), ["navigate", "act", "observe", "extract"]],
      [fx.site.url("list.html"), ["navigate", "act", "extract"]],
    ]);
    for (const page of pages) {
      expect(page.timestamp).toBe(page.actions[0]!.timestamp);
      expect(page.duration).toBe(Math.max(...page.actions.map((a) => a.endTime)) - page.timestamp);
      for (const action of page.actions) expect(action.endTime).toBeGreaterThanOrEqual(action.timestamp);
    }
    const [navigate, act, observe, extract] = pages[0]!.actions;
    expect(navigate!.tokenUsage).toBeUndefined();
    expect(navigate!.result).toEqual({ url: fx.site.url("form.html"), status: 200, ok: true });
    // The scripted model reports 100 prompt and 20 completion tokens per answer; gpt-4.1-mini is
    // priced at $0.40 / $1.60 per million tokens.
    for (const action of [act, observe, extract]) {
      expect(action!.tokenUsage).toEqual({
        inputTokens: 100,
        outputTokens: 20,
        timeMs: expect.any(Number),
        cost: 0.000072,
      });
    }
    expect(act!.parameters).toEqual({
      input: "type the user",
      options: { model, variables: { user: "[redacted]" } },
    });
    expect(act!.result).toMatchObject({ success: true, actions: [{ arguments: ["%user%"] }] });
    expect(observe!.result).toEqual({ actions: [expect.objectContaining({ description: "sign in" })] });
    expect(extract!.result).toEqual({ extraction: "a form" });
    const failed = pages[1]!.actions[1]!;
    expect(failed.result).toMatchObject({ success: false, code: "INVALID_ARGUMENT" });
    expect(pages[1]!.actions[2]!.result.pageText).toEqual(expect.stringContaining("Banana"));

    // Neither the variable's value nor the model key was written anywhere.
    // (Every file: the database, and the step screenshots in folders under it.)
    const bytes = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(path.join(entry.parentPath, entry.name)).toString("latin1"))
      .join("");
    expect(bytes).toContain("type the user");
    expect(bytes).not.toContain("replay-secret");
    expect(bytes).not.toContain(MODEL_KEY);
  });
});
