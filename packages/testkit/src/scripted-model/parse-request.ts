// Turns a Chat Completions or Responses API body into the provider-neutral `ScriptedRequest`.

import type { IncomingHttpHeaders } from "node:http";
import type { ScriptedMessage, ScriptedRequest, ScriptedResponseFormat, ScriptedTool } from "./types.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Text and image count of a message's content, whatever part shapes the API uses. */
function readContent(content: unknown): { text: string; imageCount: number } {
  if (typeof content === "string") return { text: content, imageCount: 0 };
  if (!Array.isArray(content)) return { text: "", imageCount: 0 };
  const texts: string[] = [];
  let imageCount = 0;
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (isObject(part)) {
      const type = String(part.type ?? "");
      if (type === "image_url" || type === "input_image" || type === "image") imageCount++;
      else if (typeof part.text === "string") texts.push(part.text);
      else if (typeof part.refusal === "string") texts.push(part.refusal);
    }
  }
  return { text: texts.join("\n"), imageCount };
}

function chatMessages(body: Json): ScriptedMessage[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.filter(isObject).map((m) => {
    const { text, imageCount } = readContent(m.content);
    let full = text;
    if (Array.isArray(m.tool_calls)) {
      const calls = m.tool_calls
        .filter(isObject)
        .map((c) =>
          isObject(c.function) ? `${String(c.function.name)}(${String(c.function.arguments)})` : "",
        );
      full = [text, ...calls].filter(Boolean).join("\n");
    }
    return { role: String(m.role ?? "user"), text: full, imageCount };
  });
}

function responsesMessages(body: Json): ScriptedMessage[] {
  const out: ScriptedMessage[] = [];
  if (typeof body.instructions === "string")
    out.push({ role: "system", text: body.instructions, imageCount: 0 });
  if (typeof body.input === "string") {
    out.push({ role: "user", text: body.input, imageCount: 0 });
    return out;
  }
  const items = Array.isArray(body.input) ? body.input : [];
  for (const item of items) {
    if (!isObject(item)) continue;
    if (item.type === "function_call") {
      out.push({ role: "assistant", text: `${String(item.name)}(${String(item.arguments)})`, imageCount: 0 });
    } else if (item.type === "function_call_output") {
      out.push({
        role: "tool",
        text: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
        imageCount: 0,
      });
    } else if (typeof item.role === "string") {
      const { text, imageCount } = readContent(item.content);
      out.push({ role: item.role, text, imageCount });
    }
  }
  return out;
}

function chatTools(body: Json): { tools: ScriptedTool[]; forcedTool: string | undefined } {
  const tools: ScriptedTool[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t)) continue;
    // Chat: { type: "function", function: { name, parameters } }; Responses: { type: "function", name, parameters }.
    const fn = isObject(t.function) ? t.function : t;
    if (typeof fn.name !== "string") continue;
    tools.push({
      name: fn.name,
      ...(typeof fn.description === "string" ? { description: fn.description } : {}),
      ...(isObject(fn.parameters) ? { parameters: fn.parameters } : {}),
    });
  }
  let forcedTool: string | undefined;
  const choice = body.tool_choice;
  if (isObject(choice)) {
    if (isObject(choice.function) && typeof choice.function.name === "string")
      forcedTool = choice.function.name;
    else if (typeof choice.name === "string") forcedTool = choice.name;
  } else if (choice === "required" && tools.length === 1) {
    forcedTool = tools[0]?.name;
  }
  return { tools, forcedTool };
}

function requestedFormat(body: Json): {
  responseFormat: ScriptedResponseFormat;
  schema: Json | undefined;
  schemaName: string | undefined;
} {
  // Chat: response_format { type: "json_schema", json_schema: { name, schema } }.
  // Responses: text.format { type: "json_schema", name, schema }.
  const chatFormat = body.response_format;
  const responsesFormat = isObject(body.text) ? body.text.format : undefined;
  const format = isObject(chatFormat) ? chatFormat : isObject(responsesFormat) ? responsesFormat : undefined;
  if (!format) return { responseFormat: "text", schema: undefined, schemaName: undefined };
  if (format.type === "json_object")
    return { responseFormat: "json_object", schema: undefined, schemaName: undefined };
  if (format.type === "json_schema") {
    const holder = isObject(format.json_schema) ? format.json_schema : format;
    return {
      responseFormat: "json_schema",
      schema: isObject(holder.schema) ? holder.schema : undefined,
      schemaName: typeof holder.name === "string" ? holder.name : undefined,
    };
  }
  return { responseFormat: "text", schema: undefined, schemaName: undefined };
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export function parseModelRequest(
  index: number,
  api: "chat" | "responses",
  path: string,
  body: Json,
  rawHeaders: IncomingHttpHeaders,
): ScriptedRequest {
  const messages = api === "chat" ? chatMessages(body) : responsesMessages(body);
  const headers = flattenHeaders(rawHeaders);
  const authorization = headers.authorization;
  const bearer = authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
  const system = messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => m.text)
    .join("\n\n");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const { tools, forcedTool } = chatTools(body);
  return {
    index,
    api,
    path,
    model: String(body.model ?? ""),
    stream: body.stream === true,
    messages,
    system,
    lastUserText: lastUser?.text ?? "",
    text: messages.map((m) => m.text).join("\n\n"),
    imageCount: messages.reduce((n, m) => n + m.imageCount, 0),
    ...requestedFormat(body),
    tools,
    forcedTool,
    headers,
    authorization,
    apiKey: bearer ?? headers["x-api-key"] ?? headers["api-key"],
    body,
  };
}
