// Computer-use mode with OpenAI's computer-use-preview model: the Responses API and its
// computer_use_preview tool, against a scripted Responses server on loopback.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runComputerUse } from "../../src/agent/cua/index.ts";
import type { CuaSafetyCheck } from "../../src/agent/cua/types.ts";
import { ServiceCancelledError } from "../../src/errors.ts";
import { pngSize } from "../browser/png.ts";
import { type CuaFixture, centerOf, openCuaFixture, textOf, toShot } from "./cua-helpers.ts";

let f: CuaFixture;

beforeAll(async () => {
  f = await openCuaFixture();
});

afterAll(async () => {
  await f?.close();
});

beforeEach(async () => {
  f.model.reset();
  await f.page.mouse.move(0, 0);
  await f.page.goto(f.formUrl);
});

const cua = () => ({
  provider: "openai",
  modelName: "openai/computer-use-preview",
  apiKey: "sk-test-openai",
  baseURL: f.model.openaiBaseURL,
});

const at = (point: [number, number]) => ({ x: point[0], y: point[1] });

describe("OpenAI's computer_use_preview tool", () => {
  it("fills and sends a form, acknowledging a safety check through the callback", async () => {
    const name = toShot(await centerOf(f.page, "#name"));
    const email = toShot(await centerOf(f.page, "#email"));
    const check = {
      id: "sc_1",
      code: "malicious_instructions",
      message: "The page may contain instructions.",
    };
    f.model.queue(
      "openai",
      {
        reasoning: "Click the name field.",
        calls: [{ action: { type: "click", button: "left", ...at(name) } }],
      },
      { calls: [{ action: { type: "type", text: "Grace Hopper" } }] },
      { calls: [{ action: { type: "click", button: "left", ...at(email) }, pendingSafetyChecks: [check] }] },
      { calls: [{ action: { type: "type", text: "grace@example.test" } }] },
      { calls: [{ action: { type: "keypress", keys: ["ENTER"] } }] },
      { text: "Signed up." },
    );
    const seen: CuaSafetyCheck[][] = [];
    const result = await runComputerUse({
      page: f.page,
      model: cua(),
      instruction: "Sign up as Grace Hopper",
      callbacks: {
        onSafetyCheck: (checks) => {
          seen.push(checks);
          return true;
        },
      },
    });

    expect(result).toMatchObject({ success: true, completed: true, message: "Signed up." });
    expect(await textOf(f.page, "#result")).toBe("Thanks, Grace Hopper <grace@example.test>");
    expect(seen).toEqual([[check]]);

    const requests = f.model.requests;
    expect(requests).toHaveLength(6);
    for (const r of requests) {
      expect(r.path).toBe("/v1/responses");
      expect(r.headers.authorization).toBe("Bearer sk-test-openai");
      expect(r.tools).toEqual([
        { type: "computer_use_preview", display_width: 1280, display_height: 800, environment: "browser" },
      ]);
    }
    // Each request answers the last computer_call with a screenshot, chained by previous_response_id.
    expect(requests.map((r) => r.screenshots.length)).toEqual([1, 1, 1, 1, 1, 1]);
    for (const png of requests.flatMap((r) => r.screenshots))
      expect(pngSize(png)).toEqual({ width: 1280, height: 800 });
    expect(requests[0]!.body.previous_response_id).toBeUndefined();
    for (const r of requests.slice(1)) expect(String(r.body.previous_response_id)).toMatch(/^resp_/);
    expect(requests[3]!.acknowledged).toEqual([check]);
    expect(requests[3]!.results[0]).toMatchObject({ type: "computer_call_output", current_url: f.formUrl });
    expect(requests.filter((r) => r.acknowledged.length > 0)).toHaveLength(1);
  });

  it("stops without acting when the safety callback refuses", async () => {
    f.model.queue("openai", {
      calls: [
        {
          action: { type: "type", text: "x" },
          pendingSafetyChecks: [{ id: "sc_2", code: "sensitive_domain" }],
        },
      ],
    });
    const result = await runComputerUse({
      page: f.page,
      model: cua(),
      instruction: "type x",
      callbacks: { onSafetyCheck: () => false },
    });
    expect(result.success).toBe(false);
    expect(result.message).toContain("sensitive_domain");
    expect(result.actions).toEqual([]);
    expect(f.model.requests).toHaveLength(1);
  });

  it("waits, scrolls by the model's pixels, and goes back and forward with the mouse's side buttons", async () => {
    await f.page.goto(f.secondUrl);
    f.model.queue(
      "openai",
      { calls: [{ action: { type: "click", button: "back", x: 10, y: 10 } }] },
      { calls: [{ action: { type: "wait" } }] },
      { calls: [{ action: { type: "scroll", x: 640, y: 400, scroll_x: 0, scroll_y: 400 } }] },
      { text: "scrolled" },
    );
    const result = await runComputerUse({ page: f.page, model: cua(), instruction: "go back and scroll" });
    expect(result.success).toBe(true);
    expect(f.page.url()).toBe(f.formUrl);
    // 400 screenshot pixels are 500 CSS pixels of this 1600-wide window shown at 1280.
    expect(await f.page.evaluate(() => window.scrollY)).toBe(500);
    expect(result.actions.map((a) => a.type)).toEqual(["click", "wait", "scroll"]);

    f.model.queue(
      "openai",
      { calls: [{ action: { type: "click", button: "forward", x: 10, y: 10 } }] },
      { text: "ok" },
    );
    await runComputerUse({ page: f.page, model: cua(), instruction: "go forward" });
    expect(f.page.url()).toBe(f.secondUrl);
  });

  it("answers native dialogs, which block the page and show on no screenshot, and tells the model", async () => {
    await f.page.goto(f.dialogUrl);
    const who = toShot(await centerOf(f.page, "#who"));
    const alertButton = toShot(await centerOf(f.page, "#alert"));
    const confirmButton = toShot(await centerOf(f.page, "#confirm"));
    f.model.queue(
      "openai",
      { calls: [{ action: { type: "click", button: "left", ...at(alertButton) } }] },
      { calls: [{ action: { type: "click", button: "left", ...at(who) } }] },
      { calls: [{ action: { type: "type", text: "%user%" } }] },
      { calls: [{ action: { type: "click", button: "left", ...at(confirmButton) } }] },
      { calls: [{ action: { type: "keypress", keys: ["NOSUCHKEY"] } }] },
      { text: "done" },
    );
    const asked: CuaSafetyCheck[][] = [];
    const result = await runComputerUse({
      page: f.page,
      model: cua(),
      instruction: "save, then delete",
      variables: { user: "grace.secret" },
      callbacks: {
        onSafetyCheck: (checks) => {
          asked.push(checks);
          return false;
        },
      },
    });
    expect(result.success).toBe(true);
    // The alert was accepted (the click went through), the confirm went to the callback, which refused it.
    expect(await textOf(f.page, "#result")).toBe("kept");
    expect(asked).toEqual([[{ id: "dialog-confirm", code: "confirm_dialog", message: "Delete %user%?" }]]);
    const told = f.model.requests.map((r) =>
      (r.body.input as { role?: string; content?: { text?: string }[] }[])
        .filter((item) => item.role === "user")
        .map((item) => item.content?.[0]?.text ?? "")
        .join(""),
    );
    expect(told[1]).toBe('The page showed a native alert dialog saying "Saved."; it was accepted.');
    expect(told[4]).toBe(
      'The page showed a native confirm dialog saying "Delete %user%?"; it was dismissed.',
    );
    expect(told[5]).toContain("keypress failed");
    expect(told[5]).toContain("NOSUCHKEY");
    for (const r of f.model.requests) expect(JSON.stringify(r.body)).not.toContain("grace.secret");
  });

  it("stops at maxSteps with success false", async () => {
    for (let i = 0; i < 5; i++)
      f.model.queue("openai", { calls: [{ action: { type: "move", x: 5 + i, y: 5 } }] });
    const result = await runComputerUse({
      page: f.page,
      model: cua(),
      instruction: "wait forever",
      maxSteps: 2,
    });
    expect(result).toMatchObject({ success: false, completed: false });
    expect(result.message).toContain("maxSteps (2)");
    expect(f.model.requests).toHaveLength(2);
  });

  it("rejects with a typed error when the caller aborts while the model thinks", async () => {
    f.model.latencyMs = 10_000;
    f.model.queue("openai", { text: "too late" });
    const controller = new AbortController();
    const run = runComputerUse({
      page: f.page,
      model: cua(),
      instruction: "anything",
      signal: controller.signal,
    });
    await f.model.waitForRequests(1);
    const abortedAt = Date.now();
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(ServiceCancelledError);
    // Before the model's answer (10 s after its request) could have ended the run.
    expect(Date.now() - abortedAt).toBeLessThan(9_000);
  });

  it("ends with success false and the API's message on a server error", async () => {
    f.model.queue("openai", { httpError: { status: 500, message: "The server had an error" } });
    const result = await runComputerUse({ page: f.page, model: cua(), instruction: "anything" });
    expect(result).toMatchObject({ success: false, completed: false });
    expect(result.message).toContain("500");
    expect(result.message).toContain("The server had an error");
    expect(result.message).not.toContain("sk-test-openai");
  });
});

