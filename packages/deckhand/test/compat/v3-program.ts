// A small program written for the reference library's v3 API, as its documentation shows one:
// init, goto, act, extract with a schema, observe, act on what observe found, metrics, history,
// close. Ported by changing its import line only:
//
//   import { Stagehand } from "@browserbasehq/stagehand";
//
// Where it runs (LOCAL, or BROWSERBASE: a Deckhand service at PLATFORM_API_URL), the page and the
// model's address come from the environment, as a deployed program's would. It prints one line,
// `RESULT <json>`, with what it saw. (The two `!` are this repository's `noUncheckedIndexedAccess`,
// which the documentation's programs do not compile with.)

import { Deckhand as Stagehand } from "deckhand";
import { z } from "zod";

async function main() {
  const stagehand = new Stagehand({
    env: process.env.STAGEHAND_ENV === "BROWSERBASE" ? "BROWSERBASE" : "LOCAL",
    apiKey: process.env.BROWSERBASE_API_KEY,
    model: {
      modelName: "openai/gpt-4.1-mini",
      apiKey: process.env.OPENAI_API_KEY,
      baseURL: process.env.OPENAI_BASE_URL,
    },
    verbose: 0,
  });
  await stagehand.init();

  const page = stagehand.context.pages()[0]!;
  await page.goto(process.env.START_URL ?? "https://example.com", { waitUntil: "load", timeoutMs: 15000 });

  const typed = await stagehand.act("type alice into the username field");

  const { heading } = await stagehand.extract(
    "extract the heading of the page",
    z.object({ heading: z.string().describe("the page's main heading") }),
  );

  const [submit] = await stagehand.observe("find the sign in button");
  const clicked = await stagehand.act(submit!);

  const result = await page.locator("#result").innerText();
  const metrics = await stagehand.metrics;
  const history = await stagehand.history;
  await stagehand.close();

  console.log(
    `RESULT ${JSON.stringify({
      typed: typed.success,
      heading,
      observed: submit,
      clicked: clicked.success,
      result,
      totalPromptTokens: metrics.totalPromptTokens,
      actPromptTokens: metrics.actPromptTokens,
      history: history.map((entry) => entry.method),
    })}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
