import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionHandlers } from "../src/routes/handlers.ts";
import { startService, type TestService } from "./helpers.ts";

const actResult = { success: true, message: "clicked", actionDescription: "click the button" };

/**
 * Splits an SSE body into its events, checking the framing on the way: each block is an
 * `event: <status>` line and one `data:` line, or (`named: false`) the `data:` line alone.
 */
function parseEvents(
  text: string,
  named = true,
): Array<{ type: string; id: string; data: Record<string, unknown> }> {
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((block) => {
      const lines = block.split("\n");
      expect(lines).toHaveLength(named ? 2 : 1);
      const dataLine = lines.at(-1)!;
      expect(dataLine.startsWith("data: ")).toBe(true);
      const event = JSON.parse(dataLine.slice("data: ".length));
      if (named) expect(lines[0]).toBe(`event: ${event.data.status}`);
      return event;
    });
}

/**
 * What the reference's hand-written TypeScript client does with a stream body: split on blank
 * lines, skip every block that does not start with `data: `, parse the rest of the block as JSON.
 */
function referenceClientRead(text: string): Array<{ type: string; data: Record<string, unknown> }> {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => JSON.parse(block.slice("data: ".length)));
}

describe("Server-Sent Events", () => {
  let service: TestService;
  let mode: "ok" | "fail" | "wait" = "ok";
  let sawAbort: (reason: unknown) => void = () => {};
  // Called when a "wait" act has reached the handler: the test hangs up only then.
  let entered: () => void = () => {};

  const handlers: Partial<SessionHandlers> = {
    async sessionAct({ log, signal, streaming }) {
      if (mode === "fail") throw new Error("internal detail that must not leak");
      if (mode === "wait") {
        log("waiting for the page");
        entered();
        await new Promise<void>((resolve) => {
          signal.addEventListener("abort", () => {
            sawAbort(signal.reason);
            resolve();
          });
        });
        return { result: actResult };
      }
      log("looking at the page");
      log(`streaming: ${streaming}`);
      return { result: actResult, actionId: "action-1" };
    },
  };

  beforeAll(async () => {
    service = await startService({ handlers });
  });
  afterAll(() => service.close());

  it("streams system and log events, then finished with the result, when x-stream-response is true", async () => {
    mode = "ok";
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "true" },
      json: { input: "click the button" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = parseEvents(await response.text());
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ["system", "starting"],
      ["system", "connected"],
      ["system", "running"],
      ["log", "running"],
      ["log", "running"],
      ["system", "finished"],
    ]);
    // A log event's message is a log line object, as the library's `logger` gets it.
    expect(events[3]?.data).toEqual({
      status: "running",
      message: { category: "deckhand", message: "looking at the page", level: 1 },
    });
    expect(events[4]?.data).toEqual({
      status: "running",
      message: { category: "deckhand", message: "streaming: true", level: 1 },
    });
    expect(events[5]?.data).toEqual({ status: "finished", result: actResult, actionId: "action-1" });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    for (const event of events) expect(Object.keys(event).sort()).toEqual(["data", "id", "type"]);
  });

  it("streams when the body says streamResponse: true", async () => {
    mode = "ok";
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      json: { input: "click the button", streamResponse: true },
    });
    const events = parseEvents(await response.text());
    expect(events.at(-1)?.data).toEqual({ status: "finished", result: actResult, actionId: "action-1" });
  });

  for (const [client, headers] of [
    ["a plain client", {}],
    [
      "the reference's integration tests (x-language: typescript)",
      { "x-language": "typescript", "x-sdk-version": "3.0.1" },
    ],
    ["a generated SDK saying its language and version", { "x-language": "python", "x-sdk-version": "0.5.0" }],
    ["a Stainless-generated SDK", { "x-stainless-lang": "go", "x-stainless-package-version": "0.3.0" }],
  ] as const) {
    it(`sends an event: <status> line before each data line to ${client}`, async () => {
      mode = "ok";
      const session = await service.session();
      const response = await service.call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        headers: { "x-stream-response": "true", ...headers },
        json: { input: "click the button" },
      });
      const statuses = parseEvents(await response.text()).map((event) => event.data.status);
      expect(statuses).toEqual(["starting", "connected", "running", "running", "running", "finished"]);
    });
  }

  it("sends data-only blocks to the reference's hand-written TypeScript client, which drops any other block", async () => {
    mode = "ok";
    const session = await service.session();
    // The headers that client sends with every request.
    const headers = {
      "x-stream-response": "true",
      "x-language": "typescript",
      "x-sdk-version": "3.0.1",
      "x-bb-session-id": session.id,
    };
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers,
      json: { input: "click the button" },
    });
    const text = await response.text();
    parseEvents(text, false);
    expect(referenceClientRead(text).at(-1)?.data).toEqual({
      status: "finished",
      result: actResult,
      actionId: "action-1",
    });
  });

  it("sends data-only blocks when the client asks with x-stream-event-names: false", async () => {
    mode = "ok";
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "true", "x-stream-event-names": "false" },
      json: { input: "click the button" },
    });
    expect(parseEvents(await response.text(), false).at(-1)?.data.status).toBe("finished");
  });

  it("answers plain JSON when no stream was asked for, with data.result equal to the stream's result", async () => {
    mode = "ok";
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "false" },
      json: { input: "click the button" },
    });
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      success: true,
      data: { result: actResult, actionId: "action-1" },
    });
  });

  it("ends with an error event that carries no internals", async () => {
    mode = "fail";
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "true" },
      json: { input: "click the button" },
    });
    const text = await response.text();
    expect(text).not.toContain("internal detail");
    const events = parseEvents(text);
    const last = events.at(-1)!;
    expect(last.type).toBe("system");
    expect(last.data.status).toBe("error");
    expect(String(last.data.error)).toMatch(/^Internal server error/);
    expect(service.logText()).toContain("internal detail that must not leak");
  });

  it("aborts the operation's signal when a JSON client disconnects before the answer", async () => {
    mode = "wait";
    const aborted = new Promise<unknown>((resolve) => {
      sawAbort = resolve;
    });
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const session = await service.session();
    const controller = new AbortController();
    const request = service
      .call(`/v1/sessions/${session.id}/act`, {
        method: "POST",
        json: { input: "x" },
        signal: controller.signal,
      })
      .catch(() => "aborted");
    // Hang up once the request has reached the handler (a hang-up before it tests nothing).
    await reached;
    controller.abort();
    expect(await request).toBe("aborted");
    // A signal never aborted leaves the handler waiting: the test's timeout reports it.
    expect(((await aborted) as Error).name).toBe("ServiceCancelledError");
  });

  it("aborts the operation's signal when the client disconnects mid-stream", async () => {
    mode = "wait";
    const aborted = new Promise<unknown>((resolve) => {
      sawAbort = resolve;
    });
    const session = await service.session();
    const controller = new AbortController();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: { "x-stream-response": "true" },
      json: { input: "click the button" },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes("waiting for the page")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${seen}`);
      seen += decoder.decode(value, { stream: true });
    }
    controller.abort();
    expect(((await aborted) as Error).name).toBe("ServiceCancelledError");
    expect(seen).not.toContain('"finished"');
  });
});
