// The record-time locator check (docs/export.md) runs in the same in-page evaluation that describes
// the element an act(action) is about to act on, inside the outline script. The outline shows a
// field holding text typed from a `%name%` variable as that token; Playwright's locators see the
// field's real value. The check must count names as Playwright does, so that a name which holds a
// variable's value is dropped (its value must not reach the file), never exported with the token
// in it (a locator that would match nothing when the spec runs).

import type { Deckhand } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anotherDeckhand, type OpsFixture, opsFixture } from "../ops/helpers.ts";

const CITY = "Reykjavik-7734";

const PAGE = `<!doctype html><html><head><title>Delivery</title></head><body>
<label><input type="checkbox" id="deliver"> Deliver to <input id="city"></label>
</body></html>`;

describe("LOCAL", () => {
  let fx: OpsFixture;
  let unroute: () => void;

  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
    unroute = fx.site.route("/delivery.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
    });
  });
  afterAll(async () => {
    unroute?.();
    await fx?.close();
  });

  it("a checkbox whose name holds a typed variable's value: no locator with the token, none with the value", async () => {
    const dh: Deckhand = await anotherDeckhand(fx);
    let spec: string;
    try {
      await dh.page.goto(fx.site.url("/delivery.html"));
      const fill = await dh.act(
        { selector: "#city", description: "the City field", method: "fill", arguments: ["%city%"] },
        { variables: { city: CITY } },
      );
      expect(fill.success, fill.message).toBe(true);
      // What the outline shows for the checkbox: the token, not the value.
      const outline = await dh.observe();
      expect(JSON.stringify(outline)).not.toContain(CITY);
      const click = await dh.act({
        selector: "#deliver",
        description: "the Deliver to checkbox",
        method: "click",
        arguments: [],
      });
      expect(click.success, click.message).toBe(true);
      expect(await dh.page.locator("#deliver").isChecked()).toBe(true);
      spec = await dh.exportScript({ format: "playwright-test" });
    } finally {
      await dh.close();
    }
    expect(spec).not.toContain(CITY);
    // The checkbox's accessible name is "Deliver to <the city>": it shows the value, so getByRole
    // is dropped; its label's own text is unique and safe. The token may be in the observe comment
    // (what the outline showed), never in a locator.
    expect(spec).not.toMatch(/getBy\w+\([^)]*%city%/);
    expect(spec).not.toMatch(/getByRole\("checkbox"/);
    expect(spec).toMatch(/getByLabel\("Deliver to", \{ exact: true \}\)/);
  });
});
