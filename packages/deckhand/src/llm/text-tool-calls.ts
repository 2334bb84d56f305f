// Tool calling for servers and models that do it unevenly (the agent's tool loop). Some local
// servers reject `tools` for a model with a 400 ("does not support tools"), some reject
// `tool_choice: "required"`, and some models answer with the call written in the message content
// (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`, or a bare JSON object naming the
// function) instead of `tool_calls`. This middleware sits under the AI SDK's tool loop:
//
// - a tool call written in the content, naming a tool of the request, becomes a real tool call;
// - a 400 that names tool_choice makes it ask with tool_choice "auto" from then on;
// - a 400 that names tools makes it describe the tools in the prompt and read the calls from the
//   answer's text from then on (`toolCalls: "text"` in the model object starts that way).
//
// What it changes is remembered per loaded model, that is for the rest of the session.

import type { LanguageModelMiddleware } from "ai";
import { APICallError } from "ai";
import { readJsonAnswer } from "./answer-reader.ts";
import type { ToolCallMode } from "./resolve-model.ts";

type Middleware = LanguageModelMiddleware;
type WrapGenerate = NonNullable<Middleware["wrapGenerate"]>;
type GenerateArgs = Parameters<WrapGenerate>[0];
type Params = GenerateArgs["params"];
type Result = Awaited<ReturnType<WrapGenerate>>;
type Content = Result["content"][number];
type Prompt = Params["prompt"];

interface FunctionToolLike {
  type: "function";
  name: string;
  description?: string;
  inputSchema: unknown;
}

function functionTools(params: Params): FunctionToolLike[] {
  return ((params.tools ?? []) as unknown[]).filter(
    (t): t is FunctionToolLike => (t as { type?: string }).type === "function",
  );
}

function apiError(error: unknown): { status: number; text: string } | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  return { status: error.statusCode ?? 0, text: `${error.message} ${error.responseBody ?? ""}` };
}

/** The tools described for a model that is not given them natively, with how to call one. */
export function toolsPrompt(tools: readonly FunctionToolLike[]): string {
  const lines = tools.map(
    (t) => `- ${t.name}: ${t.description ?? ""}\n  arguments (JSON Schema): ${JSON.stringify(t.inputSchema)}`,
  );
  return [
    "You can call these tools:",
    ...lines,
    "To call a tool, answer with exactly one block and nothing else:",
    '<tool_call>\n{"name": "<tool name>", "arguments": { ... }}\n</tool_call>',
  ].join("\n");
}

let nextId = 1;

/**
 * The tool calls written in a text: `<tool_call>` blocks, or (when there is no such block) the
 * answer's one JSON object when it names a tool of the request and has arguments. A name that is
 * no tool of the request, or text that cannot be read, is no call.
 */
export function toolCallsInText(
  text: string,
  toolNames: ReadonlySet<string>,
): { name: string; input: string }[] {
  const calls: { name: string; input: string }[] = [];
  const read = (json: string) => {
    const parsed = readJsonAnswer(json);
    if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return;
    const value = parsed.value as Record<string, unknown>;
    const fn =
      typeof value.function === "object" && value.function !== null
        ? (value.function as Record<string, unknown>)
        : value;
    const name = fn.name ?? fn.tool ?? fn.tool_name;
    if (typeof name !== "string" || !toolNames.has(name)) return;
    let args: unknown = fn.arguments ?? fn.parameters ?? fn.input ?? fn.args ?? {};
    if (typeof args === "string") {
      const inner = readJsonAnswer(args);
      if (!inner.ok) return;
      args = inner.value;
    }
    calls.push({ name, input: JSON.stringify(args) });
  };
  const blocks = [...text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/gi)];
  if (blocks.length) for (const b of blocks) read(b[1] ?? "");
  else if (text.includes("{")) read(text);
  return calls;
}

function toolOutputText(output: unknown): string {
  const o = output as { type?: string; value?: unknown };
  if ((o.type === "text" || o.type === "error-text") && typeof o.value === "string") return o.value;
  if (o.type === "json" || o.type === "error-json") return JSON.stringify(o.value);
  return JSON.stringify(output);
}

