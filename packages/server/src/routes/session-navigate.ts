// POST /v1/sessions/{id}/navigate (SessionNavigate)

import type { FastifyInstance } from "fastify";
import { SessionNavigateBody, SessionNavigateData } from "../schemas/session-operations.ts";
import type { RouteDeps } from "./handlers.ts";
import { registerOperationRoute } from "./operation-route.ts";

export function registerSessionNavigate(app: FastifyInstance, deps: RouteDeps): void {
  registerOperationRoute(app, deps, {
    operationId: "SessionNavigate",
    name: "navigate",
    summary: "Load a URL in the session's page",
    description:
      "Navigates the active page (or the given frame) and answers with a summary of the main document's response.",
    handler: "sessionNavigate",
    body: SessionNavigateBody,
    data: SessionNavigateData,
  });
}
