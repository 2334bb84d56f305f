// A first look at Deckhand without any model: launch Chromium, open a bundled page, print what a
// model would see (the page outline), then use the page API to add a shirt to the cart.
//
// Run: npm run example   (from the repository root)

import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Deckhand } from "deckhand";

const page = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "pages", "shop.html")).href;

const dh = new Deckhand({
  env: "LOCAL",
  verbose: 0,
  localBrowserLaunchOptions: {
    // Keep Chromium from calling home at start-up (harmless elsewhere, needed on closed networks).
    args: ["--disable-background-networking", "--disable-component-update"],
  },
});

const started = performance.now();
await dh.init();
console.log(`Chromium ready in ${Math.round(performance.now() - started)} ms`);

try {
  await dh.page.goto(page);
  console.log(`\nOpened "${await dh.page.title()}". What a model sees (extract() with no arguments):\n`);
  const { pageText } = await dh.extract();
  console.log(pageText);

  // The page API needs no model: find the blue shirt's button and click it like a user would.
  await dh.page.locator("xpath=//li[contains(., 'Blue shirt')]/button").click();
  console.log(
    `\nAfter clicking "Add to cart" for the blue shirt: ${await dh.page.locator("#cart-contents").textContent()}`,
  );
  console.log(
    '\nWith a model configured, the same is one line: await dh.act("add the blue shirt to the cart")',
  );
} finally {
  await dh.close();
}
