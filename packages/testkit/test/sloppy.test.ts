// The sloppy model's mixed mode: repeatable from its seed, and every text and value quirk comes up;
// its output limit: the request's when it gives one, else the server's own.

import { describe, expect, it } from "vitest";
import { SLOPPY_TEXT_QUIRKS, SLOPPY_VALUE_QUIRKS, sloppyTokens, startScriptedModel } from "../src/index.ts";

interface ChatAnswer {
  choices: { message: { content: string }; finish_reason: string }[];
  usage: { completion_tokens: number };
}

/** One act-style question to the server on the chat wire, with these extra body fields. */
async function askOnce(baseURL: string, extra: Record<string, unknown>): Promise<ChatAnswer> {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "qwen2.5:7b",
      messages: [{ role: "user", content: "Page outline:\n[3] textbox: Username" }],
      ...extra,
    }),
  });
  return (await response.json()) as ChatAnswer;
}

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
      const body = await askOnce(server.baseURL, {
        response_format: { type: "json_schema", json_schema: { name: "act", schema: { type: "object" } } },
      });
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

describe("the sloppy model's output limit", () => {
  const answer = {
    elementId: 3,
    method: "fill",
    arguments: ["ada"],
    description: "fill the username",
    completed: true,
  };

  async function ask(maxTokens: number | undefined) {
    const server = await startScriptedModel({ sloppy: { quirks: ["truncate", "think"] } });
    try {
      server.on(() => true, answer);
      const body = await askOnce(server.baseURL, maxTokens !== undefined ? { max_tokens: maxTokens } : {});
      return {
        text: body.choices[0]!.message.content,
        finish: body.choices[0]!.finish_reason,
        tokens: body.usage.completion_tokens,
        quirks: server.sloppy!.records[0]!.quirks,
      };
    } finally {
      await server.close();
    }
  }

  it("truncate: with no limit in the request, the server's own limit cuts the answer inside its JSON", async () => {
    const cut = await ask(undefined);
    expect(cut.finish).toBe("length");
    // What the model wrote before the JSON (its think block) is sent; the JSON is not closed.
    expect(cut.text).toMatch(/<\/think>\n\{"elementId": 3/);
    expect(cut.text).not.toContain("completed");
    expect(cut.tokens).toBe(sloppyTokens(cut.text));
  });

  it("a limit the request gives is the one applied: large enough, the whole answer; too small, cut there", async () => {
    const whole = await ask(4096);
    expect(whole.finish).toBe("stop");
    expect(whole.text).toContain('"completed": true}');
    expect(whole.quirks).not.toContain("truncate");
    const short = await ask(10);
    expect(short.finish).toBe("length");
    expect(short.text).toHaveLength(40);
    expect(short.tokens).toBe(10);
    expect(short.quirks).toContain("truncate");
  });
});
