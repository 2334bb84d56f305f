// The operation endpoints on a real browser with the scripted model: navigate, act, extract,
// observe, agentExecute, with valid and invalid input.

import { match } from "@deckhand/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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

let svc: LiveService;
let fx: Fixtures;
let id: string;
let model: ReturnType<typeof scriptedModelConfig>;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  model = scriptedModelConfig(fx.model);
  // The server cache has its own tests; here every call goes to the model.
  id = await svc.start({ serverCache: false });
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});
beforeEach(() => {
  fx.model.clear();
  fx.model.resetRequests();
});

async function pageText(): Promise<string> {
  return (await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}))).result.pageText;
}

async function expect400(response: Response, field: string, code = "INVALID_REQUEST"): Promise<void> {
  expect(response.status).toBe(400);
  const body = await response.json();
  expect(body).toMatchObject({ success: false, code });
  expect(body.error).toContain(field);
}

describe("SessionNavigate", () => {
  it("loads the URL and answers a summary of the main response", async () => {
    const data = await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    expect(data).toEqual({
      result: { url: fx.site.url("form.html"), status: 200, ok: true },
      actionId: expect.any(String),
    });
    expect(await pageText()).toContain("textbox: Username");
  });

  it("reports an error status as it is, and null for a same-document navigation", async () => {
    const missing = await ok(await svc.op(id, "navigate", { url: fx.site.url("status/404") }));
    expect(missing.result).toEqual({ url: fx.site.url("status/404"), status: 404, ok: false });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const hash = await ok(await svc.op(id, "navigate", { url: `${fx.site.url("index.html")}#below` }));
    expect(hash.result).toBeNull();
  });

  it("400 for a missing, relative or file: URL, and for an unknown waitUntil", async () => {
    await expect400(await svc.op(id, "navigate", {}), "`url`");
    await expect400(await svc.op(id, "navigate", { url: "form.html" }), "`url`");
    await expect400(await svc.op(id, "navigate", { url: "file:///etc/passwd" }), "`url`");
    await expect400(
      await svc.op(id, "navigate", { url: fx.site.url("form.html"), options: { waitUntil: "never" } }),
      "`options.waitUntil`",
    );
  });
});

describe("SessionAct", () => {
  it("does an instruction with the model; variable values are typed but reach neither model nor log", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["%user%"],
      description: "type the user name",
      completed: true,
    }));
    const data = await ok<{ result: Record<string, unknown> }>(
      await svc.op(
        id,
        "act",
        {
          input: "type %user% into the user name",
          options: { model, variables: { user: "bob-the-secret" } },
        },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(data.result).toEqual({
      success: true,
      message: "Done: type the user name.",
      actionDescription: "type %user% into the user name",
      actions: [
        {
          selector: expect.stringMatching(/^\/html/),
          description: "type the user name",
          method: "fill",
          arguments: ["%user%"],
        },
      ],
    });
    const dh = svc.service.sessions.get(id)!.dh;
    expect(await dh.page.locator("#username").inputValue()).toBe("bob-the-secret");
    expect(fx.model.callCount).toBe(1);
    // The caller's provider key reached the provider, for this call.
    expect(fx.model.requests[0]!.apiKey).toBe(MODEL_KEY);
    expect(JSON.stringify(fx.model.requests)).not.toContain("bob-the-secret");
    expect(svc.logText()).not.toContain("bob-the-secret");
    expect(svc.logText()).not.toContain(MODEL_KEY);
  });

  it("performs an Action without the model", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const observed = await ok<{ result: { selector: string; description: string }[] }>(
      await svc.op(id, "observe", {}),
    );
    const button = observed.result.find((a) => a.description === "button: Increment")!;
    const data = await ok<{ result: { success: boolean } }>(
      await svc.op(id, "act", { input: { ...button, method: "click", arguments: [] } }),
    );
    expect(data.result.success).toBe(true);
    expect(await pageText()).toContain("Count: 1");
    expect(fx.model.callCount).toBe(0);
  });

  it("answers success false when an Action's element is not on the page", async () => {
    const other = await svc.start({ selfHeal: false });
    await ok(await svc.op(other, "navigate", { url: fx.site.url("index.html") }));
    const data = await ok<{ result: { success: boolean; message: string } }>(
      await svc.op(other, "act", {
        input: {
          selector: "//button[@id='nowhere']",
          description: "a button that is not there",
          method: "click",
          arguments: [],
        },
      }),
    );
    expect(data.result.success).toBe(false);
    expect(data.result.message).toContain("//button[@id='nowhere']");
    await svc.op(other, "end");
  });

  it("400 names what is wrong with the input, the model or the variables", async () => {
    await expect400(await svc.op(id, "act", {}), "`input`");
    await expect400(await svc.op(id, "act", { input: "" }), "`input`");
    await expect400(await svc.op(id, "act", { input: { selector: "//a" } }), "`input");
    await expect400(
      await svc.op(id, "act", { input: "click", options: { model: "mystery-model-7" } }),
      "`options.model`",
      "INVALID_MODEL_FORMAT",
    );
    await expect400(
      await svc.op(id, "act", { input: "click", options: { variables: { user: { nested: true } } } }),
      "`options.variables.user`",
    );
    await expect400(
      await svc.op(id, "act", { input: "click", options: { timeout: -5 } }),
      "`options.timeout`",
    );
  });
});

