// POST /v1/sessions/{id}/end (SessionEnd). No request body.

import { z } from "zod";
import { named } from "./registry.ts";

/**
 * The whole body of the answer: `{ success: true }`, as the reference service answers, with no
 * `data` (the one 200 JSON body without the envelope: there is nothing to put in it).
 */
export const SessionEndResponse = named(
  "SessionEndResponse",
  z.object({ success: z.literal(true) }),
  "The session is ended: its browser is closed (unless keepAlive) and its replay stays readable.",
);
export type SessionEndResponse = z.output<typeof SessionEndResponse>;
