// Claude's computer tool through the AI SDK's Anthropic provider (`anthropic.tools.computer_*`),
// which declares the tool with the screen size and sends the computer-use beta header. The
// conversation is kept here as AI SDK messages; each tool result carries a screenshot, and only
// the newest few screenshots stay in the conversation (older ones become a line of text).

import { APICallError, generateText, type LanguageModel, type ModelMessage, RetryError } from "ai";
import { loadLanguageModel, resolveModel } from "../../llm/resolve-model.ts";
import type { ComputerAction, Screen } from "./computer.ts";
import type { CuaTool } from "./models.ts";
import { num } from "./openai.ts";
import {
  type CuaCall,
  type CuaCallResult,
  CuaProviderError,
  type CuaSession,
  type CuaSessionOptions,
  type CuaTurn,
  errorMessageOf,
  fromShot,
  mapActions,
  usageOfSdk,
} from "./session.ts";

/** Screenshots kept in full in the conversation (the newest ones). */
const KEEP_SCREENSHOTS = 3;
/** Pixels per scroll "click" Claude asks for. */
const SCROLL_STEP = 100;

type Json = Record<string, unknown>;

export class AnthropicComputerUseSession implements CuaSession {
  private readonly options: CuaSessionOptions;
  private readonly tool: CuaTool;
  private model: LanguageModel | undefined;
  private readonly conversation: ModelMessage[] = [];

  constructor(options: CuaSessionOptions, tool: CuaTool) {
    this.options = options;
    this.tool = tool;
    this.conversation.push({
      role: "user",
      content: [
        { type: "text", text: options.instruction },
        { type: "file", mediaType: "image/png", data: options.firstScreenshot.toString("base64") },
      ],
    });
  }

  async next(signal: AbortSignal): Promise<CuaTurn> {
    const { options } = this;
    if (!this.model) {
      this.model = await loadLanguageModel(
        resolveModel({
          modelName: `anthropic/${options.modelId}`,
          ...(options.apiKey ? { apiKey: options.apiKey } : {}),
          ...(options.baseURL ? { baseURL: options.baseURL } : {}),
          ...(options.headers ? { headers: options.headers } : {}),
        }),
      );
    }
    const model = this.model;
    const { anthropic } = await import("@ai-sdk/anthropic");
    const size = { displayWidthPx: options.screen.shotWidth, displayHeightPx: options.screen.shotHeight };
    // The toolset has no display size: its coordinates are those of the screenshots it gets.
    const computer =
      this.tool === "anthropic-computer-toolset-20260801"
        ? anthropic.tools.computerToolset_20260801({ configs: { zoom: { enabled: false } } })
        : this.tool === "anthropic-computer-20251124"
          ? anthropic.tools.computer_20251124(size)
          : anthropic.tools.computer_20250124(size);
    dropOldScreenshots(this.conversation);
    const ask = () =>
      generateText({
        model,
        system: options.system,
        messages: this.conversation,
        tools: { computer },
        abortSignal: signal,
        maxRetries: 1,
      });
    let result: Awaited<ReturnType<typeof ask>>;
    try {
      result = await ask();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const cause = RetryError.isInstance(error) ? error.lastError : error;
      const status = APICallError.isInstance(cause) ? cause.statusCode : undefined;
      throw new CuaProviderError(`Anthropic's API failed: ${errorMessageOf(cause)}`, status, { cause });
    }
    this.conversation.push(...result.response.messages);
    const calls = result.toolCalls.map((call): CuaCall => {
      const args = (call.input ?? {}) as Json;
      return {
        id: call.toolCallId,
        name: String(args.action ?? "unknown"),
        args,
        ...mapActions(() => actionsOf(args, options.screen)),
        safetyChecks: [],
      };
    });
    return {
      text: result.text,
      calls,
      usage: usageOfSdk(result.usage),
    };
  }

  answer(results: CuaCallResult[]): void {
    this.conversation.push({
      role: "tool",
      content: results.map((r) => ({
        type: "tool-result" as const,
        toolCallId: r.call.id,
        toolName: "computer",
        output: {
          type: "content" as const,
          value: [
            ...(r.error ? [{ type: "text" as const, text: `Error: ${r.error}` }] : []),
            ...(r.note ? [{ type: "text" as const, text: r.note }] : []),
            {
              type: "file" as const,
              mediaType: "image/png",
              data: { type: "data" as const, data: r.screenshot.toString("base64") },
            },
          ],
        },
      })),
    });
  }

