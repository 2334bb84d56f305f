// Computer-use mode with Gemini's computer_use tool over generateContent, against a scripted
// Gemini server on loopback: coordinates in Gemini's 1000x1000 grid land on the right pixels.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runComputerUse } from "../../src/agent/cua/index.ts";
import { pngSize } from "../browser/png.ts";
import { type CuaFixture, centerOf, fieldValue, openCuaFixture, textOf, toGrid } from "./cua-helpers.ts";

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

const gemini = () => ({
  provider: "google",
  modelName: "gemini-2.5-computer-use-preview-10-2025",
  apiKey: "goog-test-key",
  baseURL: f.model.googleBaseURL,
});

describe("Gemini's computer_use tool", () => {
  it("fills and sends a form from grid coordinates, and answers each call with the URL and a screenshot", async () => {
    await f.page.locator("#name").fill("to be replaced");
    const name = toGrid(await centerOf(f.page, "#name"));
    const email = toGrid(await centerOf(f.page, "#email"));
    f.model.queue(
      "google",
      {
        text: "Typing the name.",
        functionCalls: [{ name: "type_text_at", args: { ...name, text: "Alan Turing", press_enter: false } }],
      },
      {
        functionCalls: [
          {
            name: "type_text_at",
            args: {
              ...email,
              text: "%email%",
              safety_decision: { decision: "require_confirmation", explanation: "Submitting a form." },
            },
          },
        ],
      },
      { text: "Submitted." },
    );
    const result = await runComputerUse({
      page: f.page,
      model: gemini(),
      instruction: "Sign up as Alan Turing",
      variables: { email: "alan@example.test" },
    });

    expect(result).toMatchObject({ success: true, completed: true, message: "Submitted." });
    // clear_before_typing (default) replaced the old text; press_enter (default) sent the form.
    expect(await fieldValue(f.page, "#name")).toBe("Alan Turing");
    expect(await textOf(f.page, "#result")).toBe("Thanks, Alan Turing <alan@example.test>");

    const requests = f.model.requests;
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.path).toBe("/v1beta/models/gemini-2.5-computer-use-preview-10-2025:generateContent");
      expect(r.headers["x-goog-api-key"]).toBe("goog-test-key");
      expect(r.tools).toEqual([{ computerUse: { environment: "ENVIRONMENT_BROWSER" } }]);
      expect(JSON.stringify(r.body)).not.toContain("alan@example.test");
    }
    // Gemini gets the window at its own size (up to 1440x900): 1600x1000 is scaled to 1440x900.
    expect(requests.map((r) => r.screenshots.length)).toEqual([1, 1, 1]);
    for (const png of requests.flatMap((r) => r.screenshots))
      expect(pngSize(png)).toEqual({ width: 1440, height: 900 });
    expect(requests[1]!.results[0]).toMatchObject({ name: "type_text_at", response: { url: f.formUrl } });
    // Without an onSafetyCheck callback the confirmation is acknowledged.
    expect(requests[2]!.acknowledged).toEqual([
      expect.objectContaining({
        name: "type_text_at",
        response: expect.objectContaining({ safety_acknowledgement: "true" }),
      }),
    ]);
    expect(result.actions[0]).toMatchObject({
      type: "type",
      text: "Alan Turing",
      reasoning: "Typing the name.",
    });
  });

  it("navigates, goes back and forward, clicks, hovers, drags and scrolls in grid units", async () => {
    const hover = toGrid(await centerOf(f.page, "#hover"));
    const box = await centerOf(f.page, "#box");
    f.model.queue(
      "google",
      { functionCalls: [{ name: "navigate", args: { url: f.secondUrl } }] },
      { functionCalls: [{ name: "go_back" }] },
      { functionCalls: [{ name: "go_forward" }] },
      { functionCalls: [{ name: "go_back" }] },
      {
        functionCalls: [
          { name: "hover_at", args: hover },
          {
            name: "drag_and_drop",
            args: {
              ...toGrid(box),
              destination_x: toGrid({ x: box.x + 160, y: box.y }).x,
              destination_y: toGrid(box).y,
            },
          },
        ],
      },
      { functionCalls: [{ name: "scroll_at", args: { x: 500, y: 500, direction: "down", magnitude: 300 } }] },
      { text: "done" },
    );
    const urls: string[] = [];
    const result = await runComputerUse({
      page: f.page,
      model: gemini(),
      instruction: "move around",
      callbacks: { onStepFinish: () => void urls.push(f.page.url()) },
    });
    expect(result.success).toBe(true);
    expect(urls.slice(0, 4)).toEqual([f.secondUrl, f.formUrl, f.secondUrl, f.formUrl]);
    expect(await textOf(f.page, "#hover")).toBe("hovered");
    const left = await f.page.evaluate(
      () => document.getElementById("box")!.getBoundingClientRect().left + window.scrollX,
    );
    expect(Math.abs(left - 860)).toBeLessThanOrEqual(3);
    // 300 of 1000 grid units of a 1000-pixel-high window.
    expect(await f.page.evaluate(() => window.scrollY)).toBe(300);
  });

  it("opens web pages only: a file: URL the model asks for is refused and the model is told why", async () => {
    f.model.queue(
      "google",
      { functionCalls: [{ name: "navigate", args: { url: "file:///etc/passwd" } }] },
      { functionCalls: [{ name: "navigate", args: { url: "javascript:alert(1)" } }] },
      { text: "could not" },
    );
    const result = await runComputerUse({
      page: f.page,
      model: gemini(),
      instruction: "read the password file",
    });
    expect(result.message).toBe("could not");
    expect(f.page.url()).toBe(f.formUrl);
    expect(f.model.requests[1]!.results[0]).toMatchObject({
      response: { url: f.formUrl, error: expect.stringContaining("file: URLs cannot be opened") },
    });
    expect(f.model.requests[2]!.results[0]).toMatchObject({
      response: { error: expect.stringContaining("javascript: URLs cannot be opened") },
    });
  });

  it("takes the key from the provider's environment variable, and wants one before any request", async () => {
    const saved = { google: process.env.GOOGLE_GENERATIVE_AI_API_KEY, gemini: process.env.GEMINI_API_KEY };
    try {
      delete process.env.GOOGLE_GENERATIVE_AI_API_KEY;
      delete process.env.GEMINI_API_KEY;
      const { apiKey: _, ...withoutKey } = gemini();
      await expect(
        runComputerUse({ page: f.page, model: withoutKey, instruction: "x" }),
      ).rejects.toMatchObject({
        name: "MissingLLMConfigurationError",
        message: expect.stringContaining("GOOGLE_GENERATIVE_AI_API_KEY"),
      });
      expect(f.model.requests).toHaveLength(0);

      process.env.GEMINI_API_KEY = "key-from-env";
      f.model.queue("google", { text: "hello" });
      const result = await runComputerUse({ page: f.page, model: withoutKey, instruction: "x" });
      expect(result.success).toBe(true);
      expect(f.model.requests[0]!.headers["x-goog-api-key"]).toBe("key-from-env");
    } finally {
      for (const [name, value] of [
        ["GOOGLE_GENERATIVE_AI_API_KEY", saved.google],
        ["GEMINI_API_KEY", saved.gemini],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("refuses a model that cannot do computer use, before any request", async () => {
    await expect(
      runComputerUse({
        page: f.page,
        model: { ...gemini(), modelName: "gemini-2.0-flash" },
        instruction: "x",
      }),
    ).rejects.toMatchObject({
      name: "UnsupportedModelError",
      message: expect.stringContaining("cannot do computer use"),
    });
    expect(f.model.requests).toHaveLength(0);
  });
});
