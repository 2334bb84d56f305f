// What a test scripts for a computer-use model, and what the scripted server records of each
// request. Turns are written in each provider's own terms (OpenAI actions, Claude tool inputs,
// Gemini function calls), so a test says exactly what the real model would send.

export type Json = Record<string, unknown>;

export type ComputerUseProvider = "openai" | "anthropic" | "google";

export interface ComputerUseUsage {
  input: number;
  output: number;
  reasoning?: number;
  cached?: number;
}

/**
 * An OpenAI Responses turn: computer_call items and/or a message. A call has one `action` (as
 * computer-use-preview sends) or a batch of `actions` (the GA computer tool).
 */
export interface OpenAIComputerTurn {
  calls?: {
    action?: Json;
    actions?: Json[];
    pendingSafetyChecks?: { id: string; code?: string; message?: string }[];
  }[];
  reasoning?: string;
  text?: string;
  usage?: ComputerUseUsage;
}

/** A Claude Messages turn: tool_use blocks of the computer tool (their `input`) and/or text. */
export interface AnthropicComputerTurn {
  toolUses?: Json[];
  text?: string;
  usage?: ComputerUseUsage;
}

/** A Gemini generateContent turn: function calls (click_at, type_text_at...) and/or text. */
export interface GeminiComputerTurn {
  functionCalls?: { name: string; args?: Json }[];
  text?: string;
  usage?: ComputerUseUsage;
}

export type ComputerUseTurn = OpenAIComputerTurn | AnthropicComputerTurn | GeminiComputerTurn;

/** An HTTP error answer instead of a turn. */
export interface ComputerUseHttpError {
  httpError: { status: number; message: string };
}

export interface ComputerUseRequest {
  /** 1-based, in arrival order. */
  index: number;
  provider: ComputerUseProvider;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Json;
  model: string;
  /** The tools the request declares, as sent. */
  tools: Json[];
  /** PNG screenshots in the part of the request that is new this turn (the user's first message, or the tool results). */
  screenshots: Buffer[];
  /** Screenshots anywhere in the request (older ones included). */
  allScreenshots: number;
  /** Safety checks acknowledged in this request (OpenAI acknowledged_safety_checks, Gemini safety_acknowledgement). */
  acknowledged: Json[];
  /** The new results this turn answers (computer_call_output items, tool_result blocks, function responses), screenshots left in. */
  results: Json[];
  /** The request's whole text (system, instructions, user text), to check what the model was told. */
  text: string;
}

export type ComputerUseResponder = (request: ComputerUseRequest) => ComputerUseTurn | ComputerUseHttpError;
