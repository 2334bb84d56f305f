// GET /healthz (the process answers) and GET /readyz (it can take work: not shutting down, its
// store answers, its event loop is not stalled, and whatever else the service checks: its browser
// pool can start browsers). No key; the answer is a word and, when not ready, a short reason in
// words (which part cannot serve), nothing a probe could use beyond that.

import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Store } from "../store/store.ts";
import { jsonResponse } from "./route-schema.ts";

/** How long /readyz waits for the store before it says "not ready". */
const STORE_CHECK_MS = 2_000;

const Health = z.object({ status: z.literal("ok") });
const Readiness = z.object({
  status: z.enum(["ready", "unavailable"]),
  reason: z.string().optional().describe("Why the service is not ready (which part cannot serve)."),
});

/** A check of one part the service needs: undefined when it can serve, else why not. */
export type ReadinessCheck = () => string | undefined | Promise<string | undefined>;

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

export function registerHealth(
  app: FastifyInstance,
  store: Store,
  checks: () => readonly ReadinessCheck[] = () => [],
): void {
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
          "200 when the service takes new work: its database answers, its event loop is not stalled beyond the " +
          "operator's threshold, its browser pool can start browsers. 503 with a reason otherwise, and while it " +
          "shuts down. " +
          "No API key needed.",
        tags: ["health"],
        security: [],
        response: {
          200: jsonResponse(Readiness, "Ready."),
          503: jsonResponse(Readiness, "Not ready: the reason says which part cannot serve."),
        },
      },
    },
    async (_request, reply) => {
      const reasons: string[] = [];
      if (!(await storeAnswers(store))) reasons.push("the database does not answer");
      for (const check of checks()) {
        const reason = await check();
        if (reason) reasons.push(reason);
      }
      if (reasons.length === 0) return { status: "ready" as const };
      return reply.status(503).send({ status: "unavailable" as const, reason: reasons.join("; ") });
    },
  );
}
