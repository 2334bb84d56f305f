// POST /v1/sessions/start (SessionStart).

import { z } from "zod";
import { MAX_SESSION_TIMEOUT_S, milliseconds } from "./common.ts";
import { doc, named } from "./registry.ts";

/** Largest viewport side, in CSS pixels: a larger page would take the shared browser's memory. */
export const MAX_VIEWPORT_SIDE = 4096;
const side = z
  .number()
  .int()
  .positive()
  .max(MAX_VIEWPORT_SIDE, { message: `must be at most ${MAX_VIEWPORT_SIDE} pixels` });
const Viewport = z.object({ width: side, height: side });

export const SessionCreateParams = named(
  "SessionCreateParams",
  z.looseObject({
    keepAlive: doc(
      z.boolean().optional(),
      "Keep the session after its client disconnects. Without it, a session whose last CDP connection " +
        "closed ends when no request comes within the service's disconnect grace (default 30 s); with it, " +
        "the session waits for a client to resume it (sessionId) until its idle timeout.",
    ),
    timeout: doc(
      z
        .number()
        .positive()
        .max(MAX_SESSION_TIMEOUT_S, {
          message: `must be at most ${MAX_SESSION_TIMEOUT_S} (one day, in seconds)`,
        })
        .optional(),
      "Idle timeout of the session, in seconds (at most one day).",
    ),
    userMetadata: z.record(z.string(), z.unknown()).optional(),
    browserSettings: z.looseObject({ viewport: Viewport.optional() }).optional(),
  }),
  "Extra parameters for creating the session (alias: browserbaseSessionCreateParams).",
);

export const LocalBrowserLaunchOptions = named(
  "LocalBrowserLaunchOptions",
  z.object({
    headless: z.boolean().optional(),
    executablePath: z.string().optional(),
    port: doc(z.number().int().min(0).max(65535).optional(), "Remote debugging port; a free one when unset."),
    args: z.array(z.string()).optional(),
    ignoreDefaultArgs: doc(
      z.union([z.boolean(), z.array(z.string())]).optional(),
      "`true` drops every default argument; an array drops exactly those strings.",
    ),
    userDataDir: z.string().optional(),
    viewport: Viewport.optional(),
    devtools: z.boolean().optional(),
    proxy: z
      .object({
        server: z.string(),
        bypass: z.string().optional(),
        username: z.string().optional(),
        password: z.string().optional(),
      })
      .optional(),
    ignoreHTTPSErrors: z.boolean().optional(),
    cdpUrl: doc(z.string().optional(), "Attach to a running browser instead of launching one."),
    connectTimeoutMs: doc(milliseconds().optional(), "Milliseconds to wait for the browser to start."),
  }),
  "The client's localBrowserLaunchOptions (spec 4.5). The operator decides which of them a remote caller may set.",
);

export const SessionStartBody = named(
  "SessionStart",
  z
    .object({
      modelName: doc(z.string().optional(), 'Default model of the session, "provider/model".'),
      domSettleTimeoutMs: doc(milliseconds(true).optional(), "Milliseconds to wait for the DOM to settle."),
      verbose: doc(
        z
          .union([
            z.literal(0),
            z.literal(1),
            z.literal(2),
            z.enum(["0", "1", "2"]).transform((level) => Number(level) as 0 | 1 | 2),
          ])
          .optional(),
        '0 minimal, 1 standard, 2 detailed debug; also as the strings "0", "1", "2" (as the reference\'s ' +
          "clients send it).",
      ),
      systemPrompt: z.string().optional(),
      selfHeal: z.boolean().optional(),
      explicitInstructions: doc(
        z.boolean().optional(),
        "Carry out explicit act instructions without a model when one visible element fits. Default true.",
      ),
      experimental: z.boolean().optional(),
      actTimeoutMs: doc(milliseconds().optional(), "Default act timeout in milliseconds (at most one hour)."),
      serverCache: doc(
        z.boolean().optional(),
        "Default of the session's act, extract and observe for the server cache. Default true.",
      ),
      sessionCreateParams: SessionCreateParams.optional(),
      browserbaseSessionCreateParams: doc(SessionCreateParams.optional(), "Alias of sessionCreateParams."),
      sessionId: doc(z.string().optional(), "Resume this existing session instead of creating one."),
      browserbaseSessionID: doc(z.string().optional(), "Alias of sessionId."),
      browser: z
        .object({
          type: doc(
            z.enum(["local", "browserbase"]).optional(),
            "Either way a browser of the service's (or the one at cdpUrl): the reference's `browserbase` (its cloud " +
              "browsers) is this service's own pool.",
          ),
          cdpUrl: doc(z.string().optional(), "Attach to this browser (CDP WebSocket or HTTP endpoint)."),
          launchOptions: LocalBrowserLaunchOptions.optional(),
        })
        .optional(),
    })
    .superRefine((body, ctx) => {
      if (body.sessionId && body.browserbaseSessionID && body.sessionId !== body.browserbaseSessionID) {
        ctx.addIssue({
          code: "custom",
          path: ["browserbaseSessionID"],
          message: "differs from sessionId; send one of the two (browserbaseSessionID is an alias)",
        });
      }
      if (body.sessionCreateParams && body.browserbaseSessionCreateParams) {
        ctx.addIssue({
          code: "custom",
          path: ["browserbaseSessionCreateParams"],
          message: "given together with sessionCreateParams; send one of the two (it is an alias)",
        });
      }
    }),
  "Starts a browser session, or resumes one with sessionId.",
);
export type SessionStartBody = z.output<typeof SessionStartBody>;

/** The start body with its aliases folded into the primary names. */
export type SessionStartParams = Omit<
  SessionStartBody,
  "browserbaseSessionID" | "browserbaseSessionCreateParams"
>;

export function resolveStartAliases(body: SessionStartBody): SessionStartParams {
  const { browserbaseSessionID, browserbaseSessionCreateParams, ...params } = body;
  const sessionId = params.sessionId ?? browserbaseSessionID;
  const sessionCreateParams = params.sessionCreateParams ?? browserbaseSessionCreateParams;
  return {
    ...params,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(sessionCreateParams !== undefined ? { sessionCreateParams } : {}),
  };
}

export const SessionStartData = named(
  "SessionStartResult",
  z.object({
    sessionId: doc(z.string(), "Id of the session (a UUID); the {id} of every other session endpoint."),
    cdpUrl: doc(z.string().optional(), "CDP WebSocket URL of the session's browser, through the service."),
    available: doc(z.boolean(), "Whether the session is ready for operations."),
    sessionUrl: doc(z.string().optional(), "Shareable link to the session, when the service has one."),
    debugUrl: doc(z.string().optional(), "Direct debugger link, when the service has one."),
  }),
);
export type SessionStartData = z.output<typeof SessionStartData>;
