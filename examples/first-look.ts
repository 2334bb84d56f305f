// A first look at Deckhand without any model: launch Chromium, open a bundled page, print what a
// model would see (the page outline), then fill in the shop's checkout with explicit instructions,
// which need no model: each names one element on the page, and Deckhand finds it by its role and
// name. An instruction that does not (three "Add to cart" buttons) says that it needs a model.
//
// Run: npm run example   (from the repository root)

import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Deckhand, MissingLLMConfigurationError } from "deckhand";

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

  // Three buttons are called "Add to cart": which one is a model's call (or the page API's).
  try {
    await dh.act("click Add to cart");
  } catch (error) {
    if (!(error instanceof MissingLLMConfigurationError)) throw error;
    console.log(`\nact("click Add to cart") needs a model:\n  ${error.message.split(". ")[0]}.`);
  }
  await dh.page.locator("xpath=//li[contains(., 'Blue shirt')]/button").click();
  console.log(`With the page API instead: ${await dh.page.locator("#cart-contents").textContent()}`);

  // Explicit instructions: no model, no key, no tokens. %email% is put in locally and never shown.
  console.log("\nExplicit instructions, carried out without a model:");
  const variables = { email: "ada@example.com" };
  for (const instruction of [
    "type 'Ada Lovelace' into the Full name field",
    "type %email% into the Email field",
    "select Germany from the Country dropdown",
    "check Gift wrap",
    "click the Place order button",
  ]) {
    const result = await dh.act(instruction, { variables });
    console.log(`  ${result.success ? "ok" : "FAILED"}  ${instruction}  ->  ${result.message}`);
  }
  console.log(`\n${await dh.page.locator("#confirmation").textContent()}`);
  const metrics = await dh.metrics;
  console.log(`Model tokens used: ${metrics.totalPromptTokens + metrics.totalCompletionTokens}`);
} finally {
  await dh.close();
}
