// Shapes shared by several endpoints: envelopes, errors, headers, models, variables, actions.
// Field names follow SERVICE-SPEC.md exactly. Request objects drop unknown fields (a client written
// for a newer API still works); response objects carry only what is declared.

import { wireSchemas } from "deckhand";
import { z } from "zod";
import { doc, named } from "./registry.ts";

export const EPOCH_MS = "Milliseconds since the Unix epoch (UTC).";

// ---------- envelopes and errors ----------

/** What a Deckhand error says besides its message, for a client to rebuild the error it stands for. */
export const ErrorDetails = doc(
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  "With a Deckhand error code: the error's own fields, e.g. `path` (SCHEMA_VALIDATION), `selector` " +
    "(ELEMENT_NOT_FOUND, CLICK), `xpath` (XPATH_RESOLUTION), `timeoutMs` (TIMEOUT).",
);
export type ErrorDetails = z.output<typeof ErrorDetails>;

export const ErrorResponse = named(
  "ErrorResponse",
  z.object({
    success: z.literal(false),
    error: doc(z.string(), "What went wrong and, where it helps, what to do about it."),
    message: doc(
      z.string(),
      "The same text as `error`, under the name the reference service's error bodies use.",
    ),
    code: doc(
      z.string(),
      "Stable machine-readable name: INVALID_REQUEST, UNAUTHORIZED, NOT_FOUND, SESSION_NOT_FOUND, SESSION_ENDED, " +
        "BODY_TOO_LARGE, AT_CAPACITY, NOT_IMPLEMENTED, INTERNAL, or a Deckhand error code (e.g. ELEMENT_NOT_FOUND).",
    ),
    details: ErrorDetails.optional(),
  }),
  "Body of every error response.",
);
export type ErrorBody = z.output<typeof ErrorResponse>;

/** `{ success: true, data }`: the body of every 200 JSON response. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

// ---------- headers ----------

const booleanHeader = z.enum(["true", "false"]);

const clientHeaderFields = {
  "x-language": doc(
    z.string().optional(),
    "The client's programming language (e.g. typescript, python); recorded as the replay's clientLanguage.",
  ),
  "x-sdk-version": doc(z.string().optional(), "Version of the client SDK, for diagnostics."),
};

/** Headers of the AI operations (act, extract, observe, navigate, agentExecute). */
export const OperationHeaders = z.looseObject({
  ...clientHeaderFields,
  "x-stream-response": doc(
    booleanHeader.optional(),
    "`true` turns the response into Server-Sent Events (see StreamEvent); same as `streamResponse: true` in the body.",
  ),
  "x-stream-event-names": doc(
    booleanHeader.optional(),
    "`false`: each streamed event is a `data:` line alone, with no `event:` line before it (see StreamEvent).",
  ),
  "x-model-api-key": doc(
    z.string().optional(),
    "The caller's model provider key, for this request only: never stored, never logged.",
  ),
  "x-platform-cache-bypass": doc(
    booleanHeader.optional(),
    "`true` skips the server-side action cache for this call (the client's `serverCache: false`).",
  ),
  "browserbase-cache-bypass": doc(
    booleanHeader.optional(),
    "Alias of x-platform-cache-bypass (the reference's name). Likewise `x-bb-api-key` and `x-bb-project-id` are " +
      "accepted for x-platform-api-key and x-platform-project-id, and the cache status is answered under both " +
      "x-platform-cache-status and browserbase-cache-status.",
  ),
});
export type OperationHeaders = z.output<typeof OperationHeaders>;

/** Headers of session start. */
export const StartHeaders = z.looseObject({
  ...clientHeaderFields,
  "x-model-api-key": doc(
    z.string().optional(),
    "The caller's model provider key, for this request only: never stored, never logged.",
  ),
});
export type StartHeaders = z.output<typeof StartHeaders>;

/** Spec 4.1: the replay endpoint's header parameter (accepted; replay always answers JSON). */
export const ReplayHeaders = z.looseObject({
  "x-stream-response": doc(
    booleanHeader.optional(),
    "Accepted for compatibility; replay is always answered as JSON.",
  ),
});

