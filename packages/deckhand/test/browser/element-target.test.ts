// The element target (browser/element-target.ts, snapshot/describe.ts): an element found once,
// named by its frame and backend node id, that a locator made from it (page.locatorFor) acts on
// without looking it up again, in the top document and in an out-of-process iframe; and that
// finds its selector again only once that node has left the page.

import type { Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ElementTarget, releaseTarget, targetOf } from "../../src/browser/element-target.ts";
import { domRuntime } from "../../src/browser/in-page.ts";
import { targetAt } from "../../src/snapshot/describe.ts";
import { type BrowserFixture, closeFixture, openFixture, openPage, textOf, visit } from "./helpers.ts";

/** Two buttons the same selector matches; each says in #log that it was clicked. */
const TWO_BUTTONS = `<!doctype html><html><head><title>Two buttons</title></head><body>
<button type="button" class="b" onclick="log('first')">First</button>
<button type="button" class="b" onclick="log('second')">Second</button>
<input id="field" aria-label="Field">
<p id="log"></p>
<script>function log(what) { document.getElementById("log").textContent += what + " clicked;"; }</script>
</body></html>`;

let fx: BrowserFixture;
let page: Page;

beforeAll(async () => {
  fx = await openFixture();
  fx.site.route("/element-target.html", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(TWO_BUTTONS);
  });
  page = await openPage(fx, "/element-target.html");
});

afterAll(async () => {
  await closeFixture(fx);
});

/** The target of what `selector` leads to now (the test releases it). */
async function targetFor(selector: string): Promise<ElementTarget> {
  const { frame, handle } = await page.deepLocator(selector).resolve({ timeout: 2_000 });
  return targetOf(frame, handle);
}

describe("a locator made from an element target", () => {
  it("acts on the target's node, not on whatever its selector matches first", async () => {
    await visit(fx, page, "/element-target.html");
    const second = await targetFor("(//button)[2]");
    try {
      // `button.b` matches First before Second: a lookup would click First.
      await page.locatorFor(second, "button.b").click({ timeout: 2_000 });
      expect(await textOf(page, "#log")).toBe("second clicked;");
    } finally {
      releaseTarget(second);
    }
  });

  it("uses the one handle for every call of an action, and leaves it to the target", async () => {
    await visit(fx, page, "/element-target.html");
    const field = await targetFor("#field");
    try {
      const locator = page.locatorFor(field, "#field");
      await locator.fill("one", { timeout: 2_000 });
      expect(await locator.inputValue({ timeout: 2_000 })).toBe("one");
      // The calls did not release the target's handle: it still reaches the field.
      const handle = field.handle!;
      expect(await field.frame.invoke(domRuntime, "inputValue", handle)).toBe("one");
      await locator.fill("two", { timeout: 2_000 });
      expect(field.handle).toBe(handle);
      expect(await page.locator("#field").inputValue()).toBe("two");
    } finally {
      releaseTarget(field);
    }
    expect(field.handle).toBeUndefined();
  });

  it("gives resolve()'s caller a handle of its own to release", async () => {
    await visit(fx, page, "/element-target.html");
    const field = await targetFor("#field");
    try {
      const locator = page.locatorFor(field, "#field");
      const own = await locator.resolve({ timeout: 2_000 });
      expect(own.handle.objectId).not.toBe(field.handle!.objectId);
      await own.frame.release(own.handle);
      // Releasing the caller's handle left the target's working.
      await locator.fill("still here", { timeout: 2_000 });
      expect(await page.locator("#field").inputValue()).toBe("still here");
    } finally {
      releaseTarget(field);
    }
  });

  it("finds its selector again once the node has left the page", async () => {
    await visit(fx, page, "/element-target.html");
    const first = await targetFor("(//button)[1]");
    try {
      // The page replaces First with a look-alike whose click says so.
      await page.evaluate(() => {
        const old = document.querySelectorAll("button")[0]!;
        const clone = document.createElement("button");
        clone.type = "button";
        clone.className = "b";
        clone.textContent = "First";
        clone.addEventListener("click", () => {
          document.getElementById("log")!.textContent += "replacement clicked;";
        });
        old.replaceWith(clone);
      });
      await page.locatorFor(first, "(//button)[1]").click({ timeout: 2_000 });
      expect(await textOf(page, "#log")).toBe("replacement clicked;");
    } finally {
      releaseTarget(first);
    }
  });

  it("clicks in the new document after the page navigated, found by its selector", async () => {
    await visit(fx, page, "/element-target.html");
    const second = await targetFor("(//button)[2]");
    try {
      await visit(fx, page, "/element-target.html");
      await page.locatorFor(second, "(//button)[2]").click({ timeout: 2_000 });
      expect(await textOf(page, "#log")).toBe("second clicked;");
    } finally {
      releaseTarget(second);
    }
  });

  it("fills in the new document after the page navigated, found by its selector", async () => {
    await visit(fx, page, "/element-target.html");
    const field = await targetFor("#field");
    try {
      await visit(fx, page, "/element-target.html");
      await page.locatorFor(field, "#field").fill("new document", { timeout: 2_000 });
      expect(await page.locator("#field").inputValue()).toBe("new document");
    } finally {
      releaseTarget(field);
    }
  });

  it("is rebuilt from the backend node id alone once its handle is released", async () => {
    await visit(fx, page, "/element-target.html");
    const second = await targetFor("(//button)[2]");
    releaseTarget(second);
    try {
      await page.locatorFor(second, "button.b").click({ timeout: 2_000 });
      expect(await textOf(page, "#log")).toBe("second clicked;");
    } finally {
      releaseTarget(second);
    }
  });

  it("clicks in an out-of-process iframe, named by an XPath through the iframe", async () => {
    const cross = await openPage(fx, "frames/cross-site.html");
    const target = await targetAt(cross, "iframe#pay >> #child-button", { timeout: 5_000 }, { xpath: true });
    try {
      expect(target.frame.isOutOfProcess).toBe(true);
      expect({ role: target.role, name: target.name }).toEqual({ role: "button", name: "Child button" });
      expect(target.xpath).toMatch(
        /^\/html\[1\]\/body\[1\]\/iframe\[1\]\/html\[1\]\/body\[1\]\/button\[1\]$/,
      );
      await cross.locatorFor(target, target.xpath!).click({ timeout: 5_000 });
      expect(await cross.deepLocator("iframe#pay >> #child-result").textContent()).toBe("child clicked");
    } finally {
      releaseTarget(target);
      await cross.close();
    }
  });
});