describe("SessionExtract", () => {
  it("answers the page text without instruction, a text with one, and schema-shaped data with a schema", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    const text = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", {}));
    expect(text.result.pageText).toContain("Banana");
    expect(fx.model.callCount).toBe(0);

    fx.model.on(match.schemaName("extract"), (request) =>
      request.schema?.properties && "fruits" in (request.schema.properties as object)
        ? { fruits: ["Apple", "Banana", "Cherry"] }
        : { extraction: "a page of lists" },
    );
    const answer = await ok(
      await svc.op(
        id,
        "extract",
        { instruction: "what is this page", options: { model } },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(answer.result).toEqual({ extraction: "a page of lists" });
    const schema = {
      type: "object",
      properties: { fruits: { type: "array", items: { type: "string" } } },
      required: ["fruits"],
    };
    const data = await ok(
      await svc.op(
        id,
        "extract",
        { instruction: "the fruits", schema, options: { model } },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(data.result).toEqual({ fruits: ["Apple", "Banana", "Cherry"] });
  });

  it("narrows the page text to a selector", async () => {
    const data = await ok<{ result: { pageText: string } }>(
      await svc.op(id, "extract", { options: { selector: "#steps" } }),
    );
    expect(data.result.pageText).toContain("Preheat the oven");
    expect(data.result.pageText).not.toContain("Banana");
  });

  it("422 with the library's code when the model's data does not fit the schema", async () => {
    fx.model.on(match.schemaName("extract"), { count: "many" });
    const response = await svc.op(
      id,
      "extract",
      {
        instruction: "count the fruits",
        schema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
        options: { model },
      },
      { headers: WITH_MODEL_KEY },
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ success: false, code: "SCHEMA_VALIDATION" });
  });

  it("400 for a schema that is no JSON Schema, or one without an instruction", async () => {
    await expect400(
      await svc.op(id, "extract", { instruction: "x", schema: { price: "number" } }),
      "`schema`",
    );
    await expect400(await svc.op(id, "extract", { schema: { type: "object" } }), "`instruction`");
    await expect400(await svc.op(id, "extract", { instruction: 42 }), "`instruction`");
  });
});

describe("SessionObserve", () => {
  it("answers candidate actions with XPath selectors, most relevant first", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("observe"), (request) => ({
      elements: [
        {
          elementId: idOf(request.text, /button: Sign in/),
          description: "the sign-in button",
          method: "click",
          arguments: [],
        },
        {
          elementId: idOf(request.text, /textbox: Username/),
          description: "the user name box",
          method: "fill",
          arguments: ["%user%"],
        },
      ],
    }));
    const data = await ok<{
      result: { selector: string; description: string; method: string; arguments: string[] }[];
    }>(
      await svc.op(
        id,
        "observe",
        { instruction: "find the sign-in controls", options: { model, variables: { user: "x" } } },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(data.result.map((a) => a.description)).toEqual(["the sign-in button", "the user name box"]);
    for (const action of data.result) expect(action.selector).toMatch(/^\/html/);
    expect(data.result[1]!.arguments).toEqual(["%user%"]);
  });

  it("400 names an invalid option", async () => {
    await expect400(
      await svc.op(id, "observe", { instruction: "x", options: { selector: 42 } }),
      "`options.selector`",
    );
    await expect400(
      await svc.op(id, "observe", { instruction: "x", options: { ignoreSelectors: "nav" } }),
      "`options.ignoreSelectors`",
    );
  });

  it("lists every interactive element without an instruction, without the model", async () => {
    const data = await ok<{ result: { description: string }[] }>(await svc.op(id, "observe", {}));
    expect(data.result.map((a) => a.description)).toEqual(
      expect.arrayContaining(["textbox: Username", "button: Sign in"]),
    );
    expect(fx.model.callCount).toBe(0);
  });
});

describe("frameId", () => {
  it("targets another page of the session; empty or null means the active page; 404 for an unknown one", async () => {
    const live = svc.service.sessions.get(id)!;
    const second = await live.dh.context.newPage(fx.site.url("list.html"));
    const first = live.dh.context.pages()[0]!;
    await live.dh.context.setActivePage(first);
    const data = await ok<{ result: { pageText: string } }>(
      await svc.op(id, "extract", { frameId: second.targetId }),
    );
    expect(data.result.pageText).toContain("Banana");
    // As the reference's clients send "no frame".
    await live.dh.context.setActivePage(second);
    for (const frameId of ["", null]) {
      const active = await ok<{ result: { pageText: string } }>(await svc.op(id, "extract", { frameId }));
      expect(active.result.pageText).toContain("Banana");
    }
    const unknown = await svc.op(id, "extract", { frameId: "no-such-frame" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      code: "FRAME_NOT_FOUND",
      error: expect.stringContaining("`frameId`"),
    });
    await second.close();
  });
});

describe("SessionAgentExecute", () => {
  it("answers 422 for computer-use mode before any model call, and 400 for an invalid body", async () => {
    for (const agentConfig of [{ mode: "cua" }, { cua: true }]) {
      const response = await svc.op(id, "agentExecute", {
        agentConfig,
        executeOptions: { instruction: "buy a kettle" },
      });
      expect(response.status).toBe(422);
      const body = await response.json();
      expect(body.code).toBe("UNSUPPORTED_MODEL");
      expect(body.error).toMatch(/cannot do computer use/);
    }
    await expect400(await svc.op(id, "agentExecute", { agentConfig: {} }), "`executeOptions`");
  });
});
