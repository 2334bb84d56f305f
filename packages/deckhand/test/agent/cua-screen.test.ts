// What every computer-use provider shares: which models qualify, what the screenshots show, the
// cursor highlight, the newer Claude computer tool, and a conversation that keeps only the newest
// screenshots.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { computerUseTool, runComputerUse, supportsComputerUse } from "../../src/agent/cua/index.ts";
import { decodePng } from "../browser/png.ts";
import { type CuaFixture, centerOf, fieldValue, openCuaFixture, toShot } from "./cua-helpers.ts";

describe("supportsComputerUse", () => {
  it("knows the computer-use models of each provider", () => {
    for (const model of [
      "openai/computer-use-preview",
      "openai/computer-use-preview-2025-03-11",
      "openai/gpt-5.4",
      "openai/gpt-5.4-mini",
      "anthropic/claude-sonnet-4-5",
      "anthropic/claude-sonnet-4-5-20250929",
      "anthropic/claude-sonnet-4-20250514",
      "anthropic/claude-opus-4-1",
      "anthropic/claude-haiku-4-5",
      "anthropic/claude-3-7-sonnet-latest",
      "anthropic/claude-opus-4-5",
      "google/gemini-2.5-computer-use-preview-10-2025",
      "gemini/gemini-2.5-computer-use-preview-10-2025",
    ]) {
      expect(supportsComputerUse(model), model).toBe(true);
    }
  });

  it("refuses models without a computer-use tool", () => {
    for (const model of [
      "openai/gpt-4.1-mini",
      "openai/gpt-4o",
      "anthropic/claude-3-5-haiku-latest",
      "google/gemini-2.0-flash",
      "google/gemini-2.5-flash",
      "ollama/llama3",
      "claude-sonnet-4-5",
    ]) {
      expect(supportsComputerUse(model), model).toBe(false);
    }
  });

  it("picks the tool version the model takes", () => {
    expect(computerUseTool("anthropic/claude-opus-4-5")).toBe("anthropic-computer-20251124");
    expect(computerUseTool("anthropic/claude-opus-5")).toBe("anthropic-computer-toolset-20260801");
    expect(computerUseTool("anthropic/claude-opus-4-8")).toBe("anthropic-computer-toolset-20260801");
    expect(computerUseTool("anthropic/claude-sonnet-4-5")).toBe("anthropic-computer-20250124");
    expect(computerUseTool("openai/computer-use-preview")).toBe("openai-computer-use-preview");
    expect(computerUseTool("openai/gpt-5.4")).toBe("openai-computer");
    expect(computerUseTool("claude-sonnet-4-5", "anthropic")).toBe("anthropic-computer-20250124");
  });
});

