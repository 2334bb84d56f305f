// Registers every /v1 session route. `handlers` supplies the browser work; missing ones answer 501.

import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "./handlers.ts";
import { registerHealth } from "./health.ts";
import { registerSessionAct } from "./session-act.ts";
import { registerSessionAgentExecute } from "./session-agent-execute.ts";
import { registerSessionCdp } from "./session-cdp.ts";
import { registerSessionEnd } from "./session-end.ts";
import { registerSessionExtract } from "./session-extract.ts";
import { registerSessionNavigate } from "./session-navigate.ts";
import { registerSessionObserve } from "./session-observe.ts";
import { registerSessionReplay } from "./session-replay.ts";
import { registerSessionScript } from "./session-script.ts";
import { registerSessionStart } from "./session-start.ts";

export function registerRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerHealth(app, deps.store, () => app.deckhand.readinessChecks);
  registerSessionStart(app, deps);
  registerSessionAct(app, deps);
  registerSessionExtract(app, deps);
  registerSessionObserve(app, deps);
  registerSessionNavigate(app, deps);
  registerSessionAgentExecute(app, deps);
  registerSessionEnd(app, deps);
  registerSessionReplay(app, deps);
  registerSessionScript(app, deps);
  registerSessionCdp(app, deps);
}
