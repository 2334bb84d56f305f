// GET /healthz (the process answers) and GET /readyz (it can take work: not shutting down, its
// store answers). No key, and nothing in the answer but a word: a probe on a public address learns
// only that a Deckhand service is there, which answering at all tells anyway.

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Store } from "../store/store.ts";
import { jsonResponse } from "./route-schema.ts";

/** How long /readyz waits for the store before it says "not ready". */
const STORE_CHECK_MS = 2_000;

const Health = z.object({ status: z.literal("ok") });
const Readiness = z.object({ status: z.enum(["ready", "unavailable"]) });

async function storeAnswers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), STORE_CHECK_MS);
  });
  try {
    return await Promise.race([store.countActiveSessions().then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealth(app: FastifyInstance, store: Store): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    "/healthz",
    {
      config: { public: true },
      schema: {
        operationId: "Health",
        summary: "Liveness",
        description: "200 while the process answers requests. No API key needed.",
        tags: ["health"],
        security: [],
        response: { 200: jsonResponse(Health, "The process is alive.") },
      },
    },
    async () => ({ status: "ok" as const }),
  );
  typed.get(
    "/readyz",
    {
      config: { public: true },
      schema: {
        operationId: "Ready",
        summary: "Readiness",
        description:
          "200 when the service takes new work (its database answers); 503 otherwise, and while it shuts down. " +
          "No API key needed.",
        tags: ["health"],
        security: [],
        response: {
          200: jsonResponse(Readiness, "Ready."),
          503: jsonResponse(Readiness, "Not ready (the database does not answer)."),
        },
      },
    },
    async (_request, reply) => {
      if (await storeAnswers(store)) return { status: "ready" as const };
      return reply.status(503).send({ status: "unavailable" as const });
    },
  );
}
