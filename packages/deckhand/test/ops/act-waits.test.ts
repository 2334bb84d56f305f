// What an act waits for, and what it does not wait for again. An act whose element a still cookie
// banner covers fails saying so, and does not spend a full wait on the cover twice: the
// self-heal's second try on the same element (the model chose it again, the page is unchanged) is
// told at once. Bounded: two questions to the model, no click. An element the page re-renders (gone
// for a moment) is still waited for, not healed.

import { match } from "@deckhand/testkit";
import type { Deckhand } from "deckhand";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import {
  anotherDeckhand,
  idOf,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  requestsOf,
  step,
  textOf,
} from "./helpers.ts";

let fx: OpsFixture;
/** The same browser and model, with selfHeal off. */
let strict: Deckhand;
beforeAll(async () => {
  fx = await opsFixture("LOCAL");
  strict = await anotherDeckhand(fx, { selfHeal: false });
});
afterAll(async () => {
  await strict?.close();
  await fx?.close();
});
afterEach(() => {
  fx.model.clear();
});

it("reports the banner over the chosen button after asking the model twice, and clicks nothing", async () => {
  const page = await open(fx, "overlay.html");
  // The model insists on the covered button, even when told why it failed.
  onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Behind banner"), method: "click" }));
  // A minute for the act, and 30 s for the test: only an act that stops early passes.
  const result = await fx.dh.act("click the button behind the banner", { timeout: 60_000 });
  expect(result.success).toBe(false);
  expect(result.message).toMatch(/covered by another element: <div id="cookie-banner"/);
  expect(requestsOf(fx.model, "act")).toHaveLength(2);
  expect(fx.model.lastRequest?.lastUserText).toMatch(
    /failed: .*covered by another element: <div id="cookie-banner"/,
  );
  expect(await textOf(page, "#log")).toBe("");
}, 30_000);

it("acts on an element the page takes away and puts back a moment later, without a self-heal", async () => {
  const page = await open(fx, "index.html", strict);
  fx.model.on(match.schemaName("observe"), (request) => ({
    elements: [{ elementId: idOf(request, "button: Increment"), description: "the Increment button" }],
  }));
  const [action] = await strict.observe("find the increment button");
  // A re-render: the button leaves, and comes back to the same place 100 ms later.
  await page.evaluate(() => {
    const button = document.getElementById("increment")!;
    const [parent, next] = [button.parentNode!, button.nextSibling];
    button.remove();
    setTimeout(() => parent.insertBefore(button, next), 100);
  });
  const result = await strict.act(action!);
  expect(result.success).toBe(true);
  expect(result.message).not.toContain("Self-healed");
  expect(await textOf(page, "#count")).toBe("1");
});
