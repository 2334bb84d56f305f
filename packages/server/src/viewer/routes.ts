// The session page (`sessionUrl`): GET /v1/sessions/{id}/view, its screenshots and its live view,
// opened with the signed token of the link (session-links.ts) and no API key. The page and the
// screenshots come from the store alone, so they work after the session ended, after a restart
// and on any node; the live view needs the session running on this node.

import { exportScript, type ReportStep, renderSessionReport, reportCsp } from "deckhand";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import { errorResponses } from "../routes/route-schema.ts";
import { rowsOf, ScriptQuery } from "../routes/session-script.ts";
import { SessionIdParams } from "../schemas/common.ts";
import { doc } from "../schemas/registry.ts";
import type { SessionManager } from "../sessions/session-manager.ts";
import type { ScreenshotKind, SessionRecord, Store } from "../store/store.ts";
import { type DevToolsFrontend, FRONTEND_PATH } from "./devtools-frontend.ts";
import { LiveViews, MJPEG_CONTENT_TYPE } from "./live-view.ts";
import { type SessionLinks, sessionPath } from "./session-links.ts";

export interface ViewerDeps {
  store: Store;
  links: SessionLinks;
  sessions: SessionManager;
  /** Chromium's DevTools front end, for the debugger link. */
  devtools: DevToolsFrontend;
}

const TokenQuery = z.object({
  token: doc(z.string().max(512).optional(), "The signed token of the session's link (sessionUrl)."),
});

const ScreenshotParams = SessionIdParams.extend({
  shot: doc(z.string().regex(/^\d{1,15}-(before|after)\.jpg$/), "`{seq}-before.jpg` or `{seq}-after.jpg`."),
});

/** Headers of everything the viewer serves: nothing cached by others, no referrer, no framing. */
function secure(reply: FastifyReply, csp?: string): void {
  reply.header("cache-control", "private, no-store");
  reply.header("referrer-policy", "no-referrer");
  reply.header("x-content-type-options", "nosniff");
  reply.header("x-frame-options", "DENY");
  reply.header("cross-origin-resource-policy", "same-origin");
  if (csp) reply.header("content-security-policy", csp);
}

/** The report's steps for a session: its record, with links to the screenshots it has. */
async function stepsOf(store: Store, session: SessionRecord, token: string): Promise<ReportStep[]> {
  const [actions, shots] = await Promise.all([
    store.listActions(session.id),
    store.listScreenshots(session.id),
  ]);
  const have = new Set(shots.map((shot) => `${shot.actionSeq}-${shot.kind}`));
  const url = (seq: number, kind: ScreenshotKind) =>
    have.has(`${seq}-${kind}`)
      ? `${sessionPath(session.id, `view/screenshots/${seq}-${kind}.jpg`)}?token=${encodeURIComponent(token)}`
      : undefined;
  return actions.map((action) => {
    const before = url(action.seq, "before");
    const after = url(action.seq, "after");
    return {
      method: action.method,
      pageUrl: action.pageUrl,
      parameters: action.parameters,
      result: action.result,
      timestamp: action.timestamp,
      ...(action.endTime !== undefined ? { endTime: action.endTime } : {}),
      ...(action.tokenUsage ? { tokenUsage: action.tokenUsage } : {}),
      screenshots: { ...(before ? { before } : {}), ...(after ? { after } : {}) },
    };
  });
}

