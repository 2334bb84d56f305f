// Locator actions, each checked by what the page recorded: click (real mouse events at the
// element's visible point, after scrolling), dblclick, hover, fill, type, press, selectOption,
// setInputFiles, scrollIntoView, check/uncheck and dragTo.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type BrowserFixture,
  closeFixture,
  closeOtherPages,
  eventually,
  openFixture,
  textOf,
  visit,
} from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;
let dir: string;

beforeAll(async () => {
  [fx, dir] = await Promise.all([openFixture(), mkdtemp(join(tmpdir(), "deckhand-upload-"))]);
  firstPage = fx.dh.context.pages()[0]!;
});

afterEach(async () => {
  await closeOtherPages(fx, firstPage);
});

/** The file's one tab, on a fresh document of `path`. */
const show = (path: string) => visit(fx, firstPage, path);

afterAll(async () => {
  await Promise.all([closeFixture(fx), rm(dir, { recursive: true, force: true })]);
});

const logLines = async (page: Page) => ((await textOf(page, "#log")) ?? "").split("\n").filter(Boolean);
const inputValueOf = (page: Page, selector: string) =>
  page.evaluate((s: string) => (document.querySelector(s) as HTMLInputElement).value, selector);

describe("click()", () => {
  it("runs the element's click handler", async () => {
    const page = await show("index.html");
    await page.locator("#increment").click();
    await page.locator("#increment").click();
    expect(await textOf(page, "#count")).toBe("2");
  });

  it("clicks with a trusted mouse event inside the element's box", async () => {
    const page = await show("index.html");
    await page.evaluate(() => {
      const button = document.getElementById("increment")!;
      button.addEventListener("click", (e) => {
        const r = button.getBoundingClientRect();
        const inside =
          e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
        document.title = `trusted:${e.isTrusted} inside:${inside}`;
      });
    });
    await page.locator("#increment").click();
    expect(await page.title()).toBe("trusted:true inside:true");
  });

  it("scrolls an element below the fold into view first", async () => {
    const page = await show("scroll.html");
    await page.locator("#bottom-button").click();
    expect(await logLines(page)).toEqual(["bottom-button clicked"]);
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(3_000);
  });

  it("scrolls inside a scrollable box to reach an element", async () => {
    const page = await show("scroll.html");
    await page.locator("#deep-item-button").click();
    expect(await logLines(page)).toEqual(["deep-item-button clicked"]);
    expect(await page.evaluate(() => document.getElementById("scroller")!.scrollTop)).toBeGreaterThan(0);
  });

  it("clicks the part of an element that is not covered", async () => {
    const page = await show("index.html");
    // A banner over the left half of the button: the click must land on its right half.
    await page.evaluate(() => {
      const r = document.getElementById("increment")!.getBoundingClientRect();
      const cover = document.createElement("div");
      cover.id = "half-cover";
      Object.assign(cover.style, {
        position: "fixed",
        left: `${r.left - 5}px`,
        top: `${r.top - 5}px`,
        width: `${r.width / 2 + 5}px`,
        height: `${r.height + 10}px`,
        background: "rgba(0,0,0,0.5)",
      });
      cover.onclick = () => {
        document.title = "cover clicked";
      };
      document.body.append(cover);
    });
    await page.locator("#increment").click();
    expect(await textOf(page, "#count")).toBe("1");
    expect(await page.title()).not.toBe("cover clicked");
  });

  it("waits for a disabled button to become enabled", async () => {
    const page = await show("dynamic.html");
    await page.locator("#slow-button").click();
    expect(await logLines(page)).toContain("slow clicked");
  });

  it("finds the element afresh for each call, so a replaced element is still reached", async () => {
    const page = await show("dynamic.html");
    const button = page.locator("#replace-me");
    await button.click();
    await button.click();
    expect(await logLines(page)).toEqual(["original clicked", "replacement clicked"]);
  });

  it("clicks a label's control through the label that covers it", async () => {
    const page = await show("index.html");
    await page.evaluate(() => {
      document.body.insertAdjacentHTML(
        "beforeend",
        `<label style="position: relative; display: inline-block">
           <input type="checkbox" id="styled" style="opacity: 0; position: absolute; left: 0; top: 0; width: 20px; height: 20px">
           <span style="position: relative; display: inline-block; width: 20px; height: 20px; background: #999"></span> Styled
         </label>`,
      );
    });
    await page.locator("#styled").click();
    expect(await page.evaluate(() => (document.getElementById("styled") as HTMLInputElement).checked)).toBe(
      true,
    );
  });

  it("right-clicks with button: right", async () => {
    const page = await show("index.html");
    await page.evaluate(() => {
      document.getElementById("increment")!.addEventListener("contextmenu", (e) => {
        e.preventDefault();
        document.title = `contextmenu:${e.button}`;
      });
    });
    await page.locator("#increment").click({ button: "right" });
    expect(await page.title()).toBe("contextmenu:2");
    expect(await textOf(page, "#count")).toBe("0");
  });
});

