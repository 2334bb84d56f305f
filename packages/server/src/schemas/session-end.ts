// POST /v1/sessions/{id}/end (SessionEnd). No request body.

import { z } from "zod";
import { named } from "./registry.ts";

export const SessionEndData = named(
  "SessionEndResult",
  z.object({ success: z.boolean() }),
  "The session is ended: its browser is closed (unless keepAlive) and its replay stays readable.",
);
export type SessionEndData = z.output<typeof SessionEndData>;
