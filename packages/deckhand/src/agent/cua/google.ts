// Gemini's computer use through the generateContent HTTP API (the AI SDK's Google provider has no
// computer-use tool for generateContent). The model answers with function calls of a fixed set
// (click_at, type_text_at, scroll_at, navigate...) whose coordinates are in a 1000x1000 grid over
// the screenshot; each call is answered with a function response carrying the page URL and a
// screenshot.

import type { ComputerAction, Point, Screen } from "./computer.ts";
import { num, postJson } from "./openai.ts";
import {
  type CuaCall,
  type CuaCallResult,
  CuaProviderError,
  type CuaSession,
  type CuaSessionOptions,
  type CuaTurn,
  clampTo,
  mapActions,
} from "./session.ts";

const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";
const GRID = 1000;
/** Gemini's default scroll_at magnitude, in grid units. */
const DEFAULT_MAGNITUDE = 800;
const KEEP_SCREENSHOTS = 3;

type Json = Record<string, unknown>;

export class GoogleComputerUseSession implements CuaSession {
  private readonly options: CuaSessionOptions;
  private readonly contents: Json[] = [];

  constructor(options: CuaSessionOptions) {
    this.options = options;
    this.contents.push({
      role: "user",
      parts: [
        { text: options.instruction },
        { inlineData: { mimeType: "image/png", data: options.firstScreenshot.toString("base64") } },
      ],
    });
  }

  async next(signal: AbortSignal): Promise<CuaTurn> {
    const { options } = this;
    dropOldScreenshots(this.contents);
    const base = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    const response = await postJson(
      `${base}/models/${encodeURIComponent(options.modelId)}:generateContent`,
      {
        "content-type": "application/json",
        ...(options.apiKey ? { "x-goog-api-key": options.apiKey } : {}),
        ...options.headers,
      },
      {
        systemInstruction: { parts: [{ text: options.system }] },
        contents: this.contents,
        tools: [{ computerUse: { environment: "ENVIRONMENT_BROWSER" } }],
      },
      signal,
    );
    const candidate = (Array.isArray(response.candidates) ? response.candidates[0] : undefined) as
      | Json
      | undefined;
    const content = candidate?.content as Json | undefined;
    if (!content) {
      const reason = candidate?.finishReason ?? (response.promptFeedback as Json | undefined)?.blockReason;
      throw new CuaProviderError(`Gemini gave no answer${reason ? ` (${String(reason)})` : ""}.`);
    }
    this.contents.push({ role: "model", parts: content.parts ?? [] });
    const parts = Array.isArray(content.parts) ? (content.parts as Json[]) : [];
    const texts: string[] = [];
    const calls: CuaCall[] = [];
    for (const [index, part] of parts.entries()) {
      if (typeof part.text === "string" && !part.thought) texts.push(part.text);
      const call = part.functionCall as Json | undefined;
      if (!call) continue;
      const name = String(call.name);
      const args = (call.args ?? {}) as Json;
      const safety = args.safety_decision as Json | undefined;
      calls.push({
        id: typeof call.id === "string" ? call.id : `${name}-${index}`,
        name,
        args,
        ...mapActions(() => actionsOf(name, args, options.screen)),
        safetyChecks:
          safety?.decision === "require_confirmation"
            ? [
                {
                  id: `${name}-${index}`,
                  code: "require_confirmation",
                  ...(typeof safety.explanation === "string" ? { message: safety.explanation } : {}),
                },
              ]
            : [],
      });
    }
    const usage = (response.usageMetadata ?? {}) as Json;
    return {
      text: texts.join("\n"),
      calls,
      usage: {
        input_tokens: num(usage.promptTokenCount),
        output_tokens: num(usage.candidatesTokenCount),
        reasoning_tokens: num(usage.thoughtsTokenCount),
        cached_input_tokens: num(usage.cachedContentTokenCount),
      },
    };
  }

