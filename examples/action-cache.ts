// The action cache: the first act asks the model and stores what it did; the same act on the same
// page later is replayed from the cache with no model call (each element is checked to still be
// what it was). Needs a model for the first run (see support.ts).
//
// Run: node scripts/setup.mjs --run examples/action-cache.ts

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deckhand } from "deckhand";
import { exampleModel, pageUrl, QUIET } from "./support.ts";

const cacheDir = mkdtempSync(join(tmpdir(), "deckhand-example-cache-"));
try {
  for (const run of [1, 2]) {
    const dh = new Deckhand({
      env: "LOCAL",
      verbose: 0,
      model: exampleModel(),
      cacheDir,
      localBrowserLaunchOptions: QUIET,
    });
    await dh.init();
    try {
      await dh.page.goto(pageUrl("shop.html"));
      const result = await dh.act("add the red shirt to the cart");
      const metrics = await dh.metrics;
      console.log(
        `run ${run}: ${result.message} (${metrics.actPromptTokens} prompt tokens) -> ${await dh.page.locator("#cart-contents").textContent()}`,
      );
    } finally {
      await dh.close();
    }
  }
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
