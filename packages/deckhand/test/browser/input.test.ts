// Page-level input: click(x, y) with buttons and click counts, type() and keyPress(), checked by
// what the page's own handlers recorded.

import type { Page } from "deckhand";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, openFixture, textOf } from "./helpers.ts";

let fx: BrowserFixture;
let page: Page;

beforeAll(async () => {
  fx = await openFixture();
  page = fx.dh.context.pages()[0]!;
});

afterAll(async () => {
  await closeFixture(fx);
});

/** The centre of an element of the main document, in viewport coordinates. */
function centerOf(selector: string): Promise<{ x: number; y: number }> {
  return page.evaluate((s: string) => {
    const r = document.querySelector(s)!.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }, selector);
}

/** Records the mouse events the element receives, as "type:button:detail". */
async function recordMouse(selector: string): Promise<() => Promise<string[]>> {
  await page.evaluate((s: string) => {
    const events: string[] = [];
    (window as unknown as { mouseEvents: string[] }).mouseEvents = events;
    const el = document.querySelector(s)!;
    for (const type of ["mousedown", "mouseup", "click", "dblclick", "auxclick", "contextmenu"]) {
      el.addEventListener(type, (e) => {
        const m = e as MouseEvent;
        events.push(`${type}:${m.button}:${m.detail}`);
        if (type === "contextmenu") e.preventDefault();
      });
    }
  }, selector);
  return () => page.evaluate(() => (window as unknown as { mouseEvents: string[] }).mouseEvents);
}

describe("click(x, y)", () => {
  beforeEach(async () => {
    await page.goto(fx.site.url("index.html"));
  });

  it("clicks whatever is at the point, as a user would", async () => {
    const { x, y } = await centerOf("#increment");
    await page.click(x, y);
    expect(await textOf(page, "#count")).toBe("1");
  });

  it("misses an element that is not at the point", async () => {
    const { x, y } = await centerOf("#increment");
    await page.click(x, y + 100);
    expect(await textOf(page, "#count")).toBe("0");
  });

  it("sends a full press and release with the left button by default", async () => {
    const events = await recordMouse("#increment");
    const { x, y } = await centerOf("#increment");
    await page.click(x, y);
    expect(await events()).toEqual(["mousedown:0:1", "mouseup:0:1", "click:0:1"]);
  });

  it("clicks with the right button when asked, which opens the context menu", async () => {
    const events = await recordMouse("#increment");
    const { x, y } = await centerOf("#increment");
    await page.click(x, y, { button: "right" });
    const seen = await events();
    // Where in the sequence contextmenu comes depends on the platform (on press on Linux).
    expect(seen.filter((e) => !e.startsWith("contextmenu"))).toEqual([
      "mousedown:2:1",
      "mouseup:2:1",
      "auxclick:2:1",
    ]);
    expect(seen.filter((e) => e.startsWith("contextmenu"))).toHaveLength(1);
    expect(await textOf(page, "#count")).toBe("0");
  });

  it("clicks with the middle button when asked", async () => {
    const events = await recordMouse("#increment");
    const { x, y } = await centerOf("#increment");
    await page.click(x, y, { button: "middle" });
    expect(await events()).toEqual(["mousedown:1:1", "mouseup:1:1", "auxclick:1:1"]);
  });

  it("double-clicks with clickCount 2", async () => {
    const events = await recordMouse("#increment");
    const { x, y } = await centerOf("#increment");
    await page.click(x, y, { clickCount: 2 });
    expect(await events()).toEqual([
      "mousedown:0:1",
      "mouseup:0:1",
      "click:0:1",
      "mousedown:0:2",
      "mouseup:0:2",
      "click:0:2",
      "dblclick:0:2",
    ]);
    expect(await textOf(page, "#count")).toBe("2");
  });

  it("rejects coordinates that are not numbers", async () => {
    await expect(page.click(Number.NaN, 10)).rejects.toMatchObject({ name: "ServiceInvalidArgumentError" });
  });
});

describe("type() and keyPress()", () => {
  beforeEach(async () => {
    await page.goto(fx.site.url("keyboard.html"));
    await page.evaluate(() => document.getElementById("text")!.focus());
  });

  const value = () => page.evaluate(() => (document.getElementById("text") as HTMLInputElement).value);
  const keyLog = async () => ((await textOf(page, "#log")) ?? "").trim().split("\n").filter(Boolean);

  it("types text into the focused field", async () => {
    await page.type("Hello, World! 123 #@(x)");
    expect(await value()).toBe("Hello, World! 123 #@(x)");
  });

  it("types with real key events, holding Shift for capitals", async () => {
    await page.type("aB");
    expect(await keyLog()).toEqual(["a|KeyA|", "Shift|ShiftLeft|Shift", "B|KeyB|Shift"]);
  });

  it("types characters that have no key on the keyboard", async () => {
    await page.type("café ✓ 日本");
    expect(await value()).toBe("café ✓ 日本");
  });

  it("waits between keys with delay", async () => {
    const started = Date.now();
    await page.type("abcd", { delay: 60 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 60 - 10);
    expect(await value()).toBe("abcd");
  });

  it('presses "Enter", which the page handles', async () => {
    await page.type("sent");
    await page.keyPress("Enter");
    expect(await textOf(page, "#result")).toBe("submitted:sent");
  });

  it('presses "Control+A" as a combination: the page sees Control held, and the text gets selected', async () => {
    await page.type("old text");
    await page.keyPress("Control+A");
    expect(await keyLog()).toContain("a|KeyA|Control");
    await page.type("new");
    expect(await value()).toBe("new");
  });

  it('reports the letter of "Control+Shift+A" in capitals, with both modifiers held', async () => {
    await page.keyPress("Control+Shift+A");
    expect(await keyLog()).toContain("A|KeyA|Control+Shift");
  });

  it("moves the caret with arrow keys", async () => {
    await page.type("ac");
    await page.keyPress("ArrowLeft");
    await page.type("b");
    expect(await value()).toBe("abc");
  });

  it("deletes with Backspace", async () => {
    await page.type("abc");
    await page.keyPress("Backspace");
    expect(await value()).toBe("ab");
  });

  it("moves the focus with Tab and back with Shift+Tab", async () => {
    await page.evaluate(() => {
      const next = document.createElement("input");
      next.id = "next";
      document.getElementById("text")!.after(next);
    });
    await page.keyPress("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("next");
    await page.keyPress("Shift+Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("text");
  });

  it("releases the modifiers after a combination", async () => {
    await page.keyPress("Control+A");
    await page.type("x");
    expect(await keyLog()).toContain("x|KeyX|");
    expect(await value()).toBe("x");
  });

  it("rejects a key it does not know, naming it", async () => {
    const error = await page.keyPress("Control+Banana").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain('"Banana"');
    // Nothing was pressed: Control is not left held down.
    await page.type("y");
    expect(await value()).toBe("y");
  });
});
