// GET /v1/sessions/{id}/replay (SessionReplay): spec 4.1. Served from the store alone, so it works
// for ended sessions and on any node.

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { authOf } from "../auth.ts";
import { sessionNotFound } from "../errors.ts";
import { ReplayHeaders, SessionIdParams } from "../schemas/common.ts";
import { ReplayResponse } from "../schemas/session-replay.ts";
import type { RouteDeps } from "./handlers.ts";
import { errorResponses, jsonResponse, SECURITY } from "./route-schema.ts";
import { loadOwnSession } from "./session-access.ts";

export function registerSessionReplay(app: FastifyInstance, deps: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: "GET",
    url: "/v1/sessions/:id/replay",
    schema: {
      operationId: "SessionReplay",
      summary: "Replay session metrics",
      description:
        "Every operation of the session (method, parameters with variable values redacted, result, times, token " +
        "usage), grouped into pages by URL in the order they were visited. Timestamps are milliseconds since the " +
        "Unix epoch; durations and timeMs are milliseconds. Readable after the session ended.",
      tags: ["sessions"],
      security: SECURITY,
      params: SessionIdParams,
      headers: ReplayHeaders,
      response: {
        200: jsonResponse(ReplayResponse, "The session's replay (spec 2.2)."),
        ...errorResponses(401, 404, 500),
      },
    },
    handler: async (request) => {
      const session = await loadOwnSession(deps.store, authOf(request), request.params.id);
      const replay = await deps.store.getReplay(session.id);
      if (!replay) throw sessionNotFound(request.params.id);
      return { success: true, data: replay };
    },
  });
}
