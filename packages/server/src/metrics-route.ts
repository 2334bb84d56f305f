// Where the metrics can be read. Never by tenants, and by nobody unless the operator says so:
//
// - a token (`DECKHAND_METRICS_TOKEN`): GET /metrics on the service's own port answers a request
//   that carries `Authorization: Bearer <token>`, and 401 any other (an API key included);
// - a port of its own (`--metrics-port`, on `--metrics-host`, loopback by default): a plain HTTP
//   server with GET /metrics only, for a scraper on the machine or a network the operator controls;
// - neither (the default): GET /metrics on the service's port is an unknown route (404), as for
//   any path the API does not have.

import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { FastifyInstance } from "fastify";
import type { ServiceMetrics } from "./metrics.ts";
import type { ErrorBody } from "./schemas/common.ts";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Answers GET /metrics on the app's port for requests with the operator's bearer token. */
const UNAUTHORIZED_MESSAGE =
  "The metrics need the operator's metrics token: send Authorization: Bearer <DECKHAND_METRICS_TOKEN>. " +
  "API keys do not open them.";

export function registerMetricsRoute(app: FastifyInstance, metrics: ServiceMetrics, token: string): void {
  const expected = digest(`Bearer ${token}`);
  app.get("/metrics", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const given = request.headers.authorization;
    if (typeof given !== "string" || !timingSafeEqual(digest(given), expected)) {
      return reply
        .status(401)
        .header("www-authenticate", 'Bearer realm="metrics"')
        .send({
          success: false,
          error: UNAUTHORIZED_MESSAGE,
          message: UNAUTHORIZED_MESSAGE,
          code: "UNAUTHORIZED",
        } satisfies ErrorBody);
    }
    const text = await metrics.text();
    return reply.header("content-type", metrics.contentType).header("cache-control", "no-store").send(text);
  });
}

export interface MetricsListener {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

/** Serves GET /metrics (and nothing else) on a port of its own. */
export async function listenMetrics(
  metrics: ServiceMetrics,
  options: { host: string; port: number },
): Promise<MetricsListener> {
  const server: Server = createServer(
    { headersTimeout: 10_000, requestTimeout: 10_000 },
    (request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (request.method !== "GET" || path !== "/metrics") {
        response
          .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
          .end("Only GET /metrics here.\n");
        return;
      }
      metrics.text().then(
        (text) =>
          response
            .writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" })
            .end(text),
        () =>
          response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics failed\n"),
      );
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
