// GET /v1/sessions/{id}/script?format=... (SessionScript): the session's run as a script, exported
// by the library from the replay record (the same exportScript the LOCAL client runs on its own
// record, so a REMOTE export equals the LOCAL one). Served from the store alone, like the replay:
// it works for ended sessions and on any node.

import { exportScript, SCRIPT_FORMATS } from "deckhand";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { authOf } from "../auth.ts";
import { sessionNotFound } from "../errors.ts";
import { SessionIdParams } from "../schemas/common.ts";
import { doc } from "../schemas/registry.ts";
import type { ReplayResult } from "../store/store.ts";
import type { RouteDeps } from "./handlers.ts";
import { errorResponses, SECURITY } from "./route-schema.ts";
import { loadOwnSession } from "./session-access.ts";

export const ScriptQuery = z.object({
  format: doc(
    z.enum(SCRIPT_FORMATS).default("playwright-test"),
    "playwright-test: a @playwright/test spec (no Deckhand, no model); deckhand: act(action) steps that heal with the model.",
  ),
  assertExtracts: doc(
    z.enum(["true", "false"]).optional(),
    "playwright-test: each extract becomes an expect that the page shows what was extracted.",
  ),
});

/** The replay's operations in the order they ran (the pages group them by URL, in that order). */
export function rowsOf(replay: ReplayResult) {
  return replay.pages.flatMap((page) => page.actions);
}

export function registerSessionScript(app: FastifyInstance, deps: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: "GET",
    url: "/v1/sessions/:id/script",
    // The answer is the script's text as it is; error bodies are plain JSON.
    serializerCompiler: () => (data) => (typeof data === "string" ? data : JSON.stringify(data)),
    schema: {
      operationId: "SessionScript",
      summary: "The session's run as a script",
      description:
        "What the session did, as a script a person can read, commit and run: a Playwright test (each element " +
        "by a locator that matched it alone when the step ran; a step no locator can address safely is a " +
        "test.fixme with the reason) or a Deckhand program of act(action) steps. Variables are read from the " +
        "environment; their values are never in the script. Readable after the session ended.",
      tags: ["sessions"],
      security: SECURITY,
      params: SessionIdParams,
      querystring: ScriptQuery,
      response: {
        200: { description: "The script (TypeScript).", content: { "text/plain": { schema: z.string() } } },
        ...errorResponses(400, 401, 404, 500),
      },
    },
    handler: async (request, reply) => {
      const session = await loadOwnSession(deps.store, authOf(request), request.params.id);
      const replay = await deps.store.getReplay(session.id);
      if (!replay) throw sessionNotFound(request.params.id);
      const script = exportScript(rowsOf(replay), {
        format: request.query.format,
        assertExtracts: request.query.assertExtracts === "true",
        recordedIn: `session ${session.id}`,
      });
      const file = request.query.format === "deckhand" ? "deckhand-script.ts" : "recorded.spec.ts";
      return reply
        .type("text/plain; charset=utf-8")
        .header("content-disposition", `inline; filename="${file}"`)
        .send(script);
    },
  });
}
