// The outline stays faithful: for every id, the role and accessible name agree with Chrome's own
// accessibility tree for the same node. The few deliberate differences are listed in EXCEPTIONS.

import { takeSnapshot } from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";
import { OUTLINE_PAGES } from "./pages.ts";

/**
 * Where Deckhand says more than Chrome, on purpose:
 * - a contenteditable element is a "textbox" (Chrome: generic), because that is how a model should use it;
 * - elements that only a click handler makes interactive (cursor:pointer, tabindex, onclick) and
 *   scrollable containers keep Chrome's "generic" role, but carry their text as a name so a model
 *   can tell them apart (Chrome gives generic elements no name).
 */
function deliberate(ours: { role: string; name: string }, chrome: { role: string; name: string }): boolean {
  if (ours.role === "textbox" && chrome.role === "generic") return true;
  if (ours.role === "generic" && chrome.role === "generic" && chrome.name === "") return true;
  return false;
}

let fx: BrowserFixture;
beforeAll(async () => {
  fx = await browserFixture();
});
afterAll(async () => {
  await fx?.close();
});

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

describe("roles and names agree with Chrome's accessibility tree", () => {
  test.each(OUTLINE_PAGES)("%s", async (path) => {
    const page = fx.dh.page;
    await page.goto(fx.site.url(path));
    const snapshot = await takeSnapshot(page, { tokenBudget: false });
    const mismatches: string[] = [];
    for (const ref of await snapshot.elements(snapshot.ids())) {
      const frame = snapshot.frameOf(ref.id);
      const backendNodeId = await snapshot.backendNodeId(ref.id);
      const { nodes } = await frame.session.send("Accessibility.getPartialAXTree", {
        backendNodeId,
        fetchRelatives: false,
      });
      const node = nodes.find((n) => n.backendDOMNodeId === backendNodeId) ?? nodes[0];
      const chrome = { role: String(node?.role?.value ?? ""), name: norm(String(node?.name?.value ?? "")) };
      const ours = { role: ref.role, name: norm(ref.name) };
      if ((chrome.role !== ours.role || chrome.name !== ours.name) && !deliberate(ours, chrome)) {
        mismatches.push(
          `[${ref.id}] ours ${ours.role} ${JSON.stringify(ours.name)} / chrome ${chrome.role} ${JSON.stringify(chrome.name)}`,
        );
      }
    }
    expect(mismatches).toEqual([]);
  });
});