/** The conversation without tool-call parts and tool messages: what a server with no tools takes. */
function promptAsText(prompt: Prompt, tools: readonly FunctionToolLike[]): Prompt {
  const out: Prompt = [];
  let systemDone = false;
  for (const message of prompt) {
    if (message.role === "system") {
      out.push(systemDone ? message : { ...message, content: `${message.content}\n\n${toolsPrompt(tools)}` });
      systemDone = true;
    } else if (message.role === "assistant") {
      const parts = message.content.map((part) => {
        if (part.type === "tool-call") {
          const input = typeof part.input === "string" ? part.input : JSON.stringify(part.input);
          return {
            type: "text" as const,
            text: `<tool_call>\n{"name": ${JSON.stringify(part.toolName)}, "arguments": ${input}}\n</tool_call>`,
          };
        }
        if (part.type === "tool-result") {
          return {
            type: "text" as const,
            text: `Result of ${part.toolName}: ${toolOutputText(part.output)}`,
          };
        }
        return part;
      });
      out.push({ ...message, content: parts });
    } else if (message.role === "tool") {
      const text = message.content
        .map((part) =>
          part.type === "tool-result" ? `Result of ${part.toolName}: ${toolOutputText(part.output)}` : "",
        )
        .filter(Boolean)
        .join("\n\n");
      out.push({ role: "user", content: [{ type: "text", text: text || "(no result)" }] });
    } else out.push(message);
  }
  if (!systemDone) out.unshift({ role: "system", content: toolsPrompt(tools) });
  return out;
}

/** Text content that holds tool calls, turned into tool-call content. */
function withCallsFromText(result: Result, tools: readonly FunctionToolLike[]): Result {
  if (tools.length === 0 || result.content.some((c) => c.type === "tool-call")) return result;
  const names = new Set(tools.map((t) => t.name));
  const content: Content[] = [];
  let found = false;
  for (const part of result.content) {
    if (part.type !== "text") {
      content.push(part);
      continue;
    }
    const calls = toolCallsInText(part.text, names);
    if (calls.length === 0) {
      content.push(part);
      continue;
    }
    found = true;
    for (const call of calls) {
      content.push({
        type: "tool-call",
        toolCallId: `text-call-${nextId++}`,
        toolName: call.name,
        input: call.input,
      });
    }
  }
  if (!found) return result;
  return { ...result, content, finishReason: { unified: "tool-calls", raw: result.finishReason.raw } };
}

/**
 * The middleware, with its own memory of what the server refused. `initial` is the model object's
 * `toolCalls` ("native" unless set).
 */
export function toolCallingMiddleware(
  initial: ToolCallMode,
  onChange?: (message: string) => void,
): LanguageModelMiddleware {
  let mode = initial;
  let requiredRefused = false;
  return {
    specificationVersion: "v4",
    async wrapGenerate({ doGenerate, params, model }) {
      const tools = functionTools(params);
      if (tools.length === 0) return doGenerate();
      for (;;) {
        let call = params;
        if (mode === "text") {
          const { tools: _tools, toolChoice: _choice, ...rest } = params;
          call = { ...rest, prompt: promptAsText(params.prompt, tools) } as Params;
        } else if (requiredRefused && params.toolChoice?.type === "required") {
          call = { ...params, toolChoice: { type: "auto" } };
        }
        try {
          const result = call === params ? await doGenerate() : await model.doGenerate(call);
          return withCallsFromText(result, tools);
        } catch (error) {
          const refused = apiError(error);
          if (!refused || refused.status < 400 || refused.status >= 500 || mode === "text") throw error;
          if (
            !requiredRefused &&
            params.toolChoice?.type === "required" &&
            /tool_choice/i.test(refused.text)
          ) {
            requiredRefused = true;
            onChange?.('the server refused tool_choice "required"; asking with "auto" from now on');
            continue;
          }
          if (/tool|function/i.test(refused.text)) {
            mode = "text";
            onChange?.(
              "the server refused native tool calls; the tools go into the prompt and calls are read from the text from now on",
            );
            continue;
          }
          throw error;
        }
      }
    },
  } as LanguageModelMiddleware;
}
