// Anthropic's Messages API as Claude speaks it with the computer tool: reads tool_result blocks
// (screenshots) of the newest user message and writes a message with text and tool_use blocks.

import { decodeDataUrl, textsOf } from "./computer-use-common.ts";
import type { AnthropicComputerTurn, ComputerUseRequest, Json } from "./computer-use-types.ts";

function imagesIn(blocks: unknown): Buffer[] {
  const out: Buffer[] = [];
  if (!Array.isArray(blocks)) return out;
  for (const block of blocks as Json[]) {
    if (block.type === "image") {
      const png = decodeDataUrl((block.source as Json | undefined)?.data);
      if (png) out.push(png);
    } else if (block.type === "tool_result") {
      out.push(...imagesIn(block.content));
    }
  }
  return out;
}

export function readMessagesRequest(
  body: Json,
): Omit<ComputerUseRequest, "index" | "path" | "headers" | "body"> {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  const last = messages.at(-1);
  const lastBlocks = Array.isArray(last?.content) ? (last.content as Json[]) : [];
  return {
    provider: "anthropic",
    model: String(body.model ?? ""),
    tools: Array.isArray(body.tools) ? (body.tools as Json[]) : [],
    screenshots: last?.role === "user" ? imagesIn(lastBlocks) : [],
    allScreenshots: messages.reduce((n, m) => n + imagesIn(m.content).length, 0),
    acknowledged: [],
    results: lastBlocks.filter((b) => b.type === "tool_result"),
    text: textsOf(body).join("\n"),
  };
}

/**
 * A message answering with `turn`. With `toolset` (the request declared computer_toolset_20260801)
 * each tool use is a toolset member (`name: "left_click", toolset_name: "computer"`), else a call of
 * the `computer` tool with the action in its input.
 */
export function messageBody(
  turn: AnthropicComputerTurn,
  model: string,
  id: () => string,
  toolset = false,
): Json {
  const content: Json[] = [];
  if (turn.text !== undefined) content.push({ type: "text", text: turn.text });
  for (const input of turn.toolUses ?? []) {
    if (toolset) {
      // The computer toolset names each action as a member of the toolset.
      const { action, ...rest } = input;
      content.push({
        type: "tool_use",
        id: `toolu_${id()}`,
        name: String(action),
        toolset_name: "computer",
        input: rest,
      });
    } else {
      content.push({ type: "tool_use", id: `toolu_${id()}`, name: "computer", input });
    }
  }
  const usage = turn.usage ?? { input: 1000, output: 50 };
  return {
    id: `msg_${id()}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: turn.toolUses?.length ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_read_input_tokens: usage.cached ?? 0,
      cache_creation_input_tokens: 0,
    },
  };
}
