// A custom llmClient: any object with `modelName` and `generate({ operation, messages, schema })`
// can be Deckhand's model. This one is a toy that needs no network: for act it picks the button
// whose name the instruction quotes; a real one would call your model's API here.
//
// Run: node scripts/setup.mjs --run examples/custom-llm-client.ts

import { Deckhand, type LLMClient, type LLMRequest, type LLMResponse } from "deckhand";
import { pageUrl, QUIET } from "./support.ts";

class QuotedButtonModel implements LLMClient {
  readonly modelName = "example/quoted-button";

  async generate<T>(request: LLMRequest): Promise<LLMResponse<T>> {
    const text = request.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    const quoted = /"([^"]+)"/.exec(/^Instruction: (.*)$/m.exec(text)?.[1] ?? "")?.[1];
    // Lines of the outline look like "[12] button: Add to cart"; the item's text is on the line above.
    const lines = text.split("\n");
    const at = lines.findIndex(
      (line, i) => quoted && line.includes(quoted) && /\[\d+\] button:/.test(lines[i + 1] ?? ""),
    );
    const id = at >= 0 ? Number(/\[(\d+)\]/.exec(lines[at + 1]!)![1]) : -1;
    const answer = {
      elementId: id,
      method: "click",
      arguments: [],
      description: `click the button of "${quoted}"`,
      completed: true,
    };
    return { data: answer as T, usage: { promptTokens: Math.ceil(text.length / 4), completionTokens: 20 } };
  }
}

const dh = new Deckhand({
  env: "LOCAL",
  verbose: 0,
  llmClient: new QuotedButtonModel(),
  localBrowserLaunchOptions: QUIET,
});
await dh.init();
try {
  await dh.page.goto(pageUrl("shop.html"));
  const result = await dh.act('add "Green shirt" to the cart');
  console.log(result.message);
  console.log(await dh.page.locator("#cart-contents").textContent());
} finally {
  await dh.close();
}
