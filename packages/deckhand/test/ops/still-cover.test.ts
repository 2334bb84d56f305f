// An act whose element a still cookie banner covers fails saying so, and does not spend a full
// wait on the cover twice: the self-heal's second try on the same element (the model chose it
// again, the page is unchanged) is told at once. Bounded: two questions to the model, no click.

import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { idOf, type OpsFixture, onAct, open, opsFixture, requestsOf, step, textOf } from "./helpers.ts";

let fx: OpsFixture;
beforeAll(async () => {
  fx = await opsFixture("LOCAL");
});
afterAll(async () => {
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
