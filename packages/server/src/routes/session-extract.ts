// POST /v1/sessions/{id}/extract (SessionExtract)

import type { FastifyInstance } from "fastify";
import { SessionExtractBody, SessionExtractData } from "../schemas/session-operations.ts";
import type { RouteDeps } from "./handlers.ts";
import { registerOperationRoute } from "./operation-route.ts";

export function registerSessionExtract(app: FastifyInstance, deps: RouteDeps): void {
  registerOperationRoute(app, deps, {
    operationId: "SessionExtract",
    name: "extract",
    summary: "Extract data from the page",
    description:
      "Returns structured data (conforming to the given JSON Schema), text for an instruction, or the page text " +
      "when neither is given.",
    handler: "sessionExtract",
    body: SessionExtractBody,
    data: SessionExtractData,
  });
}
