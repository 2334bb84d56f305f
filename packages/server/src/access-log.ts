// One access line per request, when its answer is complete (Fastify's own request logging, two
// lines per request, is turned off): method, path, status and time at info. The session page's
// static assets (step thumbnails, the DevTools front-end's files), which a viewer fetches by the
// dozen, are logged at debug.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { DOCS_PATH } from "./front-page.ts";
import { FRONTEND_PATH } from "./viewer/devtools-frontend.ts";

/** Paths of static assets a viewer's browser fetches: thumbnails, the DevTools front-end, the API reference's files. */
const ASSET = new RegExp(`^(/v1/sessions/[^/]+/view/screenshots/|${FRONTEND_PATH}/|${DOCS_PATH}/static/)`);

export function isViewerAsset(request: FastifyRequest): boolean {
  return ASSET.test(request.url);
}

export function installAccessLog(app: FastifyInstance): void {
  app.addHook("onResponse", async (request, reply) => {
    const level = isViewerAsset(request) ? "debug" : "info";
    request.log[level]({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed");
  });
}
