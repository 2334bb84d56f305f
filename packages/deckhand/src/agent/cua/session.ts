// What the run loop needs of a provider: send the conversation, get the model's next turn (its words
// and the actions it asks for, already mapped to the page), and give back what came of them.

import type { ComputerAction, Screen, ShotLimit } from "./computer.ts";
import type { CuaSafetyCheck, CuaUsage } from "./types.ts";

export interface CuaCall {
  /** The provider's id of the call (answered with the same id). */
  id: string;
  /** The provider's name of the action ("left_click", "click_at", "click"...). */
  name: string;
  /** The arguments as the model gave them, in the model's coordinate space. */
  args: Record<string, unknown>;
  /** What to do on the page; empty for an action that needs nothing but a new screenshot. */
  actions: ComputerAction[];
  /** Checks the provider wants acknowledged before this call runs. */
  safetyChecks: CuaSafetyCheck[];
  /** Why the call cannot run (an unknown action, a missing coordinate); the model is told. */
  problem?: string;
}

/** The page actions of a call, or the problem that keeps it from running. */
export function mapActions(map: () => ComputerAction[]): { actions: ComputerAction[]; problem?: string } {
  try {
    return { actions: map() };
  } catch (error) {
    return { actions: [], problem: errorMessageOf(error) };
  }
}

export interface CuaTurn {
  /** The model's words this turn (its reasoning, or its final answer). */
  text: string;
  calls: CuaCall[];
  usage: Omit<CuaUsage, "inference_time_ms">;
}

export interface CuaCallResult {
  call: CuaCall;
  /** The screenshot after the call. */
  screenshot: Buffer;
  url: string;
  /** What went wrong, in words for the model; undefined when the call ran. */
  error?: string;
  /** What happened that the screenshot does not show (a native dialog answered), for the model. */
  note?: string;
  /** The safety checks acknowledged for this call. */
  acknowledged: CuaSafetyCheck[];
}

export interface CuaSessionOptions {
  modelId: string;
  apiKey: string | undefined;
  baseURL: string | undefined;
  headers: Record<string, string> | undefined;
  system: string;
  instruction: string;
  screen: Screen;
  firstScreenshot: Buffer;
  url: string;
}

export interface CuaSession {
  /** Asks the model for its next turn. Provider failures reject with CuaProviderError. */
  next(signal: AbortSignal): Promise<CuaTurn>;
  /** Adds the outcome of the last turn's calls to the conversation. */
  answer(results: CuaCallResult[]): void;
  /** The conversation so far in the provider's wire form, screenshots left out. */
  messages(): unknown[];
}

/** A provider's answer was an error (HTTP status, bad body, refused request). */
export class CuaProviderError extends Error {
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CuaProviderError";
    this.status = status;
  }
}

/** How big a screenshot each provider wants at most (a larger viewport is scaled down to fit). */
export const SHOT_LIMITS: Readonly<Record<"openai" | "anthropic" | "google", ShotLimit>> = {
  // OpenAI's computer-use model reads up to 1024x768 at high detail without downscaling on its side.
  openai: { maxWidth: 1280, maxHeight: 800 },
  // Claude: images over about 1.15 megapixels are scaled down by the API, and the coordinates with them.
  anthropic: { maxWidth: 1280, maxHeight: 800 },
  // Gemini answers in a 1000x1000 grid whatever the size; 1440x900 is its recommended screen.
  google: { maxWidth: 1440, maxHeight: 900 },
};

/** JSON with long base64 strings (screenshots) replaced by a marker, for `messages`. */
export function withoutImages(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) =>
      typeof v === "string" && v.length > 200 && /^(data:image\/[a-z]+;base64,)?[A-Za-z0-9+/=]+$/.test(v)
        ? "[screenshot]"
        : v,
    ),
  );
}

/** Clamps a number into [0, max - 1] (the model sometimes points at the edge or just past it). */
/** An AI SDK call's token counts as the agent reports them (the time is added by the run). */
export function usageOfSdk(usage: {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  outputTokenDetails?: { reasoningTokens?: number | undefined };
  inputTokenDetails?: { cacheReadTokens?: number | undefined };
}): Omit<CuaUsage, "inference_time_ms"> {
  return {
    input_tokens: usage.inputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    reasoning_tokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
    cached_input_tokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
  };
}

export function clampTo(value: number, max: number): number {
  return Math.min(Math.max(0, value), Math.max(0, max - 1));
}

/** A point the model gave in screenshot pixels, as viewport CSS pixels. */
export function fromShot(screen: Screen, x: number, y: number): { x: number; y: number } {
  return {
    x: clampTo((x * screen.width) / screen.shotWidth, screen.width),
    y: clampTo((y * screen.height) / screen.shotHeight, screen.height),
  };
}

/** What the model should read beside the screenshots: each call's error and note, or undefined. */
export function resultsText(results: readonly CuaCallResult[]): string | undefined {
  const lines = results.flatMap((r) => [
    ...(r.error ? [`${r.call.name} failed: ${r.error}`] : []),
    ...(r.note ? [r.note] : []),
  ]);
  return lines.length ? lines.join("\n") : undefined;
}

export function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
