// An act finds its element once and acts on that node (the element target); what used to be a
// second lookup by selector still happens where the page replaced the node during the step: a
// field that the typing re-renders gets its `%name%` note on the field that shows the text.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, type OpsFixture, open, opsFixture } from "./helpers.ts";

/** A field that the page replaces with a copy of itself (same id, same value) on every input. */
const RE_RENDERED_FIELD = `<!doctype html><html><head><title>Re-rendered field</title></head><body>
<label for="pin">PIN</label> <input id="pin">
<script>
  function watch(field) {
    field.addEventListener("input", () => {
      const copy = field.cloneNode();
      copy.value = field.value;
      watch(copy);
      field.replaceWith(copy);
    });
  }
  watch(document.getElementById("pin"));
</script>
</body></html>`;

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
    fx.site.route("/re-rendered-field.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(RE_RENDERED_FIELD);
    });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("keeps a variable's value hidden in a field the typing replaced", async () => {
    const page = await open(fx, "re-rendered-field.html");
    // An expando property (a copy does not get it) tells the field Deckhand found from its copies.
    await page.evaluate(() => {
      (document.getElementById("pin") as HTMLInputElement & { original?: boolean }).original = true;
    });
    // Two characters: too short to be masked in text, so only the field's own note hides it.
    const result = await fx.dh.act(
      { selector: "#pin", description: "the PIN field", method: "fill", arguments: ["%pin%"] },
      { variables: { pin: "k7" } },
    );
    expect(result.success).toBe(true);
    expect(await page.evaluate(() => (document.getElementById("pin") as HTMLInputElement).value)).toBe("k7");
    // The field was replaced by the typing: the one on the page now is not the one typed into.
    expect(
      await page.evaluate(
        () => (document.getElementById("pin") as HTMLInputElement & { original?: boolean }).original ?? false,
      ),
    ).toBe(false);
    const { pageText } = await fx.dh.extract();
    expect(pageText).toContain("textbox: PIN value=%pin%");
    expect(pageText).not.toContain("k7");
  });

  it("names the element by its absolute XPath in the result, whatever selector came in", async () => {
    await open(fx, "re-rendered-field.html");
    const result = await fx.dh.act({
      selector: "#pin",
      description: "the PIN field",
      method: "fill",
      arguments: ["1"],
    });
    expect(result.success).toBe(true);
    expect(result.actions?.[0]?.selector).toBe("/html[1]/body[1]/input[1]");
  });
});
