// OpenAI's computer-use model through the Responses API and its `computer_use_preview` tool. The
// AI SDK's OpenAI provider speaks the newer `computer` tool only, which computer-use-preview does
// not take, so this calls the HTTP API itself (POST {baseURL}/responses). Turns are chained with
// previous_response_id, as OpenAI's guide does: each request carries only the new outputs.

import type { ComputerAction, Point, Screen } from "./computer.ts";
import {
  type CuaCall,
  type CuaCallResult,
  CuaProviderError,
  type CuaSession,
  type CuaSessionOptions,
  type CuaTurn,
  fromShot,
  mapActions,
  resultsText,
} from "./session.ts";
import type { CuaSafetyCheck } from "./types.ts";

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** OpenAI's `wait` has no duration. */
const WAIT_MS = 1_000;

type Json = Record<string, unknown>;

export class OpenAIComputerUseSession implements CuaSession {
  private readonly options: CuaSessionOptions;
  private previousResponseId: string | undefined;
  /** What the next request sends as `input`. */
  private pending: Json[];
  private readonly log: Json[] = [];

  constructor(options: CuaSessionOptions) {
    this.options = options;
    this.pending = [
      {
        role: "user",
        content: [
          { type: "input_text", text: options.instruction },
          { type: "input_image", image_url: dataUrl(options.firstScreenshot), detail: "high" },
        ],
      },
    ];
  }

  async next(signal: AbortSignal): Promise<CuaTurn> {
    const { options } = this;
    const body: Json = {
      model: options.modelId,
      instructions: options.system,
      tools: [
        {
          type: "computer_use_preview",
          display_width: options.screen.shotWidth,
          display_height: options.screen.shotHeight,
          environment: "browser",
        },
      ],
      input: this.pending,
      truncation: "auto",
      ...(this.previousResponseId ? { previous_response_id: this.previousResponseId } : {}),
    };
    this.log.push(...this.pending);
    const response = await postJson(
      `${(options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/responses`,
      {
        "content-type": "application/json",
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        ...options.headers,
      },
      body,
      signal,
    );
    if (typeof response.id !== "string") throw new CuaProviderError("OpenAI's answer has no response id.");
    this.previousResponseId = response.id;
    const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
    this.log.push(...output);
    this.pending = [];

    const texts: string[] = [];
    const calls: CuaCall[] = [];
    for (const item of output) {
      if (item.type === "message" && Array.isArray(item.content)) {
        for (const part of item.content as Json[])
          if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
      } else if (item.type === "reasoning" && Array.isArray(item.summary)) {
        for (const part of item.summary as Json[]) if (typeof part.text === "string") texts.push(part.text);
      } else if (item.type === "computer_call") {
        calls.push(callOf(item, options.screen));
      }
    }
    const usage = (response.usage ?? {}) as Json;
    const details = (usage.input_tokens_details ?? {}) as Json;
    const outputDetails = (usage.output_tokens_details ?? {}) as Json;
    return {
      text: texts.join("\n"),
      calls,
      usage: {
        input_tokens: num(usage.input_tokens),
        output_tokens: num(usage.output_tokens),
        reasoning_tokens: num(outputDetails.reasoning_tokens),
        cached_input_tokens: num(details.cached_tokens),
      },
    };
  }

  answer(results: CuaCallResult[]): void {
    for (const result of results) {
      this.pending.push({
        type: "computer_call_output",
        call_id: result.call.id,
        output: { type: "computer_screenshot", image_url: dataUrl(result.screenshot) },
        ...(result.acknowledged.length ? { acknowledged_safety_checks: result.acknowledged } : {}),
        current_url: result.url,
      });
    }
    // computer_call_output carries a screenshot only: what went wrong is a message after it.
    const text = resultsText(results);
    if (text) this.pending.push({ role: "user", content: [{ type: "input_text", text }] });
  }

  messages(): unknown[] {
    return [...this.log, ...this.pending];
  }
}

function callOf(item: Json, screen: Screen): CuaCall {
  const id = typeof item.call_id === "string" ? item.call_id : String(item.id);
  // computer-use-preview sends one `action`; the newer tool batches `actions`.
  const raw = Array.isArray(item.actions)
    ? (item.actions as Json[])
    : item.action
      ? [item.action as Json]
      : [];
  const checks = Array.isArray(item.pending_safety_checks) ? (item.pending_safety_checks as Json[]) : [];
  return {
    id,
    name: raw.map((a) => String(a.type)).join(",") || "screenshot",
    args: raw.length === 1 ? (raw[0] as Json) : { actions: raw },
    ...mapActions(() => raw.map((a) => actionOf(a, screen))),
    safetyChecks: checks.map(
      (c): CuaSafetyCheck => ({
        id: String(c.id),
        ...(typeof c.code === "string" ? { code: c.code } : {}),
        ...(typeof c.message === "string" ? { message: c.message } : {}),
      }),
    ),
  };
}

export function actionOf(a: Json, screen: Screen): ComputerAction {
  const at = (): Point => fromShot(screen, num(a.x), num(a.y));
  const keys = Array.isArray(a.keys) ? (a.keys as unknown[]).map(String) : undefined;
  switch (a.type) {
    case "click": {
      const button =
        a.button === "wheel" ? "middle" : (a.button as "left" | "right" | "back" | "forward" | undefined);
      return { type: "click", ...at(), button: button ?? "left", ...(keys?.length ? { keys } : {}) };
    }
    case "double_click":
      return { type: "click", ...at(), clickCount: 2, ...(keys?.length ? { keys } : {}) };
    case "move":
      return { type: "move", ...at() };
    case "drag": {
      const path = Array.isArray(a.path) ? (a.path as Json[]) : [];
      return { type: "drag", path: path.map((p) => fromShot(screen, num(p.x), num(p.y))) };
    }
    case "scroll": {
      const sx = screen.width / screen.shotWidth;
      const sy = screen.height / screen.shotHeight;
      return {
        type: "scroll",
        ...at(),
        deltaX: num(a.scroll_x ?? a.scrollX) * sx,
        deltaY: num(a.scroll_y ?? a.scrollY) * sy,
        ...(keys?.length ? { keys } : {}),
      };
    }
    case "type":
      return { type: "type", text: String(a.text ?? "") };
    case "keypress":
      return { type: "keyPress", keys: keys ?? [] };
    case "wait":
      return { type: "wait", ms: WAIT_MS };
    case "screenshot":
      return { type: "screenshot" };
    default:
      throw new CuaProviderError(
        `OpenAI asked for an action Deckhand does not know: ${JSON.stringify(a.type)}.`,
      );
  }
}

export function dataUrl(png: Buffer): string {
  return `data:image/png;base64,${png.toString("base64")}`;
}

export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** POSTs JSON and returns the JSON answer; a non-2xx answer is a CuaProviderError with the provider's message. */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<Json> {
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new CuaProviderError(
      `The model's API at ${new URL(url).origin} could not be reached: ${String(error)}`,
      undefined,
      {
        cause: error,
      },
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { message?: unknown } } | undefined)?.error;
    const message = typeof error?.message === "string" ? error.message : text.slice(0, 300);
    throw new CuaProviderError(`The model's API answered ${response.status}: ${message}`, response.status);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CuaProviderError(
      `The model's API answered with something other than a JSON object: ${text.slice(0, 200)}`,
    );
  return parsed as Json;
}
