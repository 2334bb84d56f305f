// Computer-use mode with Claude's computer tool, through the AI SDK's Anthropic provider against a
// scripted Messages API on loopback: real Chromium, real input events, the real wire.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runComputerUse } from "../../src/agent/cua/index.ts";
import type { CuaStep } from "../../src/agent/cua/types.ts";
import { ServiceCancelledError } from "../../src/errors.ts";
import { pngSize } from "../browser/png.ts";
import { type CuaFixture, centerOf, fieldValue, openCuaFixture, textOf, toShot } from "./cua-helpers.ts";

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

async function eventuallyFrame<T>(find: () => T | undefined): Promise<T> {
  // A minute: only a stall takes that long (a busy machine can take seconds to attach a frame).
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const found = find();
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the frame did not appear");
}

const claude = () => ({
  provider: "anthropic",
  modelName: "claude-sonnet-4-5",
  apiKey: "sk-ant-test-key",
  baseURL: f.model.anthropicBaseURL,
});

describe("Claude's computer tool", () => {
  it("fills and sends a form in several steps, typing a variable's value the model never sees", async () => {
    const name = toShot(await centerOf(f.page, "#name"));
    const email = toShot(await centerOf(f.page, "#email"));
    f.model.queue(
      "anthropic",
      { text: "I will click the name field.", toolUses: [{ action: "left_click", coordinate: name }] },
      { toolUses: [{ action: "type", text: "Ada Lovelace" }] },
      {
        toolUses: [
          { action: "left_click", coordinate: email },
          { action: "type", text: "%email%" },
        ],
      },
      { toolUses: [{ action: "key", text: "Return" }] },
      // The page echoes the value and the model reads it off the screenshot.
      { text: "The form is sent: Thanks, Ada Lovelace <ada@example.test>" },
    );
    const steps: CuaStep[] = [];
    const usages: number[] = [];
    const finished: string[][] = [];
    const result = await runComputerUse({
      page: f.page,
      model: claude(),
      instruction: "Sign up as Ada Lovelace with my email",
      variables: { email: { value: "ada@example.test", description: "the user's email" } },
      recordStep: (s) => steps.push(s),
      addUsage: (u) => usages.push(u.input_tokens),
      callbacks: { onStepFinish: (step) => void finished.push(step.actions.map((a) => a.type)) },
    });

    expect(result).toMatchObject({
      success: true,
      completed: true,
      message: "The form is sent: Thanks, Ada Lovelace <%email%>",
    });
    expect(JSON.stringify(result.messages)).not.toContain("ada@example.test");
    expect(await textOf(f.page, "#result")).toBe("Thanks, Ada Lovelace <ada@example.test>");
    expect(result.actions.map((a) => a.type)).toEqual(["click", "type", "click", "type", "keyPress"]);
    expect(result.actions[0]).toMatchObject({ reasoning: "I will click the name field." });
    expect(result.usage.input_tokens).toBe(5000);
    expect(usages).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(finished).toEqual([["click"], ["type"], ["click", "type"], ["keyPress"], []]);
    // The conversation comes back without the screenshots' bytes.
    expect(result.messages?.length).toBeGreaterThan(5);
    expect(JSON.stringify(result.messages)).not.toContain("iVBORw0KGgo");

    // The wire: the computer tool at the screenshot's size, its beta header, a screenshot per tool result.
    const requests = f.model.requests;
    expect(requests).toHaveLength(5);
    for (const r of requests) {
      expect(r.tools).toEqual([
        expect.objectContaining({
          type: "computer_20250124",
          name: "computer",
          display_width_px: 1280,
          display_height_px: 800,
        }),
      ]);
      expect(String(r.headers["anthropic-beta"])).toContain("computer-use-2025-01-24");
      expect(r.headers["x-api-key"]).toBe("sk-ant-test-key");
    }
    expect(requests.map((r) => r.screenshots.length)).toEqual([1, 1, 1, 2, 1]);
    for (const png of requests.flatMap((r) => r.screenshots))
      expect(pngSize(png)).toEqual({ width: 1280, height: 800 });
    expect(requests[0]!.text).toContain("Sign up as Ada Lovelace");
    expect(requests[0]!.text).toContain("%email%: the user's email");
    // The value went to the page, never to the model nor the step record.
    for (const r of requests) expect(JSON.stringify(r.body)).not.toContain("ada@example.test");
    expect(JSON.stringify(steps.map((s) => s.args))).not.toContain("ada@example.test");
    expect(steps.map((s) => s.tool)).toEqual(["left_click", "type", "left_click", "type", "key"]);
    expect(steps.every((s) => s.result === "ok" && s.screenshot !== undefined)).toBe(true);
  });

  it("double-clicks a word and triple-clicks a paragraph, as a user selects text", async () => {
    const words = await f.page.evaluate(() => {
      const r = document.querySelector("#words")!.getBoundingClientRect();
      return { x: Math.round(r.left + 20), y: Math.round(r.top + r.height / 2) };
    });
    const selection = () => f.page.evaluate(() => window.getSelection()?.toString().trim() ?? "");
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "double_click", coordinate: toShot(words) }] },
      { text: "ok" },
    );
    await runComputerUse({ page: f.page, model: claude(), instruction: "select the first word" });
    expect(await selection()).toBe("alpha");

    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "triple_click", coordinate: toShot(words) }] },
      { text: "ok" },
    );
    await runComputerUse({ page: f.page, model: claude(), instruction: "select the paragraph" });
    expect(await selection()).toBe("alpha beta gamma");
  });

  it("presses key chords: ctrl+a then typing replaces a field's text", async () => {
    await f.page.locator("#name").fill("old text");
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "left_click", coordinate: toShot(await centerOf(f.page, "#name")) }] },
      { toolUses: [{ action: "key", text: "ctrl+a" }] },
      { toolUses: [{ action: "type", text: "new" }] },
      { text: "replaced" },
    );
    const result = await runComputerUse({ page: f.page, model: claude(), instruction: "replace the name" });
    expect(result.success).toBe(true);
    expect(await fieldValue(f.page, "#name")).toBe("new");
  });

  it("scrolls at a point, moves the pointer and drags", async () => {
    const hover = toShot(await centerOf(f.page, "#hover"));
    const box = await centerOf(f.page, "#box");
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "mouse_move", coordinate: hover }] },
      {
        toolUses: [
          {
            action: "left_click_drag",
            start_coordinate: toShot(box),
            coordinate: toShot({ x: box.x + 200, y: box.y }),
          },
        ],
      },
      {
        toolUses: [{ action: "scroll", coordinate: [640, 400], scroll_direction: "down", scroll_amount: 5 }],
      },
      { text: "done" },
    );
    const result = await runComputerUse({
      page: f.page,
      model: claude(),
      instruction: "hover, drag and scroll",
    });
    expect(result.success).toBe(true);
    expect(await textOf(f.page, "#hover")).toBe("hovered");
    const left = await f.page.evaluate(
      () => document.getElementById("box")!.getBoundingClientRect().left + window.scrollX,
    );
    expect(Math.abs(left - 900)).toBeLessThanOrEqual(3);
    expect(await f.page.evaluate(() => window.scrollY)).toBe(500);
  });

  it("clicks and types inside a cross-site (out-of-process) iframe, where its pixels are", async () => {
    await f.page.goto(f.fx.site.url("frames/cross-site.html"));
    const child = await eventuallyFrame(() =>
      f.page.frames().find((fr) => fr.url.includes("/frames/child.html")),
    );
    const iframe = await f.page.evaluate(() => {
      const r = document.getElementById("pay")!.getBoundingClientRect();
      return { x: r.left + 2, y: r.top + 2 }; // 2 px border
    });
    const inChild = (selector: string) =>
      child.evaluate((s: string) => {
        const r = document.querySelector(s)!.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }, selector);
    const button = await inChild("#child-button");
    const input = await inChild("#child-input");
    const onPage = (p: { x: number; y: number }) => toShot({ x: iframe.x + p.x, y: iframe.y + p.y });
    // The browser routes input into an out-of-process frame by where that frame was last drawn, and
    // the scripted model answers at once: wait until the pointer over the button reaches the frame.
    for (let tries = 0; ; tries++) {
      await f.page.mouse.move(iframe.x + button.x, iframe.y + button.y);
      if (await child.evaluate(() => document.getElementById("child-button")!.matches(":hover"))) break;
      if (tries > 100) throw new Error("the cross-site frame never took the pointer");
      await f.page.mouse.move(0, 0);
      await new Promise((r) => setTimeout(r, 50));
    }
    f.model.queue(
      "anthropic",
      {
        toolUses: [
          { action: "left_click", coordinate: onPage(input) },
          { action: "type", text: "4242" },
        ],
      },
      { text: "typed" },
    );
    const result = await runComputerUse({ page: f.page, model: claude(), instruction: "enter the code" });
    expect(result.success).toBe(true);
    expect(
      await child.evaluate(() => (document.getElementById("child-input") as HTMLInputElement).value),
    ).toBe("4242");
  });

  it("follows a link that opens a new tab, as the user's eyes would, and acts there", async () => {
    await f.page.goto(f.fx.site.url("popup.html"));
    const link = toShot(await centerOf(f.page, "#new-tab-link"));
    let increment: [number, number] | undefined;
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "left_click", coordinate: link }] },
      () => ({ toolUses: [{ action: "left_click", coordinate: increment! }] }),
      { text: "clicked in the new tab" },
    );
    // The index page's button, where it will be in the new tab (same window size).
    const probe = await f.fx.dh.context.newPage(f.fx.site.url("index.html"));
    increment = toShot(await centerOf(probe, "#increment"));
    await probe.close();
    await f.page.bringToFront();

    const result = await runComputerUse({
      page: f.page,
      model: claude(),
      instruction: "open the index and count",
    });
    expect(result.success).toBe(true);
    const tab = f.fx.dh.context.pages().find((p) => p.openerId === f.page.targetId);
    expect(tab).toBeDefined();
    expect(await textOf(tab!, "#count")).toBe("1");
    expect(f.page.url()).toBe(f.fx.site.url("popup.html"));
    await tab!.close();
    await f.page.bringToFront();
  });

  it("rejects with the typed error when the caller aborts during an action", async () => {
    f.model.queue("anthropic", { toolUses: [{ action: "wait", duration: 10 }] }, { text: "never asked" });
    const controller = new AbortController();
    const run = runComputerUse({
      page: f.page,
      model: claude(),
      instruction: "wait",
      signal: controller.signal,
    });
    await f.model.waitForRequests(1);
    const abortedAt = Date.now() + 300;
    setTimeout(() => controller.abort(), 300);
    await expect(run).rejects.toBeInstanceOf(ServiceCancelledError);
    // During the model's 10-second wait, not after it.
    expect(Date.now() - abortedAt).toBeLessThan(9_000);
    expect(f.model.requests).toHaveLength(1);
  });

  it("ends with success false and the provider's message when the API refuses", async () => {
    f.model.queue("anthropic", { httpError: { status: 400, message: "messages: image too large" } });
    const result = await runComputerUse({ page: f.page, model: claude(), instruction: "anything" });
    expect(result.success).toBe(false);
    expect(result.completed).toBe(false);
    expect(result.message).toContain("image too large");
  });
});
