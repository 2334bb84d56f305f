// act(instruction) carries out each method with real input events, and act(action) does the same
// with no model at all. Every test checks what the page saw (its #result, #log or field values).

import { match } from "@deckhand/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  actOn,
  eventually,
  idOf,
  MODES,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  step,
  textOf,
} from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
  });
  afterAll(async () => {
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  describe("act(instruction)", () => {
    it("clicks the element the model chose and reports it as an XPath action", async () => {
      const page = await open(fx, "index.html");
      actOn(fx.model, "button: Increment");
      const result = await fx.dh.act("click the increment button");
      expect(result).toMatchObject({
        success: true,
        actionDescription: "click the increment button",
        actions: [{ selector: "/html[1]/body[1]/button[1]", method: "click", arguments: [] }],
      });
      expect(result.message).toMatch(/^Done/);
      expect(await textOf(page, "#count")).toBe("1");
    });

    it("double-clicks", async () => {
      const page = await open(fx, "actions.html");
      actOn(fx.model, "button: Rename", "doubleClick");
      const result = await fx.dh.act("double-click Rename");
      expect(result.success).toBe(true);
      expect(await textOf(page, "#result")).toBe("renamed");
    });

    it("hovers, so that mouseenter handlers run", async () => {
      const page = await open(fx, "actions.html");
      actOn(fx.model, "button: Help", "hover");
      expect((await fx.dh.act("hover over Help")).success).toBe(true);
      expect(await textOf(page, "#result")).toBe("help shown");
      expect(await textOf(page, "#log")).not.toContain("help click");
    });

    it("fills a text field, replacing what was there", async () => {
      const page = await open(fx, "form.html");
      await page.locator("#username").fill("old text");
      actOn(fx.model, "textbox: Username", "fill", ["alice"]);
      expect((await fx.dh.act("enter alice as the user name")).success).toBe(true);
      expect(await page.locator("#username").inputValue()).toBe("alice");
    });

    it("types text after what the field already holds", async () => {
      const page = await open(fx, "keyboard.html");
      await page.locator("#text").fill("abc");
      actOn(fx.model, "textbox: Text", "type", ["def"]);
      expect((await fx.dh.act("type def into the text box")).success).toBe(true);
      expect(await page.locator("#text").inputValue()).toBe("abcdef");
      // Typed key by key: the page saw a keydown for each letter.
      expect(await textOf(page, "#log")).toContain("f|KeyF|");
    });

    it("presses a key in a field", async () => {
      const page = await open(fx, "keyboard.html");
      await page.locator("#text").fill("hello");
      actOn(fx.model, "textbox: Text", "press", ["Enter"]);
      expect((await fx.dh.act("press Enter in the text box")).success).toBe(true);
      expect(await textOf(page, "#result")).toBe("submitted:hello");
    });

    it("presses a key on the page when the model names no element", async () => {
      const page = await open(fx, "keyboard.html");
      onAct(fx.model, () => step({ elementId: -1, method: "press", arguments: ["Escape"] }));
      const result = await fx.dh.act("press Escape");
      expect(result.success).toBe(true);
      expect(result.actions).toEqual([expect.objectContaining({ selector: "", method: "press" })]);
      expect(await textOf(page, "#log")).toContain("Escape|Escape|");
    });

    it("selects an option of a native <select> by its label", async () => {
      const page = await open(fx, "select.html");
      actOn(fx.model, /combobox: Country/, "selectOption", ["Japan"]);
      expect((await fx.dh.act("choose Japan as the country")).success).toBe(true);
      expect(await textOf(page, "#country-result")).toBe("jp:Japan");
    });

    it("picks from a custom dropdown in two steps: open it, then choose", async () => {
      const page = await open(fx, "select.html");
      onAct(fx.model, (request) =>
        /option: Blue/.test(request.lastUserText)
          ? step({ elementId: idOf(request, "option: Blue"), method: "click", description: "choose Blue" })
          : step({
              elementId: idOf(request, "button: Choose a color"),
              method: "selectOption",
              arguments: ["Blue"],
              description: "open the color list",
              completed: false,
            }),
      );
      const result = await fx.dh.act("choose the color Blue");
      expect(result.success).toBe(true);
      expect(result.actions?.map((a) => a.description)).toEqual(["open the color list", "choose Blue"]);
      expect(await textOf(page, "#color-result")).toBe("Blue");
      // The second question told the model what was done already.
      expect(fx.model.lastRequest?.lastUserText).toContain("Steps already done:\n1. open the color list");
    });

    it("does not claim success when the model never says the instruction is finished", async () => {
      const page = await open(fx, "index.html");
      onAct(fx.model, (request) =>
        step({ elementId: idOf(request, "button: Increment"), method: "click", completed: false }),
      );
      const result = await fx.dh.act("click increment until the count is ten");
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/without finishing/);
      expect(result.actions).toHaveLength(4);
      expect(await textOf(page, "#count")).toBe("4");
    });

    it("reports a fill that cannot land (a read-only field) as a failure", async () => {
      const page = await open(fx, "inputs.html");
      actOn(fx.model, /textbox: Read-only field/, "fill", ["changed"]);
      const result = await fx.dh.act("write changed into the read-only field");
      expect(result.success).toBe(false);
      expect(await page.locator("#readonly-input").inputValue()).toBe("fixed value");
    });

    it("accepts serverCache: false, and the result carries no cacheStatus", async () => {
      await open(fx, "index.html");
      actOn(fx.model, "button: Increment");
      const result = await fx.dh.act("click increment", { serverCache: false });
      expect(result.success).toBe(true);
      expect(result).not.toHaveProperty("cacheStatus");
    });

    it("checks and unchecks a checkbox", async () => {
      const page = await open(fx, "form.html");
      actOn(fx.model, /checkbox: Remember me/, "check");
      expect((await fx.dh.act("tick remember me")).success).toBe(true);
      expect(
        await page.evaluate(() => (document.getElementById("remember") as HTMLInputElement).checked),
      ).toBe(true);
      fx.model.clear();
      actOn(fx.model, /checkbox: Remember me/, "uncheck");
      expect((await fx.dh.act("untick remember me")).success).toBe(true);
      expect(
        await page.evaluate(() => (document.getElementById("remember") as HTMLInputElement).checked),
      ).toBe(false);
    });

    it("scrolls an element into view", async () => {
      const page = await open(fx, "scroll.html");
      actOn(fx.model, "button: Bottom button", "scrollIntoView");
      expect((await fx.dh.act("scroll to the bottom button")).success).toBe(true);
      const inView = await page.evaluate(() => {
        const box = document.getElementById("bottom-button")!.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= innerHeight;
      });
      expect(inView).toBe(true);
    });

    it("scrolls the page down by about a page", async () => {
      const page = await open(fx, "scroll.html");
      onAct(fx.model, () => step({ elementId: -1, method: "scrollByPage", arguments: ["down"] }));
      expect((await fx.dh.act("scroll down one page")).success).toBe(true);
      const [scrolled, height] = await page.evaluate(() => [scrollY, innerHeight]);
      expect(scrolled).toBeGreaterThan(height! * 0.5);
    });

    it("scrolls a scrollable box by a page", async () => {
      const page = await open(fx, "scroll.html");
      actOn(fx.model, "scrollable", "scrollByPage", ["down"]);
      expect((await fx.dh.act("scroll the item list down")).success).toBe(true);
      expect(await page.evaluate(() => document.getElementById("scroller")!.scrollTop)).toBeGreaterThan(100);
    });

    it("drags an element onto another with HTML5 drag and drop (the drop zone named by its text)", async () => {
      const page = await open(fx, "dnd.html");
      // A plain <div> drop zone has no id in the outline; the model names it by its text.
      onAct(fx.model, (request) =>
        step({
          elementId: idOf(request, "draggable: Drag me"),
          method: "dragAndDrop",
          arguments: ["Drop here"],
        }),
      );
      const result = await fx.dh.act("drag 'Drag me' into the drop zone");
      expect(result.success).toBe(true);
      expect(
        await eventually(
          () => textOf(page, "#drop-result"),
          (t) => t !== "",
        ),
      ).toBe("dropped:drag-item");
      // The drop target is recorded as an XPath too, so the action can be replayed.
      expect(result.actions?.[0]?.arguments).toEqual(["/html[1]/body[1]/div[2]"]);
    });

    it("drags a slider handle onto an element named by its id", async () => {
      const page = await open(fx, "dnd.html");
      onAct(fx.model, (request) =>
        step({
          elementId: idOf(request, "slider: Slider handle"),
          method: "dragAndDrop",
          arguments: [`[${idOf(request, "draggable: Drag me")}]`],
        }),
      );
      expect((await fx.dh.act("drag the slider handle")).success).toBe(true);
      expect(await textOf(page, "#log")).toMatch(/slider mousedown\nslider mouseup:\d+/);
    });
  });

  describe("act(action)", () => {
    it("runs an Action without calling the model", async () => {
      const page = await open(fx, "index.html");
      const before = fx.model.callCount;
      const result = await fx.dh.act({
        selector: "/html[1]/body[1]/button[1]",
        description: "the Increment button",
        method: "click",
        arguments: [],
      });
      expect(result.success).toBe(true);
      expect(result.actionDescription).toBe("the Increment button");
      expect(await textOf(page, "#count")).toBe("1");
      expect(fx.model.callCount).toBe(before);
    });

    it("accepts a CSS selector and reports the element's XPath", async () => {
      const page = await open(fx, "form.html");
      const result = await fx.dh.act({
        selector: "#username",
        description: "user name field",
        method: "fill",
        arguments: ["carol"],
      });
      expect(result.success).toBe(true);
      expect(await page.locator("#username").inputValue()).toBe("carol");
      expect(result.actions?.[0]?.selector).toBe("/html[1]/body[1]/form[1]/p[1]/input[1]");
    });

    it("hovers with a deterministic action (a menu that opens on mouseenter)", async () => {
      const page = await open(fx, "hover.html");
      const result = await fx.dh.act({
        selector: "#account-menu",
        description: "Account menu",
        method: "hover",
      });
      expect(result.success).toBe(true);
      expect(await textOf(page, "#log")).toContain("account mouseenter");
      expect(await page.locator("#settings-link").isVisible()).toBe(true);
    });

    it("drags and drops between two selectors", async () => {
      const page = await open(fx, "dnd.html");
      const result = await fx.dh.act({
        selector: "#drag-item",
        description: "the draggable card",
        method: "dragAndDrop",
        arguments: ["#drop-zone"],
      });
      expect(result.success).toBe(true);
      expect(
        await eventually(
          () => textOf(page, "#drop-result"),
          (t) => t !== "",
        ),
      ).toBe("dropped:drag-item");
    });

    it("reports a selector that leads nowhere as a failure when nothing else matches its description", async () => {
      const page = await open(fx, "index.html");
      // selfHeal asks the model to find "a missing button" again; there is none.
      fx.model.on(match.schemaName("observe"), { elements: [] });
      const result = await fx.dh.act({ selector: "#no-such-thing", description: "a missing button" });
      expect(result.success).toBe(false);
      expect(result.message).toContain("#no-such-thing");
      expect(await textOf(page, "#count")).toBe("0");
    });

    it("rejects an unknown method with a clear error", async () => {
      await open(fx, "index.html");
      await expect(
        fx.dh.act({ selector: "#increment", description: "x", method: "teleport" }),
      ).rejects.toThrow(/Unknown action method "teleport"/);
    });
  });

  describe("every method checks that it applied, and fails clearly when the element cannot take it", () => {
    /** act(action) on stubborn.html, with no model. */
    async function actOnStubborn(selector: string, method: string, args: string[] = []) {
      const page = await open(fx, "stubborn.html");
      const calls = fx.model.callCount;
      const result = await fx.dh.act({
        selector,
        description: `${method} ${selector}`,
        method,
        arguments: args,
      });
      // An element that is there but does not take the method is not searched for again.
      expect(fx.model.callCount).toBe(calls);
      return { page, result };
    }

    it("selectOption on a text field fails, and the field keeps its value", async () => {
      const { page, result } = await actOnStubborn("#name", "selectOption", ["zzz"]);
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/Cannot select "zzz" in "#name": it is a text field, not a <select>/);
      expect(result.message).toContain("use fill");
      expect(await page.locator("#name").inputValue()).toBe("Ada");
    });

    it("selectOption on a <select> whose page undoes the choice fails", async () => {
      const { page, result } = await actOnStubborn("#sticky", "selectOption", ["Two"]);
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/did not keep the choice/);
      expect(await page.locator("#sticky").inputValue()).toBe("one");
    });

    it("fill on a field that rewrites what is typed fails (the text did not land)", async () => {
      const { page, result } = await actOnStubborn("#shout", "fill", ["quiet"]);
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/did not land/);
      expect(await page.locator("#shout").inputValue()).toBe("QUIET");
    });

    it("fill on a contenteditable editor that refuses input fails", async () => {
      const { page, result } = await actOnStubborn("#locked", "fill", ["new text"]);
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/did not land/);
      expect(await page.locator("#locked").inputValue()).toBe("Fixed text");
    });

    it("press on an element that takes no focus fails, and no key reaches it", async () => {
      const { page, result } = await actOnStubborn("#plain-box", "press", ["Enter"]);
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/does not take the keyboard focus/);
      expect(await textOf(page, "#log")).toBe("");
    });

    it("scrollByPage on a page that does not scroll fails instead of claiming it scrolled", async () => {
      await open(fx, "stubborn.html");
      onAct(fx.model, () => step({ elementId: -1, method: "scrollByPage", arguments: ["down"] }));
      const result = await fx.dh.act("scroll down one page");
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/did not move/);
    });

    it("text typed into a contenteditable editor is read back like a field's value", async () => {
      const page = await open(fx, "contenteditable.html");
      actOn(fx.model, "textbox: Editor", "fill", ["Typed here"]);
      const result = await fx.dh.act("write Typed here in the editor");
      expect(result.success).toBe(true);
      expect(await page.locator("#editor").inputValue()).toBe("Typed here");
      expect(await textOf(page, "#mirror")).toBe("Typed here");
    });
  });
});
