// GET /v1/sessions/{id}/replay (SessionReplay): spec 2.2-2.6 exactly. No object here accepts a
// property it does not declare (`additionalProperties: false`); parameters and result are the
// spec's "object with string keys and values of any type".

import type { SessionReplay } from "deckhand";
import { z } from "zod";
import { EPOCH_MS } from "./common.ts";
import { doc, named } from "./registry.ts";

export const TokenUsageOutput = named(
  "TokenUsageOutput",
  z.strictObject({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    timeMs: doc(z.number().optional(), "Inference time in milliseconds."),
    cost: z.number().optional(),
  }),
);

export const ReplayActionOutput = named(
  "ReplayActionOutput",
  z.strictObject({
    method: doc(z.string(), "act, extract, observe, navigate, agentExecute."),
    parameters: doc(z.record(z.string(), z.unknown()), "The call's parameters; variable values redacted."),
    result: z.record(z.string(), z.unknown()),
    timestamp: doc(z.number(), `Start of the action. ${EPOCH_MS}`),
    endTime: doc(z.number().optional(), `End of the action. ${EPOCH_MS}`),
    tokenUsage: TokenUsageOutput.optional(),
  }),
);

export const ReplayPageOutput = named(
  "ReplayPageOutput",
  z.strictObject({
    url: z.string(),
    timestamp: doc(z.number(), `Start of the page's first action. ${EPOCH_MS}`),
    duration: doc(z.number(), "Milliseconds from the page's first action's start to its last action's end."),
    actions: z.array(ReplayActionOutput),
  }),
  "Consecutive actions on one URL.",
);

export const ReplayResultOutput = named(
  "ReplayResultOutput",
  z.strictObject({
    pages: doc(z.array(ReplayPageOutput), "In the order the session visited them."),
    clientLanguage: doc(z.string().optional(), "The x-language header the session was started with."),
  }),
);

/** True when two types accept exactly the same values. */
type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The replay shape is the library's (SessionReplay): this schema must describe exactly it, or the
// service does not compile.
true satisfies SameShape<z.output<typeof ReplayResultOutput>, SessionReplay>;

export const ReplayResponse = named(
  "ReplayResponse",
  z.strictObject({
    success: doc(z.boolean(), "Whether the request was successful."),
    data: ReplayResultOutput,
  }),
);
export type ReplayResponse = z.output<typeof ReplayResponse>;
