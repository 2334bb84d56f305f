// POST /v1/sessions/{id}/observe (SessionObserve)

import type { FastifyInstance } from "fastify";
import { SessionObserveBody, SessionObserveData } from "../schemas/session-operations.ts";
import type { RouteDeps } from "./handlers.ts";
import { registerOperationRoute } from "./operation-route.ts";

export function registerSessionObserve(app: FastifyInstance, deps: RouteDeps): void {
  registerOperationRoute(app, deps, {
    operationId: "SessionObserve",
    name: "observe",
    summary: "Find candidate actions on the page",
    description:
      "Returns actions for the elements that match the instruction, most relevant first, with XPath selectors.",
    handler: "sessionObserve",
    body: SessionObserveBody,
    data: SessionObserveData,
  });
}
