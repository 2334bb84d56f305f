// The session's operations: act, extract, observe, navigate, agentExecute. Each may be answered as
// JSON or, with `x-stream-response: true` / `streamResponse: true`, as Server-Sent Events.

import { z } from "zod";
import {
  ActionId,
  ActionInput,
  ActResult,
  CacheStatus,
  FrameId,
  ModelConfiguration,
  milliseconds,
  ObservedAction,
  StreamResponse,
  Timeout,
  Variables,
} from "./common.ts";
import { doc, named } from "./registry.ts";

const ServerCache = doc(
  z.boolean(),
  "Use the server cache for this call (default: the session's serverCache, itself default true). Same as " +
    "the header `x-platform-cache-bypass: true` when false.",
);

const IgnoreSelectors = doc(
  z.array(z.string()),
  "Each selector removes its matching elements and their descendants before the model sees the page.",
);

// ---------- act ----------

export const SessionActBody = named(
  "SessionAct",
  z.object({
    input: doc(
      z.union([z.string().min(1), ActionInput]),
      "An instruction (may reference %variableName% placeholders), or an Action to perform without a model.",
    ),
    options: z
      .object({
        model: ModelConfiguration.optional(),
        variables: Variables.optional(),
        timeout: Timeout.optional(),
        serverCache: ServerCache.optional(),
      })
      .optional(),
    frameId: FrameId.optional(),
    streamResponse: StreamResponse.optional(),
  }),
);
export type SessionActBody = z.output<typeof SessionActBody>;

export const SessionActData = named(
  "SessionActResult",
  z.object({
    result: ActResult,
    actionId: ActionId.optional(),
    cacheStatus: doc(
      CacheStatus.optional(),
      "Whether the server cache served this answer; present only when the server cache was in play.",
    ),
  }),
);
export type SessionActData = z.output<typeof SessionActData>;

// ---------- extract ----------

export const SessionExtractBody = named(
  "SessionExtract",
  z.object({
    instruction: doc(
      z.string().optional(),
      "What to extract. Without instruction and schema: the page text.",
    ),
    schema: doc(z.record(z.string(), z.unknown()).optional(), "JSON Schema the result must conform to."),
    options: z
      .object({
        model: ModelConfiguration.optional(),
        timeout: Timeout.optional(),
        selector: doc(
          z.string().optional(),
          "XPath or CSS selector limiting extraction to one part of the page.",
        ),
        ignoreSelectors: IgnoreSelectors.optional(),
        screenshot: doc(
          z.boolean().optional(),
          "Send a PNG of the viewport with the page outline. Default false.",
        ),
        serverCache: ServerCache.optional(),
      })
      .optional(),
    frameId: FrameId.optional(),
    streamResponse: StreamResponse.optional(),
  }),
);
export type SessionExtractBody = z.output<typeof SessionExtractBody>;

export const SessionExtractData = named(
  "SessionExtractResult",
  z.object({
    result: doc(
      z.unknown(),
      "Spec 2.9: { pageText } without instruction; { extraction } with an instruction only; an object conforming " +
        "to the schema otherwise. Exactly what the model extracted: cacheStatus is beside it, never in it.",
    ),
    actionId: ActionId.optional(),
    cacheStatus: doc(
      CacheStatus.optional(),
      "Whether the server cache served this answer; present only when the server cache was in play.",
    ),
  }),
);
export type SessionExtractData = z.output<typeof SessionExtractData>;

// ---------- observe ----------

export const SessionObserveBody = named(
  "SessionObserve",
  z.object({
    instruction: doc(z.string().optional(), "What to look for. Without one: every interactive element."),
    options: z
      .object({
        model: ModelConfiguration.optional(),
        variables: doc(
          Variables.optional(),
          "Only the names reach the model; results keep %name% placeholders.",
        ),
        timeout: Timeout.optional(),
        selector: doc(z.string().optional(), "XPath narrowing the observed area."),
        ignoreSelectors: IgnoreSelectors.optional(),
        serverCache: ServerCache.optional(),
      })
      .optional(),
    frameId: FrameId.optional(),
    streamResponse: StreamResponse.optional(),
  }),
);
export type SessionObserveBody = z.output<typeof SessionObserveBody>;

