// Server-Sent Events on real operations: the session's log lines while it runs (secrets removed),
// then finished or error; and a client that hangs up cancelling its operation.

import { holdPage, match } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  eventually,
  type Fixtures,
  idOf,
  type LiveService,
  MODEL_KEY,
  ok,
  parseEvents,
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
  id = await svc.start({ serverCache: false });
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

describe("x-stream-response: true", () => {
  it("streams the operation's log lines, then finished with the result", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["%user%"],
      description: "type the user name",
      completed: true,
    }));
    const response = await svc.op(
      id,
      "act",
      { input: "type the user name", options: { model, variables: { user: "streamed-secret-value" } } },
      { headers: { ...WITH_MODEL_KEY, "x-stream-response": "true" } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const text = await response.text();
    const events = parseEvents(text);
    expect(events.slice(0, 3).map((e) => [e.type, e.data.status])).toEqual([
      ["system", "starting"],
      ["system", "connected"],
      ["system", "running"],
    ]);
    const logs = events.filter((e) => e.type === "log").map((e) => e.data.message);
    // The library's own lines, as log line objects (as its `logger` option gets them): the model's
    // answer and the act's outcome.
    expect(logs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          category: "llm",
          message: expect.stringMatching(/^act: openai\/gpt-4.1-mini answered in \d+ ms/),
          level: expect.any(Number),
        }),
        expect.objectContaining({ category: "act", message: "Done: type the user name.", level: 1 }),
      ]),
    );
    for (const event of events.filter((e) => e.type === "log")) expect(event.data.status).toBe("running");
    const last = events.at(-1)!;
    expect(last).toMatchObject({
      type: "system",
      data: { status: "finished", result: { success: true, actionDescription: "type the user name" } },
    });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(text).not.toContain("streamed-secret-value");
    expect(text).not.toContain(MODEL_KEY);
    const dh = svc.service.sessions.get(id)!.dh;
    expect(await dh.page.locator("#username").inputValue()).toBe("streamed-secret-value");
  });

  it("streams when the body says streamResponse: true, for every operation", async () => {
    for (const [name, body] of [
      ["navigate", { url: fx.site.url("index.html") }],
      ["extract", {}],
      ["observe", {}],
    ] as const) {
      const response = await svc.op(id, name, { ...body, streamResponse: true });
      const events = parseEvents(await response.text());
      expect(events.at(-1)?.data.status, name).toBe("finished");
    }
  });

  it("ends with an error event that carries the error's message and code", async () => {
    fx.model.on(match.schemaName("extract"), { count: "many" });
    const response = await svc.op(
      id,
      "extract",
      {
        instruction: "count the links",
        schema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
        options: { model },
      },
      { headers: { ...WITH_MODEL_KEY, "x-stream-response": "true" } },
    );
    expect(response.status).toBe(200);
    const last = parseEvents(await response.text()).at(-1)!;
    expect(last.type).toBe("system");
    expect(last.data).toMatchObject({ status: "error", code: "SCHEMA_VALIDATION" });
    expect(last.data.error).toContain("does not match the schema");
  });
});

/** Reads a streamed response until the operation says it is running. */
async function untilRunning(response: Response): Promise<void> {
  const reader = response.body!.getReader();
  let seen = "";
  while (!seen.includes('"running"')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
}

describe("a client that disconnects", () => {
  it("cancels its operation mid-stream, and the session stays usable", async () => {
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.clear();
    fx.model.resetRequests();
    // The model answers only when the test lets it: the hang-up alone can end the operation.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let lateAnswer: Promise<object> | undefined;
    fx.model.on(match.all(match.schemaName("act"), match.lastUser("slow")), (request) => {
      lateAnswer = released.then(() => ({
        elementId: idOf(request.text, /textbox: Username/),
        method: "fill",
        arguments: ["should never land"],
        description: "type slowly",
        completed: true,
      }));
      return lateAnswer;
    });
    const controller = new AbortController();
    const response = await svc.op(
      id,
      "act",
      { input: "slow typing", options: { model } },
      { headers: { ...WITH_MODEL_KEY, "x-stream-response": "true" }, signal: controller.signal },
    );
    await untilRunning(response);
    // The model has the request and is "thinking": hang up.
    await eventually(() => fx.model.callCount === 1, 5000, "the model request");
    controller.abort();

    // The operation ends long before the model would have answered, recorded as cancelled.
    await eventually(
      async () => {
        const replay = await ok<{
          pages: { actions: { method: string; result: { cancelled?: boolean } }[] }[];
        }>(await svc.call(`/v1/sessions/${id}/replay`));
        return replay.pages.flatMap((p) => p.actions).some((a) => a.method === "act" && a.result.cancelled);
      },
      3000,
      "the cancelled act in the replay",
    );
    // The session goes on: the next act runs at once and does its work.
    fx.model.on(match.all(match.schemaName("act"), match.lastUser("quick")), (request) => ({
      elementId: idOf(request.text, /textbox: Password/),
      method: "fill",
      arguments: ["hunter2-is-fine"],
      description: "type the password",
      completed: true,
    }));
    const next = await ok<{ result: { success: boolean } }>(
      await svc.op(id, "act", { input: "quick typing", options: { model } }, { headers: WITH_MODEL_KEY }),
    );
    expect(next.result.success).toBe(true);
    // The cancelled act never types, even once its model answer has come.
    release();
    await lateAnswer;
    const dh = svc.service.sessions.get(id)!.dh;
    expect(await dh.page.locator("#username").inputValue()).toBe("");
    expect(await dh.page.locator("#password").inputValue()).toBe("hunter2-is-fine");
    // Nothing of it is left queued (the last step's screenshot may still be finishing).
    await eventually(() => svc.service.sessions.get(id)?.pending === 0, 5000, "an empty queue");
  });

  it("stops a navigation mid-stream, and the session's page stays where it was", async () => {
    const before = fx.site.url("form.html");
    await ok(await svc.op(id, "navigate", { url: before }));
    // A page the server answers only when the test lets it, and whose request the browser drops
    // when it stops loading.
    const held = holdPage(fx.site, "/held.html");
    onTestFinished(held.release);
    const controller = new AbortController();
    const response = await svc.op(
      id,
      "navigate",
      { url: fx.site.url("held.html") },
      { headers: { "x-stream-response": "true" }, signal: controller.signal },
    );
    await untilRunning(response);
    // Mid-stream: the slow page was asked for (the operation may wait its turn a moment first, e.g.
    // for the previous step's screenshot).
    await eventually(
      () => fx.site.requests.some((r) => r.path.startsWith("/held")),
      3000,
      "the slow request",
    );
    controller.abort();

    await eventually(
      async () => {
        const replay = await ok<{
          pages: {
            actions: { method: string; parameters: { url?: string }; result: { cancelled?: boolean } }[];
          }[];
        }>(await svc.call(`/v1/sessions/${id}/replay`));
        return replay.pages
          .flatMap((p) => p.actions)
          .some((a) => a.method === "navigate" && a.parameters.url?.includes("held") && a.result.cancelled);
      },
      2000,
      "the cancelled navigate in the replay",
    );
    // The browser let go of the page, and the next operation runs; answered now, it goes nowhere.
    await held.dropped;
    held.answer();
    await ok(await svc.op(id, "extract", {}));
    const dh = svc.service.sessions.get(id)!.dh;
    expect(dh.page.url()).toBe(before);
    // Nothing of it is left queued (the last step's screenshot may still be finishing).
    await eventually(() => svc.service.sessions.get(id)?.pending === 0, 5000, "an empty queue");
  });
});
