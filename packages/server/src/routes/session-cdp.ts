// GET /v1/sessions/{id}/cdp (SessionCdp): documented here; the WebSocket upgrade itself is answered
// by the CDP proxy (cdp-proxy/cdp-proxy.ts) before Fastify sees the request. A plain GET gets 426.

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { authOf } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { SessionIdParams } from "../schemas/common.ts";
import { doc } from "../schemas/registry.ts";
import type { RouteDeps } from "./handlers.ts";
import { CDP_SECURITY, errorResponses } from "./route-schema.ts";
import { loadActiveSession } from "./session-access.ts";

const CdpQuery = z.object({
  apiKey: doc(
    z.string().optional(),
    "The API key, for WebSocket clients that cannot set the x-platform-api-key header (e.g. browsers). " +
      "Prefer the header: a URL may end up in logs along the way.",
  ),
});

export function registerSessionCdp(app: FastifyInstance, deps: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: "GET",
    url: "/v1/sessions/:id/cdp",
    config: { queryApiKey: true },
    // The 101 answer has no body to serialise (the proxy answers it before Fastify); error bodies
    // are plain JSON.
    serializerCompiler: () => (data) => JSON.stringify(data),
    schema: {
      operationId: "SessionCdp",
      summary: "Chrome DevTools Protocol connection to the session's browser (WebSocket)",
      description:
        "Upgrade to a WebSocket to speak CDP with the session's browser, held to the session: " +
        "Target.getBrowserContexts names the session's context as the default (and only) one, target events and " +
        "Target.getTargets show only the session's pages, Target.createTarget opens tabs in the session's context " +
        "(up to the service's tab limit). What a client may send is an allow-list: commands by name and session kind, " +
        "with URLs (http, https, data:, about:blank), file paths, download directories, browser contexts, targets " +
        "and windows held to the session's own; anything else fails with a CDP error. Messages larger than the " +
        "service's limit close the connection (1009). Authenticate with the x-platform-api-key header, or with " +
        "?apiKey= where a WebSocket client cannot set headers; revoking the key closes the connection. A request " +
        "without an upgrade is answered 426.",
      tags: ["sessions"],
      security: CDP_SECURITY,
      params: SessionIdParams,
      querystring: CdpQuery,
      response: {
        101: { description: "Switching Protocols: the WebSocket is open; CDP messages flow both ways." },
        ...errorResponses(401, 404, 410, 426),
      },
    },
    handler: async (request) => {
      await loadActiveSession(deps.store, authOf(request), request.params.id);
      throw new ApiError(
        426,
        "UPGRADE_REQUIRED",
        "This endpoint speaks the Chrome DevTools Protocol over a WebSocket: connect with a WebSocket client.",
      );
    },
  });
}
