// POST /v1/sessions/{id}/end (SessionEnd)

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { authOf } from "../auth.ts";
import { ApiError, notImplemented } from "../errors.ts";
import { SessionIdParams } from "../schemas/common.ts";
import { SessionEndResponse } from "../schemas/session-end.ts";
import type { RouteDeps } from "./handlers.ts";
import { errorResponses, jsonResponse, SECURITY } from "./route-schema.ts";
import { loadServedSession } from "./session-access.ts";

export function registerSessionEnd(app: FastifyInstance, deps: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: "POST",
    url: "/v1/sessions/:id/end",
    config: { cluster: { kind: "session" } },
    schema: {
      operationId: "SessionEnd",
      summary: "End a session",
      description:
        "Ends the session and closes its browser (unless keepAlive). Its replay stays readable. No body. " +
        "Answers `{ success: true }` (no `data`), as the reference service does.",
      tags: ["sessions"],
      security: SECURITY,
      params: SessionIdParams,
      response: {
        200: jsonResponse(SessionEndResponse, "The session has ended."),
        ...errorResponses(401, 404, 409, 410, 500, 501),
      },
    },
    // No body: a client that sends one expects it to mean something, and nothing would be done with it.
    preValidation: async (request) => {
      if (!isEmptyBody(request.body)) {
        throw new ApiError(
          400,
          "INVALID_REQUEST",
          "Invalid request: POST /v1/sessions/{id}/end takes no body (send none, or {}).",
        );
      }
    },
    handler: async (request) => {
      const handle = deps.handlers.sessionEnd;
      if (!handle) throw notImplemented();
      const auth = authOf(request);
      const session = await loadServedSession(deps.store, auth, request.params.id, deps.nodeId);
      await handle.call(deps.handlers, { request, auth, store: deps.store, session });
      await deps.store.endSession(session.id, undefined, "ended by the client");
      return { success: true as const };
    },
  });
}

function isEmptyBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  return typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0;
}
