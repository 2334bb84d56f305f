// A Playwright page with Deckhand: Playwright connects to Deckhand's browser, and Deckhand's act,
// extract and observe work on the Playwright page (the `page` option). No model needed here: the
// instructions are explicit.
//
// Run: node scripts/setup.mjs --run examples/playwright-page.ts   (needs playwright-core)

import { Deckhand } from "deckhand";
import { chromium } from "playwright-core";
import { pageUrl, QUIET } from "./support.ts";

const dh = new Deckhand({ env: "LOCAL", verbose: 0, localBrowserLaunchOptions: QUIET });
await dh.init();
const browser = await chromium.connectOverCDP(dh.connectURL());
try {
  const page = browser.contexts()[0]!.pages()[0]!;
  await page.goto(pageUrl("shop.html"));
  await page.getByRole("button", { name: "Add to cart" }).first().click(); // Playwright
  await dh.act("type 'Grace Hopper' into the Full name field", { page }); // Deckhand, same page
  await dh.act("select Spain from the Country dropdown", { page });
  console.log(await page.locator("#cart-contents").textContent());
  console.log(
    `Full name: ${await page.inputValue("#full-name")}, country: ${await page.inputValue("#country")}`,
  );
} finally {
  await browser.close();
  await dh.close();
}
