// The Server-Sent Events of a streamed operation (documented in the OpenAPI document as the
// `text/event-stream` form of its 200 response).

import { z } from "zod";
import { ErrorDetails } from "./common.ts";
import { doc, named } from "./registry.ts";

export const SystemEventStatus = z.enum(["starting", "connected", "running", "finished", "error"]);
export type SystemEventStatus = z.output<typeof SystemEventStatus>;

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
        error: doc(z.string().optional(), "With `error`: what went wrong."),
        code: doc(z.string().optional(), "With `error`: the error body's `code` (e.g. ELEMENT_NOT_FOUND)."),
        details: ErrorDetails.optional(),
      }),
    }),
    z.object({
      type: z.literal("log"),
      id: doc(z.string(), "Unique id of this event (a UUID)."),
      data: z.object({ status: z.literal("running"), message: z.string() }),
    }),
  ]),
  "One event of a streamed response, sent as a `data: {json}` block with no `event:` line. The stream " +
    "starts with system `starting`, `connected`, `running`, carries log events while the operation runs, and " +
    "ends after system `finished` or `error`.",
);
export type StreamEvent = z.output<typeof StreamEvent>;
