// Scraping a list with a schema: every shirt of the bundled shop, with its price, as typed data.
// Needs a model (see support.ts).
//
// Run: node scripts/setup.mjs --run examples/scrape-list.ts

import { Deckhand } from "deckhand";
import { z } from "zod";
import { exampleModel, pageUrl, QUIET } from "./support.ts";

const Shirts = z.object({
  shirts: z.array(z.object({ name: z.string(), price: z.string().describe("with its currency sign") })),
});

const dh = new Deckhand({
  env: "LOCAL",
  verbose: 0,
  model: exampleModel(),
  localBrowserLaunchOptions: QUIET,
});
await dh.init();
try {
  await dh.page.goto(pageUrl("shop.html"));
  const { shirts } = await dh.extract("every shirt with its price", Shirts);
  for (const shirt of shirts) console.log(`${shirt.name}: ${shirt.price}`);
  const metrics = await dh.metrics;
  console.log(`(${metrics.extractPromptTokens} prompt tokens)`);
} finally {
  await dh.close();
}
