// The OpenAI Responses API as the computer-use-preview model speaks it: reads computer_call_output
// items (screenshots, acknowledged safety checks) from a request and writes a response with
// reasoning, computer_call and message items.

import { decodeDataUrl, textsOf } from "./computer-use-common.ts";
import type { ComputerUseRequest, Json, OpenAIComputerTurn } from "./computer-use-types.ts";

export function readResponsesRequest(
  body: Json,
): Omit<ComputerUseRequest, "index" | "path" | "headers" | "body"> {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  const screenshots: Buffer[] = [];
  const acknowledged: Json[] = [];
  const results: Json[] = [];
  for (const item of input) {
    if (item.type === "computer_call_output") {
      results.push(item);
      const output = item.output as Json | undefined;
      const png = decodeDataUrl(output?.image_url);
      if (png) screenshots.push(png);
      if (Array.isArray(item.acknowledged_safety_checks))
        acknowledged.push(...(item.acknowledged_safety_checks as Json[]));
    } else if (Array.isArray(item.content)) {
      for (const part of item.content as Json[]) {
        const png = part.type === "input_image" ? decodeDataUrl(part.image_url) : undefined;
        if (png) screenshots.push(png);
      }
    }
  }
  return {
    provider: "openai",
    model: String(body.model ?? ""),
    tools: Array.isArray(body.tools) ? (body.tools as Json[]) : [],
    screenshots,
    allScreenshots: screenshots.length,
    acknowledged,
    results,
    text: textsOf(body).join("\n"),
  };
}

export function responsesBody(turn: OpenAIComputerTurn, model: string, id: () => string): Json {
  const output: Json[] = [];
  if (turn.reasoning) {
    output.push({
      type: "reasoning",
      id: `rs_${id()}`,
      summary: [{ type: "summary_text", text: turn.reasoning }],
    });
  }
  for (const call of turn.calls ?? []) {
    output.push({
      type: "computer_call",
      id: `cu_${id()}`,
      call_id: `call_${id()}`,
      ...(call.actions ? { actions: call.actions } : { action: call.action }),
      pending_safety_checks: call.pendingSafetyChecks ?? [],
      status: "completed",
    });
  }
  if (turn.text !== undefined) {
    output.push({
      type: "message",
      id: `msg_${id()}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  const usage = turn.usage ?? { input: 1000, output: 50 };
  return {
    id: `resp_${id()}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model,
    output,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached ?? 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
      total_tokens: usage.input + usage.output,
    },
  };
}
