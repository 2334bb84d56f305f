// Gemini's generateContent as the computer-use models speak it: reads the function responses of
// the newest user content (URL, screenshot, safety acknowledgement) and writes a candidate with
// text and functionCall parts.

import { decodeDataUrl, textsOf } from "./computer-use-common.ts";
import type { ComputerUseRequest, GeminiComputerTurn, Json } from "./computer-use-types.ts";

function imagesIn(parts: unknown): Buffer[] {
  const out: Buffer[] = [];
  if (!Array.isArray(parts)) return out;
  for (const part of parts as Json[]) {
    const inline = (part.inlineData ?? part.inline_data) as Json | undefined;
    const png = inline ? decodeDataUrl(inline.data) : undefined;
    if (png) out.push(png);
    const response = (part.functionResponse ?? part.function_response) as Json | undefined;
    if (response) out.push(...imagesIn(response.parts));
  }
  return out;
}

export function readGenerateContentRequest(
  body: Json,
  model: string,
): Omit<ComputerUseRequest, "index" | "path" | "headers" | "body"> {
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : [];
  const last = contents.at(-1);
  const lastParts = Array.isArray(last?.parts) ? (last.parts as Json[]) : [];
  const results = lastParts
    .map((p) => (p.functionResponse ?? p.function_response) as Json | undefined)
    .filter((r): r is Json => r !== undefined);
  return {
    provider: "google",
    model,
    tools: Array.isArray(body.tools) ? (body.tools as Json[]) : [],
    screenshots: last?.role === "user" ? imagesIn(lastParts) : [],
    allScreenshots: contents.reduce((n, c) => n + imagesIn(c.parts).length, 0),
    acknowledged: results.filter((r) => (r.response as Json | undefined)?.safety_acknowledgement === "true"),
    results,
    text: textsOf(body).join("\n"),
  };
}

export function generateContentBody(turn: GeminiComputerTurn, model: string): Json {
  const parts: Json[] = [];
  if (turn.text !== undefined) parts.push({ text: turn.text });
  for (const call of turn.functionCalls ?? [])
    parts.push({ functionCall: { name: call.name, args: call.args ?? {} } });
  const usage = turn.usage ?? { input: 1000, output: 50 };
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      thoughtsTokenCount: usage.reasoning ?? 0,
      cachedContentTokenCount: usage.cached ?? 0,
      totalTokenCount: usage.input + usage.output,
    },
    modelVersion: model,
  };
}
