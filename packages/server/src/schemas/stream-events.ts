// The Server-Sent Events of a streamed operation (documented in the OpenAPI document as the
// `text/event-stream` form of its 200 response).

import { z } from "zod";
import { ActionId, CacheStatus, ErrorDetails } from "./common.ts";
import { doc, named } from "./registry.ts";

export const SystemEventStatus = z.enum(["starting", "connected", "running", "finished", "error"]);
export type SystemEventStatus = z.output<typeof SystemEventStatus>;

export const StreamLogLine = named(
  "StreamLogLine",
  z.object({
    category: doc(z.string(), "Which part of Deckhand wrote the line (act, extract, observe, llm, ...)."),
    message: z.string(),
    level: doc(
      z.union([z.literal(0), z.literal(1), z.literal(2)]),
      "0 minimal, 1 standard, 2 detailed debug.",
    ),
    timestamp: doc(z.string().optional(), "ISO 8601 time the line was made."),
    auxiliary: doc(
      z.record(z.string(), z.object({ value: z.string(), type: z.string() })).optional(),
      "Further values of the line, each as a string with its type.",
    ),
  }),
  "A log line, as the library's `logger` option receives it.",
);
export type StreamLogLine = z.output<typeof StreamLogLine>;

export const StreamEvent = named(
  "StreamEvent",
  z.union([
    z.object({
      type: z.literal("system"),
      id: doc(z.string(), "Unique id of this event (a UUID)."),
      data: z.object({
        status: SystemEventStatus,
        result: doc(
          z.unknown().optional(),
          "With `finished`: what the JSON response's data.result would be.",
        ),
        actionId: doc(ActionId.optional(), "With `finished`: the JSON response's data.actionId."),
        cacheStatus: doc(
          CacheStatus.optional(),
          "With `finished`, when the server cache was in play: the JSON response's data.cacheStatus.",
        ),
        error: doc(z.string().optional(), "With `error`: what went wrong."),
        code: doc(z.string().optional(), "With `error`: the error body's `code` (e.g. ELEMENT_NOT_FOUND)."),
        details: ErrorDetails.optional(),
      }),
    }),
    z.object({
      type: z.literal("log"),
      id: doc(z.string(), "Unique id of this event (a UUID)."),
      data: z.object({ status: z.literal("running"), message: StreamLogLine }),
    }),
  ]),
  "One event of a streamed response, sent as a block of an `event: <data.status>` line (`running` for log " +
    "events) and a `data: {json}` line. The reference's hand-written TypeScript client (known by the " +
    "x-bb-session-id header it sends) and a request with `x-stream-event-names: false` get the `data:` line " +
    "alone. The stream " +
    "starts with system `starting`, `connected`, `running`, carries log events while the operation runs, and " +
    "ends after system `finished` or `error`.",
);
export type StreamEvent = z.output<typeof StreamEvent>;
