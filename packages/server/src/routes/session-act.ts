// POST /v1/sessions/{id}/act (SessionAct)

import type { FastifyInstance } from "fastify";
import { SessionActBody, SessionActData } from "../schemas/session-operations.ts";
import type { RouteDeps } from "./handlers.ts";
import { registerOperationRoute } from "./operation-route.ts";

export function registerSessionAct(app: FastifyInstance, deps: RouteDeps): void {
  registerOperationRoute(app, deps, {
    operationId: "SessionAct",
    name: "act",
    summary: "Perform an action on the page",
    description:
      "Performs one browser action described in plain words (the model picks the element), or the given Action " +
      "without a model. Variables are substituted in the browser step and never reach the model.",
    handler: "sessionAct",
    body: SessionActBody,
    data: SessionActData,
  });
}