  messages(): unknown[] {
    return this.conversation;
  }
}

/** Replaces all but the newest screenshots of the conversation with a line of text. */
function dropOldScreenshots(conversation: ModelMessage[]): void {
  let seen = 0;
  for (let i = conversation.length - 1; i >= 0; i--) {
    const message = conversation[i]!;
    if (message.role !== "tool" || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type !== "tool-result" || part.output.type !== "content") continue;
      part.output = {
        type: "content",
        value: part.output.value.map((item) => {
          if (item.type !== "file") return item;
          seen++;
          return seen > KEEP_SCREENSHOTS ? { type: "text", text: "(an older screenshot, left out)" } : item;
        }),
      };
    }
  }
}

function point(screen: Screen, value: unknown): { x: number; y: number } | undefined {
  if (!Array.isArray(value) || value.length < 2) return undefined;
  return fromShot(screen, num(value[0]), num(value[1]));
}

/** Claude's computer action as page actions. Coordinates are screenshot pixels. */
function actionsOf(args: Json, screen: Screen): ComputerAction[] {
  const at = point(screen, args.coordinate);
  const text = typeof args.text === "string" ? args.text : "";
  // Claude names held modifiers in `text` for clicks and scrolls ("shift", "ctrl+shift").
  const keys = text ? text.split("+") : undefined;
  const need = (): { x: number; y: number } => {
    if (!at) throw new CuaProviderError(`Claude's ${String(args.action)} has no coordinate.`);
    return at;
  };
  switch (args.action) {
    case "left_click":
      return at
        ? [{ type: "click", ...at, ...(keys ? { keys } : {}) }]
        : [{ type: "mouseDown" }, { type: "mouseUp" }];
    case "right_click":
      return [{ type: "click", ...need(), button: "right", ...(keys ? { keys } : {}) }];
    case "middle_click":
      return [{ type: "click", ...need(), button: "middle", ...(keys ? { keys } : {}) }];
    case "double_click":
      return [{ type: "click", ...need(), clickCount: 2, ...(keys ? { keys } : {}) }];
    case "triple_click":
      return [{ type: "click", ...need(), clickCount: 3, ...(keys ? { keys } : {}) }];
    case "mouse_move":
      return [{ type: "move", ...need() }];
    case "left_mouse_down":
      return [{ type: "mouseDown", ...(at ?? {}) }];
    case "left_mouse_up":
      return [{ type: "mouseUp", ...(at ?? {}) }];
    case "left_click_drag": {
      const from = point(screen, args.start_coordinate);
      if (!from) throw new CuaProviderError("Claude's left_click_drag has no start_coordinate.");
      return [{ type: "drag", path: [from, need()] }];
    }
    case "scroll": {
      const amount = num(args.scroll_amount) || 3;
      const px = amount * SCROLL_STEP;
      const direction = args.scroll_direction;
      const deltaX = direction === "left" ? -px : direction === "right" ? px : 0;
      const deltaY = direction === "up" ? -px : direction === "down" ? px : 0;
      const where = at ?? { x: screen.width / 2, y: screen.height / 2 };
      return [{ type: "scroll", ...where, deltaX, deltaY, ...(keys ? { keys } : {}) }];
    }
    case "type":
      return [{ type: "type", text }];
    case "key": {
      // The toolset's `repeat` presses the chord several times (10 at most here).
      const times = Math.min(Math.max(1, Math.floor(num(args.repeat) || 1)), 10);
      return Array.from({ length: times }, () => ({ type: "keyPress" as const, keys: [text] }));
    }
    case "hold_key":
      return [{ type: "holdKey", keys: [text], ms: Math.min(num(args.duration), 10) * 1000 }];
    case "wait":
      return [{ type: "wait", ms: Math.min(num(args.duration) || 1, 10) * 1000 }];
    case "screenshot":
    case "cursor_position":
    case "zoom":
      return [];
    default:
      throw new CuaProviderError(
        `Claude asked for an action Deckhand does not know: ${JSON.stringify(args.action)}.`,
      );
  }
}
