// The tools' MCP annotations say what each tool may do; here the ones that need no model are run on
// a real page to check that they are true: a read-only tool leaves the page's document, its URL,
// its fields and the tabs as they were; the tools that say they are not read-only change them.

import { TOOLS, type ToolDefinition } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";

/** A page that counts every change to its DOM and remembers when it was loaded. */
const PAGE = `<!doctype html><html><head><title>Watched</title></head><body>
<h1>Watched</h1><label>Name <input id="name" value="Ada"></label><a href="/watched.html?next">Next</a>
<script>
  window.loadedAt = performance.timeOrigin;
  window.changes = 0;
  new MutationObserver((records) => { window.changes += records.length; })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
</script>
</body></html>`;

let fx: BrowserFixture;

beforeAll(async () => {
  fx = await browserFixture();
  fx.site.route("/watched.html", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
});

afterAll(async () => {
  await fx?.close();
});

function tool(name: string): ToolDefinition {
  const found = TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** What a read-only tool must leave alone. */
async function pageState() {
  const page = fx.dh.page;
  return {
    url: page.url(),
    tabs: fx.dh.context.pages().length,
    loadedAt: await page.evaluate<number>("window.loadedAt"),
    changes: await page.evaluate<number>("window.changes"),
    name: await page.locator("#name").inputValue(),
  };
}

describe("tool annotations, checked against what the tools do", () => {
  it("every tool says whether it reads only, may destroy and reaches the web; a read-only one destroys nothing", () => {
    for (const t of TOOLS) {
      expect(Object.keys(t.annotations).sort()).toEqual(["destructiveHint", "openWorldHint", "readOnlyHint"]);
      if (t.annotations.readOnlyHint) expect(t.annotations.destructiveHint, t.name).toBe(false);
    }
  });

  it.each([
    ["text", {}],
    ["screenshot", { fullPage: true }],
    ["observe", {}],
    ["export", {}],
  ])("%s says it reads only, and leaves the page as it was", async (name, input) => {
    const definition = tool(name);
    expect(definition.annotations.readOnlyHint).toBe(true);
    await fx.dh.page.goto(fx.site.url("/watched.html"));
    const before = await pageState();
    const result = await definition.run(fx.dh, definition.input.parse(input) as never);
    expect(result.ok).toBe(true);
    expect(await pageState()).toEqual(before);
  });

  it("navigate, back and tabs say they are not read-only, and change the tab or the tabs", async () => {
    for (const name of ["navigate", "back", "forward", "tabs", "act", "agent"])
      expect(tool(name).annotations.readOnlyHint, name).toBe(false);
    await fx.dh.page.goto(fx.site.url("/watched.html"));
    const first = await pageState();
    await tool("navigate").run(fx.dh, { url: fx.site.url("/watched.html?next") } as never);
    expect((await pageState()).url).not.toBe(first.url);
    await tool("back").run(fx.dh, {} as never);
    expect((await pageState()).url).toBe(first.url);

    const extra = await fx.dh.context.newPage();
    await fx.dh.context.setActivePage(fx.dh.context.pages()[0]!);
    const tabs = fx.dh.context.pages().length;
    await tool("tabs").run(fx.dh, { action: "close", index: fx.dh.context.pages().indexOf(extra) } as never);
    expect(fx.dh.context.pages().length).toBe(tabs - 1);
  });
});
