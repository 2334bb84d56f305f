// The sloppy model's mixed mode: repeatable from its seed, and every text and value quirk comes up.

import { describe, expect, it } from "vitest";
import { SLOPPY_TEXT_QUIRKS, SLOPPY_VALUE_QUIRKS, startScriptedModel } from "../src/index.ts";

async function answers(seed: number, count: number): Promise<{ texts: string[]; quirks: string[][] }> {
  const server = await startScriptedModel({ sloppy: { mixed: { seed } } });
  try {
    server.on(
      () => true,
      (r) => ({
        elementId: 3,
        method: "fill",
        arguments: ["ada"],
        description: "fill",
        completed: r.index > 0,
      }),
    );
    const texts: string[] = [];
    for (let i = 0; i < count; i++) {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "qwen2.5:7b",
          messages: [{ role: "user", content: "Page outline:\n[3] textbox: Username" }],
          response_format: { type: "json_schema", json_schema: { name: "act", schema: { type: "object" } } },
        }),
      });
      const body = (await response.json()) as { choices: { message: { content: string } }[] };
      texts.push(body.choices[0]!.message.content);
    }
    return { texts, quirks: server.sloppy!.records.map((r) => r.quirks) };
  } finally {
    await server.close();
  }
}

describe("the sloppy model's mixed mode", () => {
  it("gives the same answers for the same seed, and other answers for another", async () => {
    const [a, b, c] = await Promise.all([answers(42, 20), answers(42, 20), answers(43, 20)]);
    expect(a.texts).toEqual(b.texts);
    expect(a.texts).not.toEqual(c.texts);
  });

  it("rolls every text and value quirk over enough answers", async () => {
    const { quirks } = await answers(7, 200);
    const seen = new Set(quirks.flat());
    for (const q of [...SLOPPY_TEXT_QUIRKS, ...SLOPPY_VALUE_QUIRKS]) expect(seen, q).toContain(q);
  });
});
