// POST /v1/sessions/start (SessionStart)

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { authOf } from "../auth.ts";
import { atCapacity, notImplemented, projectAtCapacity } from "../errors.ts";
import { redactSecrets } from "../redact.ts";
import { StartHeaders, successEnvelope } from "../schemas/common.ts";
import { resolveStartAliases, SessionStartBody, SessionStartData } from "../schemas/session-start.ts";
import type { SessionRecord } from "../store/store.ts";
import type { RouteDeps } from "./handlers.ts";
import { errorResponses, jsonResponse, SECURITY } from "./route-schema.ts";
import { loadServedSession } from "./session-access.ts";

export function registerSessionStart(app: FastifyInstance, deps: RouteDeps): void {
  // Counting the active sessions and creating the new one happen one start at a time, so that
  // concurrent starts cannot all see the last free place. (Only this node's starts are serialised;
  // with several nodes on one PostgreSQL the limit is approximate.)
  let admission: Promise<unknown> = Promise.resolve();
  const admit = <T>(step: () => Promise<T>): Promise<T> => {
    const next = admission.then(step, step);
    admission = next.catch(() => {});
    return next;
  };

  app.withTypeProvider<ZodTypeProvider>().route({
    method: "POST",
    url: "/v1/sessions/start",
    config: { cluster: { kind: "start" } },
    schema: {
      operationId: "SessionStart",
      summary: "Start a browser session",
      description:
        "Creates a browser session (or resumes the caller's own session named by sessionId) and answers with its " +
        "id, the {id} of every other session endpoint.",
      tags: ["sessions"],
      security: SECURITY,
      headers: StartHeaders,
      body: SessionStartBody,
      response: {
        200: jsonResponse(successEnvelope(SessionStartData), "The session is running (or was resumed)."),
        ...errorResponses(400, 401, 404, 409, 410, 413, 429, 500, 501, 503),
      },
    },
    handler: async (request) => {
      const handle = deps.handlers.sessionStart;
      if (!handle) throw notImplemented();
      const auth = authOf(request);
      const params = resolveStartAliases(request.body);
      const headers = request.headers as StartHeaders;
      const resumed = params.sessionId !== undefined;

      let session: SessionRecord;
      if (params.sessionId !== undefined) {
        session = await loadServedSession(deps.store, auth, params.sessionId, deps.nodeId);
      } else {
        session = await admit(async () => {
          // One project must not take every place: the others would only get 429s.
          const perProject = deps.maxSessionsPerProject ?? deps.maxSessions;
          const admitted = await deps.store.admitSession(
            {
              projectId: auth.projectId,
              keyId: auth.keyId,
              params: redactSecrets(params) as Record<string, unknown>,
              ...(deps.nodeId !== undefined ? { nodeId: deps.nodeId } : {}),
              ...(headers["x-language"] ? { clientLanguage: headers["x-language"] } : {}),
            },
            {
              maxSessions: deps.maxSessions,
              perNode: deps.perNodeCapacity === true,
              maxPerProject: perProject,
            },
          );
          if ("refused" in admitted)
            throw admitted.refused === "node" ? atCapacity(deps.maxSessions) : projectAtCapacity(perProject);
          return admitted.session;
        });
      }

      try {
        const started = await handle.call(deps.handlers, {
          request,
          auth,
          store: deps.store,
          params,
          headers,
          ...(headers["x-model-api-key"] ? { modelApiKey: headers["x-model-api-key"] } : {}),
          session,
          resumed,
        });
        await deps.store.touchSession(session.id);
        return { success: true as const, data: { ...started, sessionId: session.id } };
      } catch (error) {
        // A session that never started must not hold a place.
        if (!resumed) await deps.store.endSession(session.id, undefined, "failed to start");
        throw error;
      }
    },
  });
}
