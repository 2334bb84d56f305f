// The browser work behind the session routes (the SessionHandlers seam of routes/handlers.ts):
// sessions from the session manager, operations recorded for replay.

import { ApiError } from "../errors.ts";
import type { SessionHandlers, SessionStartResult, StartContext } from "../routes/handlers.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import { sessionAct } from "./act.ts";
import { sessionExtract } from "./extract.ts";
import { sessionNavigate } from "./navigate.ts";
import { sessionObserve } from "./observe.ts";
import type { OperationDeps } from "./recorded-operation.ts";

export interface SessionHandlerDeps extends OperationDeps {
  sessions: SessionManager;
}

/** An address of the session on this service, as the caller reached it (`ws` for WebSockets). */
function sessionAddress(context: StartContext, id: string, path: string, ws = false): string {
  const secure = context.request.protocol === "https";
  const scheme = ws ? (secure ? "wss" : "ws") : secure ? "https" : "http";
  return `${scheme}://${context.request.host}/v1/sessions/${encodeURIComponent(id)}/${path}`;
}

/**
 * What the client gets to reach the session: its CDP proxy (`cdpUrl`, also the direct debugger
 * link, `debugUrl`: this service has no DevTools front end of its own), and its record
 * (`sessionUrl`: the replay, readable with the key after the session ended).
 */
function describe(context: StartContext, session: LiveSession): SessionStartResult {
  const cdpUrl = sessionAddress(context, session.id, "cdp", true);
  return {
    available: !session.ended,
    cdpUrl,
    debugUrl: cdpUrl,
    sessionUrl: sessionAddress(context, session.id, "replay"),
  };
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
      return describe(context, await sessions.create(context.session, context.params));
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
      await sessions.require(context.session);
      throw new ApiError(
        501,
        "NOT_IMPLEMENTED",
        "agentExecute is not implemented by this service yet. Drive the task step by step with act, extract " +
          "and observe.",
      );
    },
    async sessionEnd(context) {
      await sessions.end(context.session.id, "ended by the client");
    },
  };
}
