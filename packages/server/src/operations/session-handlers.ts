// The browser work behind the session routes (the SessionHandlers seam of routes/handlers.ts):
// sessions from the session manager, operations recorded for replay.

import type { SessionHandlers, SessionStartResult, StartContext } from "../routes/handlers.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import { sessionAct } from "./act.ts";
import { sessionAgentExecute } from "./agent-execute.ts";
import { sessionExtract } from "./extract.ts";
import { sessionNavigate } from "./navigate.ts";
import { sessionObserve } from "./observe.ts";
import type { OperationDeps } from "./recorded-operation.ts";

export interface SessionHandlerDeps extends OperationDeps {
  sessions: SessionManager;
}

/**
 * What the client gets to reach the session, as it reached the service, each link signed for this
 * session and the caller's key (viewer/session-links.ts): the session page (`sessionUrl`), the
 * DevTools front end on its page (`debugUrl`) and its CDP proxy (`cdpUrl`, usable as it is by
 * connectOverCDP). No API key is in any of them.
 */
function describe(context: StartContext, session: LiveSession | undefined): SessionStartResult {
  const { request, auth } = context;
  // A session whose browser.cdpUrl is attached when first used has no LiveSession yet.
  const urls = request.server.deckhand.links.urls(request, context.session.id, auth.keyId);
  return { available: !session?.ended, ...urls };
}

export function createSessionHandlers(deps: SessionHandlerDeps): SessionHandlers {
  const { sessions } = deps;
  return {
    async sessionStart(context) {
      // Resuming: the session must be running here (a leftover of an earlier run is ended, 410).
      if (context.resumed) {
        const session = await sessions.require(context.session);
        session.requested(context.params.sessionCreateParams?.keepAlive);
        return describe(context, session);
      }
      const session = await sessions.createOrDefer(context.session, context.params);
      deps.metrics?.sessionStarted();
      return describe(context, session);
    },
    async sessionAct(context) {
      return sessionAct(context, await sessions.require(context.session), deps);
    },
    async sessionExtract(context) {
      return sessionExtract(context, await sessions.require(context.session), deps);
    },
    async sessionObserve(context) {
      return sessionObserve(context, await sessions.require(context.session), deps);
    },
    async sessionNavigate(context) {
      return sessionNavigate(context, await sessions.require(context.session), deps);
    },
    async sessionAgentExecute(context) {
      return sessionAgentExecute(context, await sessions.require(context.session), deps);
    },
    async sessionEnd(context) {
      await sessions.end(context.session.id, "ended by the client");
    },
  };
}
