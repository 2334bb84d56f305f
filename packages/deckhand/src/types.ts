// The data shapes of the Deckhand client: results, actions, variables, metrics, history, log
// lines. Field names follow SERVICE-SPEC.md exactly. Data only: this file imports nothing but the
// types of the act wire (wire.ts, zod schemas and nothing of the library), so every layer may use it. Options live with their checks in options.ts; types that belong to a layer
// (Page, Locator, Context, LLMClient) are defined there; all are re-exported from the package index.

// ---------- logging ----------

/** One log event. `level`: 0 error/essential, 1 info, 2 debug. */
export interface LogLine {
  category: string;
  message: string;
  level: 0 | 1 | 2;
  /** ISO 8601 time the line was made. */
  timestamp: string;
  auxiliary?: Record<
    string,
    { value: string; type: "object" | "string" | "html" | "integer" | "float" | "boolean" }
  >;
}

export type Logger = (line: LogLine) => void;

// ---------- models ----------

/** `"provider/model"`, or an object with the model name and provider options. */
export type ModelConfiguration =
  | string
  | {
      modelName: string;
      apiKey?: string;
      baseURL?: string;
      /** Extra HTTP headers sent to the provider. */
      headers?: Record<string, string>;
      /** Provider-specific options, passed through to the provider's factory. */
      [option: string]: unknown;
    };

// ---------- variables ----------

export type VariablePrimitive = string | number | boolean;
/** A value for a `%name%` placeholder. The object form lets the model see a description (never the value). */
export type VariableValue = VariablePrimitive | { value: VariablePrimitive; description?: string };
export type Variables = Record<string, VariableValue>;

// ---------- actions and results ----------

// Declared once, as the wire's zod schemas (wire.ts), from which the service's schemas come too.
export type { Action, ActResult } from "./wire.ts";

export type ExtractPageTextResult = { pageText: string };
export type ExtractTextResult = { extraction: string; cacheStatus?: "HIT" | "MISS" };

// ---------- metrics and history ----------

type MetricGroup<P extends string> = {
  [K in
    | `${P}PromptTokens`
    | `${P}CompletionTokens`
    | `${P}ReasoningTokens`
    | `${P}CachedInputTokens`
    | `${P}InferenceTimeMs`]: number;
};

/** Section 2.12: five numbers per operation kind, and their totals. */
export type DeckhandMetrics = MetricGroup<"act"> &
  MetricGroup<"extract"> &
  MetricGroup<"observe"> &
  MetricGroup<"agent"> &
  MetricGroup<"total">;

export interface HistoryEntry {
  method: "act" | "extract" | "observe" | "navigate";
  parameters: unknown;
  result: unknown;
  /**
   * A failed act's call log: every wait and retry of the operation ("waiting for locator(...)",
   * "<div id=consent> intercepts pointer events - retrying x 12"), secrets masked. Absent otherwise.
   */
  callLog?: readonly string[];
  /** ISO 8601. */
  timestamp: string;
}

// ---------- the replay record of a REMOTE session (spec 2.3-2.6) ----------

/** Spec 2.6. Every field optional; `timeMs` in milliseconds, `cost` in the provider's currency unit. */
export interface ReplayTokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  timeMs?: number;
  cost?: number;
}

/** Spec 2.5: one recorded operation. Optional fields are absent, never null. */
export interface ReplayAction {
  /** act, extract, observe, navigate, agentExecute. */
  method: string;
  /** The call's parameters, variable values redacted. */
  parameters: Record<string, unknown>;
  result: Record<string, unknown>;
  /** Start of the operation, epoch milliseconds. */
  timestamp: number;
  /** End of the operation, epoch milliseconds. */
  endTime?: number;
  tokenUsage?: ReplayTokenUsage;
}

/** Spec 2.4: consecutive actions on one URL. `duration`: from the first action's start to the last one's end (ms). */
export interface ReplayPage {
  url: string;
  timestamp: number;
  duration: number;
  actions: ReplayAction[];
}

/** Spec 2.3: what GET /v1/sessions/{id}/replay answers (its `data`). */
export interface SessionReplay {
  /** In the order the session visited them. */
  pages: ReplayPage[];
  /** The x-language header the session was started with. */
  clientLanguage?: string;
}

// ---------- recorded steps (one declaration: the action cache, the agent replay, the replay record
// and the script exports all read this shape; see docs/export.md) ----------

/**
 * A Playwright-style locator of an element, checked when the step ran to match exactly one element
 * in the element's frame (open shadow roots included, as Playwright's own locators pierce them).
 */
export type StepLocator =
  | { kind: "role"; role: string; name: string }
  | { kind: "label"; text: string }
  | { kind: "placeholder"; text: string }
  | { kind: "text"; text: string }
  | { kind: "testId"; value: string }
  /** CSS built from the element's own attributes (an id, a name), never from its position. */
  | { kind: "css"; selector: string };

/** What the record-time check found for an element. */
export interface StepLocators {
  /** The element's tag (a native <select> takes selectOption; a custom dropdown is clicked open). */
  tag: string;
  /** The <iframe> elements from the top document down to the element's frame, each a CSS selector unique in its parent frame. */
  frames: string[];
  /** The locators that matched exactly this element, best first (user-facing ones before CSS). */
  candidates: StepLocator[];
  /** Why no locator can address the element (a closed shadow root, only its position tells it apart). */
  unaddressable?: string;
}

/** One step performed on the page (or on an element of it), as it is recorded. */
export interface RecordedStep {
  /** Absolute XPath of the element (or "" for a page-level action such as a key press). */
  selector: string;
  method: string;
  /** With `%name%` tokens, never values. */
  arguments: string[];
  description: string;
  /** What the element was when the step was recorded ("" for a page-level step). */
  role: string;
  /** Its accessible name, a variable's value in it kept as its `%name%`. */
  name: string;
  /** The record-time locator check (absent in entries recorded before it existed). */
  locators?: StepLocators;
}

/** Where an operation ran and what it did, as the script exports read it. */
export interface RecordedOperation {
  /** The tab it ran in (its target id). */
  page: string;
  /** The tab's URL when the operation started, and when it ended. */
  startUrl: string;
  endUrl: string;
  /** The steps an act performed (none for other operations). */
  steps: RecordedStep[];
}

/**
 * @internal Set on an ActResult by the LOCAL facade: the operation as recorded. Never sent as such:
 * the service copies it into its replay record (the act's result, under `recorded`).
 */
export const RECORDED: unique symbol = Symbol("deckhand.recorded");

/**
 * @internal Set on a failed ActResult by the LOCAL driver: the operation's call log (every wait and
 * retry, masked), which its message ends with. The facade puts it in the history entry and the
 * report in its step; not sent as such.
 */
export const CALL_LOG: unique symbol = Symbol("deckhand.callLog");

/** @internal Set on an ActResult by ops: the steps performed, before the facade adds where they ran. */
export const RECORDED_STEPS: unique symbol = Symbol("deckhand.recordedSteps");

/**
 * @internal Set on an ActResult carried out without a model (an explicit instruction): the facade
 * records `resolvedWithoutModel: true` with it in the history. Not sent anywhere.
 */
export const RESOLVED_WITHOUT_MODEL: unique symbol = Symbol("deckhand.resolvedWithoutModel");
