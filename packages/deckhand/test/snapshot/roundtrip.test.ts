// For every id in every snapshot, the element reference's absolute XPath leads back, through
// iframes and shadow roots, to the very same node.

import { ServiceDomProcessError, ServiceTargetClosedError, takeSnapshot } from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";
import { OUTLINE_PAGES } from "./pages.ts";

let fx: BrowserFixture;
beforeAll(async () => {
  fx = await browserFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe("id -> XPath -> the same node", () => {
  test.each(OUTLINE_PAGES)("%s", async (path) => {
    const page = fx.dh.page;
    await page.goto(fx.site.url(path));
    const snapshot = await takeSnapshot(page, { tokenBudget: false });
    const ids = snapshot.ids();
    expect(ids.length).toBeGreaterThan(0);
    for (const ref of await snapshot.elements(ids)) {
      const expected = await snapshot.backendNodeId(ref.id);
      const { frame, handle } = await page.deepLocator(ref.xpath).resolve({ timeout: 1_000 });
      try {
        expect(frame.id, `frame of [${ref.id}] ${ref.xpath}`).toBe(ref.frameId);
        expect(await frame.backendNodeId(handle), `node of [${ref.id}] ${ref.xpath}`).toBe(expected);
      } finally {
        void frame.release(handle);
      }
    }
  });

  test("an element inside an out-of-process iframe inside a closed shadow root", async () => {
    const page = fx.dh.page;
    await page.goto(fx.site.url("shadow/oopif-in-shadow.html"));
    const snapshot = await takeSnapshot(page);
    const line = snapshot.text.split("\n").find((l) => l.includes("button: Child button"))!;
    const id = Number(/\[(\d+)\]/.exec(line)![1]);
    const ref = await snapshot.element(id);
    expect(snapshot.frameOf(id).isOutOfProcess).toBe(true);
    // The path enters the closed root (`//`) and then the iframe's document.
    expect(ref.xpath).toMatch(/\/\/.*iframe\[\d+\]\/html\[1\]\/body\[1\]\/.*button\[1\]$/);
    await page.deepLocator(ref.xpath).click();
    expect(
      await page
        .deepLocator(`${ref.xpath.slice(0, ref.xpath.indexOf("/html[1]/body[1]/", 2))}/html[1]/body[1]`)
        .textContent(),
    ).toContain("child clicked");
  });
});

describe("ids that no longer stand for elements say why", () => {
  test("after a navigation: ServiceDomProcessError with reason stale-snapshot", async () => {
    const page = fx.dh.page;
    await page.goto(fx.site.url("form.html"));
    const snapshot = await takeSnapshot(page);
    const [id] = snapshot.ids();
    await page.goto(fx.site.url("index.html"));
    const error = await snapshot.element(id!).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceDomProcessError);
    expect(error).toMatchObject({ reason: "stale-snapshot" });
  });

  test.each(["frames/same-origin.html", "frames/cross-site.html"])(
    "in a frame that was removed (%s): ServiceTargetClosedError, not a stale snapshot",
    async (path) => {
      const page = fx.dh.page;
      await page.goto(fx.site.url(path));
      const snapshot = await takeSnapshot(page);
      const line = snapshot.text.split("\n").find((l) => l.includes("button: Child button"))!;
      const id = Number(/\[(\d+)\]/.exec(line)![1]);
      const frame = snapshot.frameOf(id);
      await page.evaluate(() => document.querySelector("iframe")!.remove());
      // The library learns of the removal from the browser's frameDetached event: wait for it (as
      // long as it takes on a busy machine; a detach that never comes fails by the test's timeout).
      while (!frame.detached) await new Promise((r) => setTimeout(r, 20));
      const error = await snapshot.element(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceTargetClosedError);
      expect(error).toMatchObject({ reason: "target-closed" });
    },
  );
});