describe("OpenAI's GA computer tool (gpt-5.4), through the AI SDK", () => {
  const gpt = () => ({
    provider: "openai",
    modelName: "gpt-5.4",
    apiKey: "sk-test-openai",
    baseURL: f.model.openaiBaseURL,
  });

  it("runs a batch of actions per call and chains turns by previous_response_id", async () => {
    const name = toShot(await centerOf(f.page, "#name"));
    const email = toShot(await centerOf(f.page, "#email"));
    const check = { id: "sc_9", code: "irrelevant_domain", message: "Check the site." };
    f.model.queue(
      "openai",
      {
        calls: [
          {
            actions: [
              { type: "click", button: "left", ...at(name) },
              { type: "type", text: "Katherine Johnson" },
              { type: "click", button: "left", ...at(email) },
              { type: "type", text: "%email%" },
            ],
            pendingSafetyChecks: [check],
          },
        ],
      },
      { calls: [{ actions: [{ type: "keypress", keys: ["ENTER"] }] }] },
      { text: "Sent." },
    );
    const result = await runComputerUse({
      page: f.page,
      model: gpt(),
      instruction: "Sign up as Katherine Johnson",
      variables: { email: "kj@example.test" },
    });
    expect(result).toMatchObject({ success: true, completed: true, message: "Sent." });
    expect(await textOf(f.page, "#result")).toBe("Thanks, Katherine Johnson <kj@example.test>");
    expect(result.actions.map((a) => a.type)).toEqual(["click", "type", "click", "type", "keyPress"]);

    const requests = f.model.requests;
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.path).toBe("/v1/responses");
      expect(r.tools).toEqual([{ type: "computer" }]);
      expect(r.model).toBe("gpt-5.4");
      expect(JSON.stringify(r.body)).not.toContain("kj@example.test");
    }
    expect(requests.map((r) => r.screenshots.length)).toEqual([1, 1, 1]);
    for (const png of requests.flatMap((r) => r.screenshots))
      expect(pngSize(png)).toEqual({ width: 1280, height: 800 });
    expect(requests[1]!.body.previous_response_id).toMatch(/^resp_/);
    // Only what is new besides the instructions: the call's output with its screenshot.
    const input = requests[1]!.body.input as { role?: string; type?: string }[];
    expect(input.filter((item) => item.role !== "developer" && item.role !== "system")).toEqual([
      expect.objectContaining({ type: "computer_call_output" }),
    ]);
    // No callback: the check is acknowledged on the call's output.
    expect(requests[1]!.acknowledged).toEqual([check]);
  });
});
