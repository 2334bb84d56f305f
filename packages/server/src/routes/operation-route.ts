// The shape every session operation (act, extract, observe, navigate, agentExecute) shares: the
// caller's active session, validated body, JSON or Server-Sent Events answer, activity recorded
// before and after. Each operation's file only declares what differs.

import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { authOf } from "../auth.ts";
import { notImplemented } from "../errors.ts";
import { OperationHeaders, SessionIdParams, successEnvelope } from "../schemas/common.ts";
import { StreamEvent } from "../schemas/stream-events.ts";
import { runOperation } from "../sse.ts";
import type { OperationContext, RouteDeps, SessionHandlers } from "./handlers.ts";
import { errorResponses, SECURITY } from "./route-schema.ts";
import { loadServedSession } from "./session-access.ts";

type OperationHandlerName =
  | "sessionAct"
  | "sessionExtract"
  | "sessionObserve"
  | "sessionNavigate"
  | "sessionAgentExecute";

export interface OperationRoute<Body extends z.ZodType, Data extends z.ZodType> {
  operationId: string;
  /** After /v1/sessions/{id}/. */
  name: string;
  summary: string;
  description: string;
  handler: OperationHandlerName;
  body: Body;
  /** The `data` of the 200 JSON answer; its `result` is what a stream's `finished` event carries. */
  data: Data;
}

export function registerOperationRoute<Body extends z.ZodType, Data extends z.ZodType<{ result: unknown }>>(
  app: FastifyInstance,
  deps: RouteDeps,
  route: OperationRoute<Body, Data>,
): void {
  // Not through the zod type provider: with Body and Data generic its types cannot be resolved here,
  // so the validated parts are cast to the schemas' output types below.
  app.route({
    method: "POST",
    url: `/v1/sessions/:id/${route.name}`,
    config: { cluster: { kind: "session" } },
    schema: {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description,
      tags: ["sessions"],
      security: SECURITY,
      params: SessionIdParams,
      headers: OperationHeaders,
      body: route.body,
      response: {
        200: {
          description: "JSON by default; Server-Sent Events (StreamEvent) when streaming was asked for.",
          content: {
            "application/json": { schema: successEnvelope(route.data) },
            "text/event-stream": { schema: StreamEvent },
          },
        },
        ...errorResponses(400, 401, 404, 409, 410, 413, 422, 500, 501, 502, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const handle = deps.handlers[route.handler] as
        | ((context: OperationContext<z.output<Body>>) => Promise<z.output<Data>>)
        | undefined;
      if (!handle) throw notImplemented();
      const auth = authOf(request);
      const session = await loadServedSession(
        deps.store,
        auth,
        (request.params as SessionIdParams).id,
        deps.nodeId,
      );
      await deps.store.touchSession(session.id);
      const headers = request.headers as OperationHeaders;
      try {
        // A key revoked while its operation runs (or streams) gets the final answer, 401
        // KEY_REVOKED (a stream's last `error` event), and the operation is stopped.
        await runOperation(
          request,
          reply,
          async (controls) => {
            let reported: "HIT" | "MISS" | undefined;
            const data = await handle.call(deps.handlers as SessionHandlers, {
              ...controls,
              request,
              auth,
              store: deps.store,
              session,
              body: request.body as z.output<Body>,
              headers,
              ...(headers["x-model-api-key"] ? { modelApiKey: headers["x-model-api-key"] } : {}),
              cacheBypass: headers["x-platform-cache-bypass"] === "true",
              reportCacheStatus: (status) => {
                reported = status;
              },
            });
            // A JSON answer also says in a header whether the server cache served it (a stream's
            // headers are gone by then; there the result's cacheStatus says it).
            const cacheStatus =
              reported ?? (data.result as { cacheStatus?: unknown } | null | undefined)?.cacheStatus;
            if (cacheStatus !== "HIT" && cacheStatus !== "MISS") return data;
            if (!controls.streaming) reply.header("x-platform-cache-status", cacheStatus);
            // Beside the result too (the result is the caller's own data, e.g. its schema's object).
            return { ...data, cacheStatus };
          },
          { keyId: auth.keyId },
        );
      } finally {
        // Long operations count as activity until they end, not only from when they started.
        await deps.store.touchSession(session.id);
      }
      // runOperation has answered (JSON or stream); returning the reply tells Fastify not to send again.
      return reply;
    },
  });
}