describe("dblclick()", () => {
  it("double-clicks: two clicks and one dblclick event", async () => {
    const page = await show("index.html");
    await page.evaluate(() => {
      document.getElementById("increment")!.addEventListener("dblclick", () => {
        document.title = "double-clicked";
      });
    });
    await page.locator("#increment").dblclick();
    expect(await page.title()).toBe("double-clicked");
    expect(await textOf(page, "#count")).toBe("2");
  });
});

describe("hover()", () => {
  it("moves the mouse over the element, firing mouseenter", async () => {
    const page = await show("hover.html");
    await page.locator("#account-menu").hover();
    expect(await logLines(page)).toEqual(["account mouseenter"]);
    expect(await page.locator("#account-submenu").isVisible()).toBe(true);
  });

  it("opens a CSS :hover menu, whose items can then be clicked", async () => {
    const page = await show("hover.html");
    expect(await page.locator("#laptops-link").isVisible()).toBe(false);
    await page.locator("#products-menu").hover();
    expect(await page.locator("#laptops-link").isVisible()).toBe(true);
    await page.locator("#laptops-link").click();
    expect(await textOf(page, "#result")).toBe("Laptops chosen");
  });

  it("leaves the previous element, firing its mouseleave", async () => {
    const page = await show("hover.html");
    await page.locator("#account-menu").hover();
    await page.locator("h1").hover();
    expect(await logLines(page)).toEqual(["account mouseenter", "account mouseleave"]);
  });
});

