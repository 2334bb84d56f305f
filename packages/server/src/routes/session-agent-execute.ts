// POST /v1/sessions/{id}/agentExecute (SessionAgentExecute)

import type { FastifyInstance } from "fastify";
import { SessionAgentExecuteBody, SessionAgentExecuteData } from "../schemas/session-operations.ts";
import type { RouteDeps } from "./handlers.ts";
import { registerOperationRoute } from "./operation-route.ts";

export function registerSessionAgentExecute(app: FastifyInstance, deps: RouteDeps): void {
  registerOperationRoute(app, deps, {
    operationId: "SessionAgentExecute",
    name: "agentExecute",
    summary: "Run a multi-step agent task",
    description:
      "Runs an agent on the session until the task is done or maxSteps is reached. Best streamed: log events " +
      "report each step.",
    handler: "sessionAgentExecute",
    body: SessionAgentExecuteBody,
    data: SessionAgentExecuteData,
  });
}