export function registerViewer(app: FastifyInstance, deps: ViewerDeps): LiveViews {
  const live = new LiveViews();
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.route({
    method: "GET",
    url: "/v1/sessions/:id/view",
    // Forwarded to the owner of a running session, whose page has the live view.
    config: { public: true, cluster: { kind: "link", purpose: "page" } },
    schema: {
      operationId: "SessionView",
      summary: "The session page (HTML)",
      description:
        "The page a person opens at the start response's sessionUrl: the session's timeline grouped by page, each " +
        "step with its instruction, parameters (variable values redacted), result, duration, tokens, cost, cache " +
        "status and screenshots, totals at the top, and a live view while the session runs. Authenticated by the " +
        "link's signed token (no API key); an expired, revoked or foreign token answers 404.",
      tags: ["viewer"],
      security: [],
      params: SessionIdParams,
      querystring: TokenQuery,
      response: {
        200: { description: "The session page.", content: { "text/html": { schema: z.string() } } },
        ...errorResponses(404),
      },
    },
    handler: async (request, reply) => {
      const { session } = await deps.links.open(request.params.id, request.query.token, "page");
      const token = request.query.token!;
      const running = session.status === "active" && deps.sessions.get(session.id) !== undefined;
      const html = renderSessionReport({
        title: `Session ${session.id}`,
        status: session.status,
        startedAt: session.createdAt,
        ...(session.endedAt !== undefined ? { endedAt: session.endedAt } : {}),
        steps: await stepsOf(deps.store, session, token),
        ...(running
          ? { liveViewUrl: `${sessionPath(session.id, "view/live")}?token=${encodeURIComponent(token)}` }
          : {}),
        selfUrl: `${sessionPath(session.id, "view")}?token=${encodeURIComponent(token)}`,
        downloads: [
          { label: "a Playwright test", format: "playwright-test" },
          { label: "a Deckhand script", format: "deckhand" },
        ].map(({ label, format }) => ({
          label,
          url: `${sessionPath(session.id, "view/script")}?format=${format}&token=${encodeURIComponent(token)}`,
        })),
      });
      secure(reply, reportCsp("'self'"));
      reply.type("text/html; charset=utf-8");
      return html;
    },
  });

  typed.route({
    method: "GET",
    url: "/v1/sessions/:id/view/script",
    config: { public: true },
    // The answer is the script's text as it is; error bodies are plain JSON.
    serializerCompiler: () => (data) => (typeof data === "string" ? data : JSON.stringify(data)),
    schema: {
      operationId: "SessionViewScript",
      summary: "The session's run as a script, to download from the session page",
      description:
        "What GET /v1/sessions/{id}/script answers, for the session page's download links (same token, no API key).",
      tags: ["viewer"],
      security: [],
      params: SessionIdParams,
      querystring: TokenQuery.extend({ format: ScriptQuery.shape.format }),
      response: {
        200: { description: "The script (TypeScript).", content: { "text/plain": { schema: z.string() } } },
        ...errorResponses(404),
      },
    },
    handler: async (request, reply) => {
      const { session } = await deps.links.open(request.params.id, request.query.token, "page");
      const replay = await deps.store.getReplay(session.id);
      if (!replay) throw new ApiError(404, "SESSION_NOT_FOUND", "No such session.");
      const format = request.query.format;
      const script = exportScript(rowsOf(replay), { format, recordedIn: `session ${session.id}` });
      secure(reply);
      return reply
        .type("text/plain; charset=utf-8")
        .header(
          "content-disposition",
          `attachment; filename="${format === "deckhand" ? "deckhand-script.ts" : "recorded.spec.ts"}"`,
        )
        .send(script);
    },
  });

  typed.route({
    method: "GET",
    url: "/v1/sessions/:id/view/screenshots/:shot",
    config: { public: true },
    schema: {
      operationId: "SessionViewScreenshot",
      summary: "A step's screenshot (JPEG)",
      description: "The viewport before or after a step, as linked from the session page (same token).",
      tags: ["viewer"],
      security: [],
      params: ScreenshotParams,
      querystring: TokenQuery,
      response: {
        200: { description: "The screenshot.", content: { "image/jpeg": { schema: z.string() } } },
        ...errorResponses(404),
      },
    },
    handler: async (request, reply) => {
      const { session } = await deps.links.open(request.params.id, request.query.token, "page");
      const [seq, kind] = request.params.shot.replace(/\.jpg$/, "").split("-") as [string, ScreenshotKind];
      const jpeg = await deps.store.getScreenshot(session.id, Number(seq), kind);
      if (!jpeg) throw new ApiError(404, "NOT_FOUND", "No such screenshot (it may be past its retention).");
      secure(reply);
      reply.header("cache-control", "private, max-age=86400, immutable");
      reply.type("image/jpeg");
      // Bytes, sent as they are (the schema's string only documents the body for the OpenAPI document).
      return reply.send(jpeg as unknown as string);
    },
  });

  typed.route({
    method: "GET",
    url: "/v1/sessions/:id/view/live",
    config: { public: true, cluster: { kind: "link", purpose: "page" } },
    schema: {
      operationId: "SessionViewLive",
      summary: "Live view of the session's active page (MJPEG)",
      description:
        "A multipart/x-mixed-replace stream of JPEG frames of the session's active page (the CDP screencast), " +
        "while the session runs on this node. Same token as the session page.",
      tags: ["viewer"],
      security: [],
      params: SessionIdParams,
      querystring: TokenQuery,
      response: {
        200: { description: "The stream.", content: { [MJPEG_CONTENT_TYPE]: { schema: z.string() } } },
        ...errorResponses(404, 410, 429),
      },
    },
    handler: async (request, reply) => {
      const { session } = await deps.links.open(request.params.id, request.query.token, "page");
      const running = deps.sessions.get(session.id);
      if (session.status !== "active" || !running || running.ended)
        throw new ApiError(
          410,
          "SESSION_ENDED",
          "The session is not running here: there is nothing live to show.",
        );
      if (!live.hasRoom(session.id))
        throw new ApiError(
          429,
          "TOO_MANY_VIEWERS",
          "Too many live viewers of this session; close one and retry.",
        );
      secure(reply);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        "content-type": MJPEG_CONTENT_TYPE,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
        connection: "close",
      });
      live.watch(running, raw);
    },
  });

  typed.route({
    method: "GET",
    url: "/v1/sessions/:id/debug",
    config: { public: true, cluster: { kind: "link", purpose: "debug" } },
    schema: {
      operationId: "SessionDebug",
      summary: "The debugger: Chromium's DevTools on the session's active page",
      description:
        "The start response's debugUrl: redirects to Chromium's own DevTools front end (served by this service " +
        "from the installed Chromium), connected through the session's CDP proxy (held to its rules) to the " +
        "session's active page. Authenticated by the link's signed token; the front end gets a short-lived CDP " +
        "token of its own. 404 for an expired, revoked or foreign token; 410 when the session is not running here.",
      tags: ["viewer"],
      security: [],
      params: SessionIdParams,
      querystring: TokenQuery,
      response: {
        302: { description: "To the DevTools front end.", content: { "text/plain": { schema: z.string() } } },
        ...errorResponses(404, 410, 502),
      },
    },
    handler: async (request, reply) => {
      const { session, keyId } = await deps.links.open(request.params.id, request.query.token, "debug");
      const running = deps.sessions.get(session.id);
      if (session.status !== "active" || !running || running.ended)
        throw new ApiError(
          410,
          "SESSION_ENDED",
          "The session is not running here: there is no page to debug.",
        );
      try {
        await deps.devtools.start();
      } catch (error) {
        request.log.error({ err: error }, "the DevTools front end could not be started");
        throw new ApiError(502, "DEVTOOLS_UNAVAILABLE", "The DevTools front end could not be started.");
      }
      const cdpToken = deps.links.token(session.id, keyId, "cdp");
      const ws = `${request.host}${sessionPath(session.id, "devtools")}?token=${cdpToken}`;
      secure(reply);
      return reply.redirect(`${FRONTEND_PATH}/inspector.html?ws=${encodeURIComponent(ws)}`, 302);
    },
  });

  app.route({
    method: "GET",
    url: `${FRONTEND_PATH}/*`,
    schema: { hide: true },
    handler: async (request, reply) => {
      const path = (request.params as { "*": string })["*"];
      const file = await deps.devtools.file(path);
      if (!file) throw new ApiError(404, "NOT_FOUND", "No such file of the DevTools front end.");
      reply.header("referrer-policy", "no-referrer");
      reply.header("x-content-type-options", "nosniff");
      reply.header("cache-control", "private, max-age=3600");
      reply.type(file.contentType);
      return reply.send(file.body);
    },
  });

  app.addHook("preClose", (done) => {
    live.closeAll();
    done();
  });
  app.addHook("onClose", async () => {
    await deps.devtools.close();
  });
  return live;
}