  answer(results: CuaCallResult[]): void {
    this.contents.push({
      role: "user",
      parts: results.map((r) => ({
        functionResponse: {
          ...(r.call.id.startsWith(`${r.call.name}-`) ? {} : { id: r.call.id }),
          name: r.call.name,
          response: {
            url: r.url,
            ...(r.error ? { error: r.error } : {}),
            ...(r.note ? { note: r.note } : {}),
            ...(r.acknowledged.length ? { safety_acknowledgement: "true" } : {}),
          },
          parts: [{ inlineData: { mimeType: "image/png", data: r.screenshot.toString("base64") } }],
        },
      })),
    });
  }

  messages(): unknown[] {
    return this.contents;
  }
}

function dropOldScreenshots(contents: Json[]): void {
  let seen = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const parts = contents[i]?.parts;
    if (!Array.isArray(parts) || contents[i]?.role !== "user") continue;
    for (const part of parts as Json[]) {
      const response = part.functionResponse as Json | undefined;
      if (!response || !Array.isArray(response.parts) || response.parts.length === 0) continue;
      seen++;
      if (seen > KEEP_SCREENSHOTS) response.parts = [];
    }
  }
}

function fromGrid(screen: Screen, x: unknown, y: unknown): Point {
  return {
    x: clampTo((num(x) / GRID) * screen.width, screen.width),
    y: clampTo((num(y) / GRID) * screen.height, screen.height),
  };
}

function scrollDelta(direction: unknown, px: number): { deltaX: number; deltaY: number } {
  return {
    deltaX: direction === "left" ? -px : direction === "right" ? px : 0,
    deltaY: direction === "up" ? -px : direction === "down" ? px : 0,
  };
}

/** Gemini's predefined computer-use functions as page actions. */
function actionsOf(name: string, args: Json, screen: Screen): ComputerAction[] {
  switch (name) {
    case "open_web_browser":
      return [];
    case "wait_5_seconds":
      return [{ type: "wait", ms: 5_000 }];
    case "go_back":
      return [{ type: "back" }];
    case "go_forward":
      return [{ type: "forward" }];
    case "search":
      return [{ type: "goto", url: "https://www.google.com/" }];
    case "navigate":
      return [{ type: "goto", url: String(args.url ?? "") }];
    case "click_at":
      return [{ type: "click", ...fromGrid(screen, args.x, args.y) }];
    case "hover_at":
      return [{ type: "move", ...fromGrid(screen, args.x, args.y) }];
    case "type_text_at":
      return [
        {
          type: "type",
          text: String(args.text ?? ""),
          at: fromGrid(screen, args.x, args.y),
          clearFirst: args.clear_before_typing !== false,
          pressEnter: args.press_enter !== false,
        },
      ];
    case "key_combination":
      return [{ type: "keyPress", keys: [String(args.keys ?? "")] }];
    case "scroll_document":
      return [
        {
          type: "scroll",
          x: screen.width / 2,
          y: screen.height / 2,
          ...scrollDelta(
            args.direction,
            args.direction === "left" || args.direction === "right"
              ? screen.width * 0.8
              : screen.height * 0.8,
          ),
        },
      ];
    case "scroll_at": {
      const magnitude = args.magnitude === undefined ? DEFAULT_MAGNITUDE : num(args.magnitude);
      const horizontal = args.direction === "left" || args.direction === "right";
      const px = (magnitude / GRID) * (horizontal ? screen.width : screen.height);
      return [{ type: "scroll", ...fromGrid(screen, args.x, args.y), ...scrollDelta(args.direction, px) }];
    }
    case "drag_and_drop":
      return [
        {
          type: "drag",
          path: [fromGrid(screen, args.x, args.y), fromGrid(screen, args.destination_x, args.destination_y)],
        },
      ];
    default:
      throw new CuaProviderError(`Gemini called a function Deckhand does not know: ${JSON.stringify(name)}.`);
  }
}