export const SessionIdParams = z.object({
  id: doc(z.string().min(1), "Unique session identifier (a UUID)."),
});
export type SessionIdParams = z.output<typeof SessionIdParams>;

// ---------- models and variables ----------

export const ModelConfiguration = named(
  "ModelConfiguration",
  z.union([
    doc(z.string().min(1), 'A "provider/model" string, e.g. "openai/gpt-4.1-mini".'),
    z.looseObject({
      modelName: doc(z.string().min(1), 'The model, "provider/model".'),
      apiKey: doc(z.string().optional(), "Provider key for this call; never stored, never logged."),
      baseURL: doc(z.string().optional(), "Custom endpoint or proxy (e.g. an OpenAI-compatible server)."),
      headers: doc(z.record(z.string(), z.string()).optional(), "Extra HTTP headers sent to the provider."),
      provider: doc(z.string().optional(), "Provider name, when it is not the prefix of modelName."),
    }),
  ]),
  "Spec 2.10. Further provider-specific options may accompany the object form.",
);

const VariablePrimitive = z.union([z.string(), z.number(), z.boolean()]);

export const VariableValue = named(
  "VariableValue",
  z.union([
    VariablePrimitive,
    z.object({
      value: VariablePrimitive,
      description: doc(z.string().optional(), "Shown to the model instead of the value."),
    }),
  ]),
  "Spec 2.11.",
);

export const Variables = doc(
  z.record(z.string(), VariableValue),
  "Values for %name% placeholders, substituted in the browser-side step: never sent to a model provider, " +
    "never logged, stored redacted.",
);

// ---------- actions and results ----------

// Declared once in the library (wireSchemas in deckhand's wire.ts, where its types come from too);
// built here with this document's registry, so the descriptions land in it.
const wire = wireSchemas(doc);

export const Action = named(
  "Action",
  wire.Action,
  "Spec 2.7, as act takes and returns it (every field required).",
);

// Not a named component: with its defaults, its input and output forms differ.
export const ActionInput = doc(
  wire.ActionInput,
  "An Action as act takes it (spec 2.7): method defaults to click and arguments to [], as the reference's " +
    "service does.",
);

export const ObservedAction = named(
  "ObservedAction",
  wire.ObservedAction,
  "Spec 2.7, as observe returns it.",
);

export const CacheStatus = wire.CacheStatus;

export const ActResult = named("ActResult", wire.ActResult, "Spec 2.8.");

// ---------- shared request fields ----------

// ---------- ranges ----------
// Timers hold at most 2^31-1 ms; a larger value fires at once (an immediate 504, a session ended
// after 1 ms). Every duration a caller gives is held to a range that means what it says.

/** Longest timeout of one call a caller may ask for: one hour. */
export const MAX_TIMEOUT_MS = 3_600_000;
/** Longest idle timeout of a session a caller may ask for: one day. */
export const MAX_SESSION_TIMEOUT_S = 86_400;

/** Milliseconds, greater than 0 (or from 0 with `allowZero`), at most one hour. */
export function milliseconds(allowZero = false) {
  const base = allowZero ? z.number().min(0) : z.number().positive();
  return base.max(MAX_TIMEOUT_MS, {
    message: `must be at most ${MAX_TIMEOUT_MS} (one hour, in milliseconds)`,
  });
}

export const Timeout = doc(
  milliseconds(),
  "Milliseconds to wait for the operation to complete (at most one hour).",
);
export const FrameId = doc(
  z.string().nullable(),
  "Target page or frame (a page's main frame id is its target id). Empty, null or absent: the active page. " +
    "An id that names no page or frame of the session: 404 FRAME_NOT_FOUND.",
);
export const StreamResponse = doc(
  z.boolean(),
  "`true` turns the response into Server-Sent Events; same as the header `x-stream-response: true`.",
);
export const ActionId = doc(z.string(), "Id of this operation in the session's record.");