describe("fill()", () => {
  it("puts the value in a text input", async () => {
    const page = await show("form.html");
    await page.locator("#username").fill("ada");
    expect(await inputValueOf(page, "#username")).toBe("ada");
  });

  it("replaces what the field held", async () => {
    const page = await show("form.html");
    await page.locator("#username").fill("first value");
    await page.locator("#username").fill("second");
    expect(await inputValueOf(page, "#username")).toBe("second");
  });

  it("clears the field with an empty string", async () => {
    const page = await show("inputs.html");
    await page.locator("#text-input").fill("something");
    await page.locator("#text-input").fill("");
    expect(await inputValueOf(page, "#text-input")).toBe("");
    expect((await logLines(page)).at(-1)).toBe("text-input:input:");
  });

  it("fires input events the page's handlers see", async () => {
    const page = await show("inputs.html");
    await page.locator("#email-input").fill("a@example.com");
    expect(await logLines(page)).toContain("email-input:input:a@example.com");
  });

  it("fills a textarea with several lines", async () => {
    const page = await show("inputs.html");
    await page.locator("#textarea-input").fill("line one\nline two");
    expect(await inputValueOf(page, "#textarea-input")).toBe("line one\nline two");
  });

  it("sets a date input, with input and change events", async () => {
    const page = await show("inputs.html");
    await page.locator("#date-input").fill("2024-05-06");
    expect(await inputValueOf(page, "#date-input")).toBe("2024-05-06");
    expect(await logLines(page)).toEqual(["date-input:input:2024-05-06", "date-input:change:2024-05-06"]);
  });

  it("rejects a value a date input cannot take", async () => {
    const page = await show("inputs.html");
    const error = await page
      .locator("#date-input")
      .fill("next tuesday")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain("not a valid value");
  });

  it("fills a contenteditable element", async () => {
    const page = await show("contenteditable.html");
    await page.locator("#editor").fill("Rewritten");
    expect(await textOf(page, "#editor")).toBe("Rewritten");
    expect(await textOf(page, "#mirror")).toBe("Rewritten");
  });

  it("fills a password field, and the form submits what was filled", async () => {
    const page = await show("form.html");
    await page.locator("#username").fill("ada");
    await page.locator("#password").fill("s3cret!");
    await page.locator("text=Sign in").nth(-1).click();
    expect(JSON.parse((await textOf(page, "#result")) ?? "{}")).toEqual({
      username: "ada",
      password: "s3cret!",
      remember: false,
    });
  });

  it("refuses a disabled input, naming it", async () => {
    const page = await show("inputs.html");
    const error = await page
      .locator("#disabled-input")
      .fill("x")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toMatch(/#disabled-input.*disabled/);
    expect(await inputValueOf(page, "#disabled-input")).toBe("cannot change");
  });

  it("refuses a read-only input", async () => {
    const page = await show("inputs.html");
    await expect(page.locator("#readonly-input").fill("x")).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
    expect(await inputValueOf(page, "#readonly-input")).toBe("fixed value");
  });

  it("refuses a checkbox, pointing to check()", async () => {
    const page = await show("inputs.html");
    const error = await page
      .locator("#checkbox-input")
      .fill("on")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain("check");
  });
});

describe("type() and press()", () => {
  it("type() focuses the element and types after what it holds", async () => {
    const page = await show("keyboard.html");
    await page.locator("#text").fill("abc");
    await page.locator("#text").type("def");
    expect(await inputValueOf(page, "#text")).toBe("abcdef");
  });

  it("type() sends a key event for each character", async () => {
    const page = await show("keyboard.html");
    await page.locator("#text").type("hi");
    expect(await logLines(page)).toEqual(["h|KeyH|", "i|KeyI|"]);
  });

  it("press() focuses the element and presses the key there", async () => {
    const page = await show("keyboard.html");
    await page.locator("#text").fill("go");
    await page.locator("h1").click();
    await page.locator("#text").press("Enter");
    expect(await textOf(page, "#result")).toBe("submitted:go");
  });

  it('press("Control+A") then typing replaces the text', async () => {
    const page = await show("keyboard.html");
    await page.locator("#text").fill("old");
    await page.locator("#text").press("Control+A");
    await page.locator("#text").type("new");
    expect(await inputValueOf(page, "#text")).toBe("new");
  });
});

describe("selectOption()", () => {
  it("selects by value and returns the selected values", async () => {
    const page = await show("select.html");
    expect(await page.locator("#country").selectOption("jp")).toEqual(["jp"]);
    expect(await textOf(page, "#country-result")).toBe("jp:Japan");
  });

  it("selects by visible label", async () => {
    const page = await show("select.html");
    expect(await page.locator("#country").selectOption("Germany")).toEqual(["de"]);
    expect(await textOf(page, "#country-result")).toBe("de:Germany");
  });

  it("selects several options of a multiple select", async () => {
    const page = await show("inputs.html");
    expect(await page.locator("#multi-select-input").selectOption(["onion", "Ham"])).toEqual([
      "onion",
      "ham",
    ]);
    expect(await logLines(page)).toContain("multi-select-input:change:onion,ham");
  });

  it("names the options there are when the wanted one is missing", async () => {
    const page = await show("select.html");
    const error = await page
      .locator("#country")
      .selectOption("Atlantis")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain('"Atlantis"');
    expect((error as Error).message).toContain('"Japan"');
    expect(await inputValueOf(page, "#country")).toBe("fr");
  });

  it("refuses several options for a single select", async () => {
    const page = await show("select.html");
    await expect(page.locator("#country").selectOption(["fr", "de"])).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });

  it("refuses an element that is not a select", async () => {
    const page = await show("select.html");
    await expect(page.locator("#color-button").selectOption("Red")).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});

describe("setInputFiles()", () => {
  it("sets a file from disk, with its name and size", async () => {
    const file = join(dir, "notes.txt");
    await writeFile(file, "twelve bytes");
    const page = await show("upload.html");
    await page.locator("#file").setInputFiles(file);
    expect(await textOf(page, "#files")).toBe("notes.txt (12 bytes)");
  });

  it("sets several in-memory files, with their content", async () => {
    const page = await show("upload.html");
    await page.locator("#file").setInputFiles([
      { name: "a.json", mimeType: "application/json", buffer: Buffer.from('{"a":1}') },
      { name: "b.bin", mimeType: "application/octet-stream", buffer: new Uint8Array([0, 1, 2, 255]) },
    ]);
    expect(await page.locator("#files li").count()).toBe(2);
    expect(await textOf(page, "#files")).toBe("a.json (7 bytes)b.bin (4 bytes)");
    const content = await page.evaluate(async () => {
      const files = (document.getElementById("file") as HTMLInputElement).files!;
      return {
        text: await files[0]!.text(),
        bytes: [...new Uint8Array(await files[1]!.arrayBuffer())],
        type: files[0]!.type,
      };
    });
    expect(content).toEqual({ text: '{"a":1}', bytes: [0, 1, 2, 255], type: "application/json" });
  });

  it("refuses a path that cannot be read", async () => {
    const page = await show("upload.html");
    const missing = join(dir, "missing.txt");
    const error = await page
      .locator("#file")
      .setInputFiles(missing)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceInvalidArgumentError" });
    expect((error as Error).message).toContain(missing);
  });

  it("refuses an element that is not a file input", async () => {
    const page = await show("inputs.html");
    await expect(
      page
        .locator("#text-input")
        .setInputFiles({ name: "x.txt", mimeType: "text/plain", buffer: Buffer.from("x") }),
    ).rejects.toMatchObject({ name: "ServiceInvalidArgumentError" });
  });
});

describe("scrollIntoView()", () => {
  it("scrolls the page until the element is in the viewport", async () => {
    const page = await show("scroll.html");
    const inView = () =>
      page.evaluate(() => {
        const r = document.getElementById("bottom-button")!.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight;
      });
    expect(await inView()).toBe(false);
    await page.locator("#bottom-button").scrollIntoView();
    expect(await inView()).toBe(true);
  });
});

describe("check() and uncheck()", () => {
  it("checks a checkbox by clicking it, and the form sees it", async () => {
    const page = await show("form.html");
    await page.locator("#remember").check();
    expect(await page.locator("#remember").isChecked()).toBe(true);
    await page.locator("form button").click();
    expect(JSON.parse((await textOf(page, "#result")) ?? "{}")).toMatchObject({ remember: true });
  });

  it("leaves a checked checkbox checked", async () => {
    const page = await show("inputs.html");
    await page.locator("#checkbox-input").check();
    await page.locator("#checkbox-input").check();
    expect(await page.locator("#checkbox-input").isChecked()).toBe(true);
    expect((await logLines(page)).filter((l) => l.startsWith("checkbox-input:change"))).toEqual([
      "checkbox-input:change:true",
    ]);
  });

  it("unchecks a checked checkbox", async () => {
    const page = await show("inputs.html");
    await page.locator("#checkbox-input").check();
    await page.locator("#checkbox-input").uncheck();
    expect(await page.locator("#checkbox-input").isChecked()).toBe(false);
  });

  it("checks a radio button, unchecking its siblings", async () => {
    const page = await show("inputs.html");
    await page.locator("#shipping-express").check();
    expect(await page.locator("#shipping-express").isChecked()).toBe(true);
    expect(await page.locator("#shipping-standard").isChecked()).toBe(false);
  });

  it("fails with ServiceClickError when a click cannot uncheck (a radio)", async () => {
    const page = await show("inputs.html");
    await expect(page.locator("#shipping-standard").uncheck({ timeout: 500 })).rejects.toMatchObject({
      name: "ServiceClickError",
    });
  });
});

describe("dragTo()", () => {
  it("drags an element onto another with HTML5 drag and drop", async () => {
    const page = await show("dnd.html");
    await page.locator("#drag-item").dragTo(page.locator("#drop-zone"));
    expect(
      await eventually(
        () => textOf(page, "#drop-result"),
        (t) => t !== "",
      ),
    ).toBe("dropped:drag-item");
  });

  it("drags a mouse-driven slider handle", async () => {
    const page = await show("dnd.html");
    // The track's centre is its halfway point.
    await page.locator("#handle").dragTo(page.locator("#track"));
    expect(Number(await textOf(page, "#slider-value"))).toBeGreaterThanOrEqual(48);
    expect(Number(await textOf(page, "#slider-value"))).toBeLessThanOrEqual(52);
    expect(await logLines(page)).toEqual(["slider mousedown", "slider mouseup:50"]);
  });
});