describe("the screen the model sees", () => {
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

  const claude = (modelName = "claude-sonnet-4-5") => ({
    provider: "anthropic",
    modelName,
    apiKey: "sk-ant-test",
    baseURL: f.model.anthropicBaseURL,
  });

  it("shows the viewport scaled to the screenshot, where the page is scrolled to", async () => {
    const box = await centerOf(f.page, "#box");
    f.model.queue(
      "anthropic",
      {
        toolUses: [{ action: "scroll", coordinate: [640, 400], scroll_direction: "down", scroll_amount: 2 }],
      },
      { text: "ok" },
    );
    await runComputerUse({ page: f.page, model: claude(), instruction: "scroll a little" });
    const [first, afterScroll] = f.model.requests.map((r) => decodePng(r.screenshots.at(-1)!));
    // The red box, at its scaled place in the first shot; 200 CSS pixels higher after the scroll.
    const [x, y] = toShot(box);
    expect(first!.pixel(x, y)).toEqual([255, 0, 0]);
    expect(first!.pixel(x, y - 200 * 0.8)).not.toEqual([255, 0, 0]);
    expect(afterScroll!.pixel(x, y - 200 * 0.8)).toEqual([255, 0, 0]);
  });

  it("draws the pointer where the model moved it when highlightCursor is on", async () => {
    const hover = await centerOf(f.page, "#hover");
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "mouse_move", coordinate: toShot(hover) }] },
      { text: "ok" },
    );
    await runComputerUse({ page: f.page, model: claude(), instruction: "point", highlightCursor: true });
    const dot = await f.page.evaluate(() => {
      const el = document.getElementById("__deckhand_cua_cursor");
      return el ? { x: Number.parseFloat(el.style.left), y: Number.parseFloat(el.style.top) } : null;
    });
    expect(dot).not.toBeNull();
    expect(Math.abs(dot!.x - hover.x)).toBeLessThanOrEqual(2);
    expect(Math.abs(dot!.y - hover.y)).toBeLessThanOrEqual(2);
  });

  it("declares computer_20251124 with its beta header for the models that take it", async () => {
    f.model.queue("anthropic", { text: "nothing to do" });
    const result = await runComputerUse({
      page: f.page,
      model: claude("claude-opus-4-5"),
      instruction: "look",
    });
    expect(result.success).toBe(true);
    const [request] = f.model.requests;
    expect(request!.tools).toEqual([
      expect.objectContaining({ type: "computer_20251124", name: "computer" }),
    ]);
    expect(String(request!.headers["anthropic-beta"])).toContain("computer-use-2025-11-24");
  });

  it("drives Claude's computer toolset (members as tool names, no beta) on the models that require it", async () => {
    await f.page.locator("#name").fill("");
    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "left_click", coordinate: toShot(await centerOf(f.page, "#name")) }] },
      { toolUses: [{ action: "type", text: "abc" }] },
      { toolUses: [{ action: "key", text: "BackSpace", repeat: 2 }] },
      { text: "typed" },
    );
    const result = await runComputerUse({
      page: f.page,
      model: claude("claude-opus-5"),
      instruction: "type",
    });
    expect(result.success).toBe(true);
    expect(await fieldValue(f.page, "#name")).toBe("a");
    for (const request of f.model.requests) {
      expect(request.tools).toEqual([
        { type: "computer_toolset_20260801", configs: { zoom: { enabled: false } } },
      ]);
      expect(String(request.headers["anthropic-beta"] ?? "")).not.toContain("computer-use");
    }
    expect(f.model.requests[1]!.screenshots).toHaveLength(1);
  });

  it("keeps only the newest screenshots in the conversation", async () => {
    for (let i = 0; i < 6; i++)
      f.model.queue("anthropic", { toolUses: [{ action: "mouse_move", coordinate: [10 + i, 10] }] });
    f.model.queue("anthropic", { text: "done" });
    const result = await runComputerUse({ page: f.page, model: claude(), instruction: "wiggle" });
    expect(result.success).toBe(true);
    const counts = f.model.requests.map((r) => r.allScreenshots);
    // The first message's screenshot plus at most three tool-result screenshots.
    expect(Math.max(...counts)).toBeLessThanOrEqual(4);
    expect(counts.at(-1)).toBe(4);
    expect(f.model.requests.at(-1)!.text).toContain("an older screenshot, left out");
  });

  it("shows a field a variable's value was typed into as discs on the screenshots", async () => {
    const field = await f.page.evaluate(() => {
      const r = document.getElementById("name")!.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    });
    const region = (png: Buffer) => {
      const image = decodePng(png);
      const [x0, y0] = toShot({ x: field.left + 2, y: field.top + 2 });
      const [x1, y1] = toShot({ x: field.right - 2, y: field.bottom - 2 });
      const pixels: number[] = [];
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) pixels.push(...image.pixel(x, y));
      return pixels;
    };
    const firstShot = async (setUp?: () => Promise<void>) => {
      await setUp?.();
      f.model.reset();
      f.model.queue("anthropic", { text: "ok" });
      await runComputerUse({ page: f.page, model: claude(), instruction: "look" });
      return region(f.model.requests[0]!.screenshots[0]!);
    };

    f.model.queue(
      "anthropic",
      { toolUses: [{ action: "left_click", coordinate: toShot(await centerOf(f.page, "#name")) }] },
      { toolUses: [{ action: "type", text: "%password%" }] },
      { text: "typed" },
    );
    await runComputerUse({
      page: f.page,
      model: claude(),
      instruction: "type the password",
      variables: { password: "hunter2-secret" },
    });
    const seenByModel = region(f.model.requests[2]!.screenshots[0]!);
    // The page keeps the value: it is only the screenshot that hides it.
    expect(await fieldValue(f.page, "#name")).toBe("hunter2-secret");
    const plain = await firstShot();
    const discs = await firstShot(() =>
      f.page.evaluate(() => {
        document.getElementById("name")!.style.setProperty("-webkit-text-security", "disc");
      }),
    );
    expect(seenByModel).not.toEqual(plain);
    expect(seenByModel).toEqual(discs);
  });

  it("tells the model when an action failed and lets it go on", async () => {
    f.model.queue("anthropic", { toolUses: [{ action: "key", text: "ctrl+NoSuchKey" }] }, (request) => ({
      text: `I saw: ${JSON.stringify(request.results[0]?.content).includes("NoSuchKey") ? "the error" : "nothing"}`,
    }));
    const result = await runComputerUse({ page: f.page, model: claude(), instruction: "press it" });
    expect(result).toMatchObject({ success: true, message: "I saw: the error" });
  });
});
