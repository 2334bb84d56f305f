// Writes an answer in the shapes the OpenAI APIs use: Chat Completions (JSON and SSE chunks) and
// Responses (JSON and SSE events). Only the fields the AI SDK providers read are filled in, plus
// the ids and timestamps a real server sends.

import type { ServerResponse } from "node:http";
import type { ScriptedRequest, ScriptedUsage } from "./types.ts";

export type Outcome =
  | {
      kind: "content";
      content: string;
      reasoning?: string;
      finishReason: "stop" | "length" | "content_filter";
    }
  | { kind: "tool-calls"; calls: { id: string; name: string; arguments: string }[] };

function chatUsage(usage: ScriptedUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

function responsesUsage(usage: ScriptedUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** Splits text into a few pieces so streaming clients really reassemble deltas. */
function pieces(text: string): string[] {
  if (text.length < 8) return [text];
  const size = Math.ceil(text.length / 3);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function startEventStream(res: ServerResponse): (data: unknown, event?: string) => void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  return (data, event) => {
    res.write(
      `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    );
  };
}

export function writeChatCompletion(
  res: ServerResponse,
  request: ScriptedRequest,
  outcome: Outcome,
  usage: ScriptedUsage,
  id: string,
): void {
  const created = Math.floor(Date.now() / 1000);
  const finishReason = outcome.kind === "tool-calls" ? "tool_calls" : outcome.finishReason;
  const toolCalls =
    outcome.kind === "tool-calls"
      ? outcome.calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }))
      : undefined;

  if (!request.stream) {
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model: request.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: outcome.kind === "content" ? outcome.content : null,
            ...(outcome.kind === "content" && outcome.reasoning
              ? { reasoning_content: outcome.reasoning }
              : {}),
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: finishReason,
        },
      ],
      usage: chatUsage(usage),
    });
    return;
  }

  const send = startEventStream(res);
  const chunk = (choice: Record<string, unknown>) =>
    send({
      id,
      object: "chat.completion.chunk",
      created,
      model: request.model,
      choices: [{ index: 0, ...choice }],
    });
  chunk({ delta: { role: "assistant", content: "" } });
  if (outcome.kind === "content") {
    if (outcome.reasoning) chunk({ delta: { reasoning_content: outcome.reasoning } });
    for (const piece of pieces(outcome.content)) chunk({ delta: { content: piece } });
  } else {
    outcome.calls.forEach((c, index) => {
      chunk({
        delta: {
          tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }],
        },
      });
      for (const piece of pieces(c.arguments))
        chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] } });
    });
  }
  chunk({ delta: {}, finish_reason: finishReason });
  const options = request.body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) {
    send({
      id,
      object: "chat.completion.chunk",
      created,
      model: request.model,
      choices: [],
      usage: chatUsage(usage),
    });
  }
  send("[DONE]");
  res.end();
}

export function writeResponse(
  res: ServerResponse,
  request: ScriptedRequest,
  outcome: Outcome,
  usage: ScriptedUsage,
  id: string,
): void {
  const createdAt = Math.floor(Date.now() / 1000);
  const messageId = `msg_${id}`;
  const output =
    outcome.kind === "content"
      ? [
          {
            type: "message",
            id: messageId,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: outcome.content, annotations: [] }],
          },
        ]
      : outcome.calls.map((c) => ({
          type: "function_call",
          id: `fc_${c.id}`,
          call_id: c.id,
          name: c.name,
          arguments: c.arguments,
          status: "completed",
        }));
  const incomplete = outcome.kind === "content" && outcome.finishReason === "length";
  const response = {
    id: `resp_${id}`,
    object: "response",
    created_at: createdAt,
    model: request.model,
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output,
    usage: responsesUsage(usage),
  };

  if (!request.stream) {
    sendJson(res, 200, response);
    return;
  }

  const send = startEventStream(res);
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    send({ type, sequence_number: sequence++, ...fields }, type);
  const header = { id: response.id, created_at: createdAt, model: request.model, object: "response" };
  event("response.created", { response: { ...header, status: "in_progress" } });
  output.forEach((item, outputIndex) => {
    if (item.type === "message" && outcome.kind === "content") {
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { type: "message", id: messageId, role: "assistant", status: "in_progress", content: [] },
      });
      for (const delta of pieces(outcome.content)) {
        event("response.output_text.delta", {
          item_id: messageId,
          output_index: outputIndex,
          content_index: 0,
          delta,
        });
      }
      event("response.output_text.done", {
        item_id: messageId,
        output_index: outputIndex,
        content_index: 0,
        text: outcome.content,
      });
    } else {
      const call = item as { id: string; call_id: string; name: string; arguments: string };
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      for (const delta of pieces(call.arguments)) {
        event("response.function_call_arguments.delta", {
          item_id: call.id,
          output_index: outputIndex,
          delta,
        });
      }
    }
    event("response.output_item.done", { output_index: outputIndex, item });
  });
  event(incomplete ? "response.incomplete" : "response.completed", { response });
  res.end();
}