export const SessionObserveData = named(
  "SessionObserveResult",
  z.object({
    result: doc(z.array(ObservedAction), "Candidate actions, most relevant first; may be empty."),
    actionId: ActionId.optional(),
    cacheStatus: doc(
      CacheStatus.optional(),
      "Whether the server cache served this answer; present only when the server cache was in play.",
    ),
  }),
);
export type SessionObserveData = z.output<typeof SessionObserveData>;

// ---------- navigate ----------

export const SessionNavigateBody = named(
  "SessionNavigate",
  z.object({
    url: doc(z.string().min(1), "Absolute URL to load."),
    options: z
      .object({
        referer: z.string().optional(),
        timeout: Timeout.optional(),
        waitUntil: doc(
          z.enum(["load", "domcontentloaded", "networkidle"]).optional(),
          "When the navigation counts as done. Default load.",
        ),
      })
      .optional(),
    frameId: FrameId.optional(),
    streamResponse: StreamResponse.optional(),
  }),
);
export type SessionNavigateBody = z.output<typeof SessionNavigateBody>;

export const NavigationResponse = named(
  "NavigationResponse",
  z.object({
    url: doc(z.string(), "Final URL after redirects."),
    status: doc(z.number().int(), "HTTP status of the main document."),
    statusText: z.string().optional(),
    ok: doc(z.boolean().optional(), "Status in 200-299."),
    headers: z.record(z.string(), z.string()).optional(),
  }),
  "Summary of the main document's HTTP response.",
);

export const SessionNavigateData = named(
  "SessionNavigateResult",
  z.object({
    result: doc(
      NavigationResponse.nullable(),
      "Null when the navigation produced no HTTP response (e.g. same-document).",
    ),
    actionId: ActionId.optional(),
  }),
);
export type SessionNavigateData = z.output<typeof SessionNavigateData>;

// ---------- agentExecute ----------

export const SessionAgentExecuteBody = named(
  "SessionAgentExecute",
  z.object({
    agentConfig: z.object({
      provider: doc(z.string().optional(), "Model provider of a computer-use agent."),
      model: ModelConfiguration.optional(),
      systemPrompt: z.string().optional(),
      cua: doc(z.boolean().optional(), "Use a computer-use model (screenshots and coordinates)."),
      mode: z.enum(["dom", "hybrid", "cua"]).optional(),
      executionModel: doc(ModelConfiguration.optional(), "Model for the individual act/extract steps."),
    }),
    executeOptions: z.object({
      instruction: doc(z.string().min(1), "The task, in plain words."),
      maxSteps: doc(z.number().int().positive().max(1000).optional(), "Most steps before the agent stops."),
      toolTimeout: doc(milliseconds().optional(), "Milliseconds per tool call."),
      variables: Variables.optional(),
    }),
    frameId: FrameId.optional(),
    streamResponse: StreamResponse.optional(),
    shouldCache: doc(z.boolean().optional(), "Record the run so that an identical task can replay it."),
  }),
);
export type SessionAgentExecuteBody = z.output<typeof SessionAgentExecuteBody>;

export const AgentResult = named(
  "AgentResult",
  z.object({
    success: z.boolean(),
    message: z.string(),
    actions: doc(z.array(z.looseObject({ type: z.string() })), "The steps the agent took, in order."),
    completed: doc(z.boolean(), "Whether the agent considers the task done."),
    metadata: z.record(z.string(), z.unknown()).optional(),
    usage: doc(
      z.record(z.string(), z.number()).optional(),
      "Token counts and inference time (the *_ms / *TimeMs fields are milliseconds).",
    ),
  }),
);

export const SessionAgentExecuteData = named(
  "SessionAgentExecuteResult",
  z.object({
    result: AgentResult,
    cacheEntry: doc(
      z.record(z.string(), z.unknown()).optional(),
      "The recorded run, when shouldCache was set.",
    ),
  }),
);
export type SessionAgentExecuteData = z.output<typeof SessionAgentExecuteData>;
