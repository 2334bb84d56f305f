// Golden tests: the outline of each kind of page, exactly. Ports vary between runs and are
// replaced by PORT. To regenerate after an intended change: UPDATE_GOLDEN=1 npx vitest run
// packages/deckhand/test/snapshot/outline.test.ts — then read the diff before committing it.

import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";
import { OUTLINE_PAGES } from "./pages.ts";

const goldenDir = join(dirname(fileURLToPath(import.meta.url)), "golden");

let fx: BrowserFixture;
beforeAll(async () => {
  fx = await browserFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe("the outline of each kind of page", () => {
  test.each(OUTLINE_PAGES)("%s", async (path) => {
    await fx.dh.page.goto(fx.site.url(path));
    const { pageText } = await fx.dh.extract();
    const text = pageText.replace(/(127\.0\.0\.\d):\d+/g, "$1:PORT");
    const file = join(goldenDir, `${path.replace(/\//g, "__").replace(/\.html$/, "")}.txt`);
    if (process.env.UPDATE_GOLDEN || !existsSync(file)) {
      await writeFile(file, `${text}\n`);
      if (!process.env.UPDATE_GOLDEN)
        throw new Error(`wrote a new golden file ${file}; check it and run again`);
    }
    expect(text).toBe((await readFile(file, "utf8")).replace(/\n$/, ""));
  });
});
