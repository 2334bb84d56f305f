// `deckhand-server`: opens the store, makes sure some key can get in, and serves until SIGINT or
// SIGTERM, then closes the server and the store and returns.

import type { Writable } from "node:stream";
import { createApp } from "../app.ts";
import { DEFAULT_HOST, DEFAULT_PORT } from "../defaults.ts";
import { createLogger, defaultLogFormat } from "../logger.ts";
import { listenMetrics, type MetricsListener } from "../metrics-route.ts";
import type { SessionHandlers } from "../routes/handlers.ts";
import { createService } from "../service.ts";
import { parseOperatorKeys } from "../store/api-keys.ts";
import { openStore } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import { announceKey } from "./keys.ts";
import type { ServeOptions } from "./options.ts";

/** On the very first start, with no key anywhere, nobody could use the service: make one. */
async function ensureSomeKey(store: Store, operatorKeys: readonly string[], out: Writable): Promise<void> {
  if (operatorKeys.length > 0) return;
  if ((await store.listKeys()).some((key) => key.revokedAt === undefined)) return;
  const created = await store.createKey({ name: "first start" });
  out.write(announceKey(created));
}

function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export async function serveCommand(
  options: ServeOptions,
  env: NodeJS.ProcessEnv,
  out: Writable,
  handlers: Partial<SessionHandlers> = {},
): Promise<number> {
  const store = await openStore(options);
  try {
    const operatorKeys = parseOperatorKeys(env.DECKHAND_API_KEYS);
    await ensureSomeKey(store, operatorKeys, out);
    const settings = {
      store,
      operatorKeys,
      logger: createLogger({
        level: options.logLevel ?? "info",
        format: options.logFormat ?? defaultLogFormat(),
      }),
      ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
      ...(options.sessionIdleTimeoutMs !== undefined
        ? { sessionIdleTimeoutMs: options.sessionIdleTimeoutMs }
        : {}),
      ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
      ...(options.shutdownGraceMs !== undefined ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
      ...(options.maxSessionsPerProject !== undefined
        ? { maxSessionsPerProject: options.maxSessionsPerProject }
        : {}),
      ...(options.headersTimeoutMs !== undefined ? { headersTimeoutMs: options.headersTimeoutMs } : {}),
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      ...(options.connectionIdleTimeoutMs !== undefined
        ? { connectionIdleTimeoutMs: options.connectionIdleTimeoutMs }
        : {}),
      ...(options.maxConnectionsPerAddress !== undefined
        ? { maxConnectionsPerAddress: options.maxConnectionsPerAddress }
        : {}),
      ...(options.metricsToken !== undefined ? { metricsToken: options.metricsToken } : {}),
      ...(options.readyMaxEventLoopLagMs !== undefined
        ? { readyMaxEventLoopLagMs: options.readyMaxEventLoopLagMs }
        : {}),
    };
    // Handlers given by the caller (tests of the HTTP layer) replace the browser work; by default
    // the sessions run in the service's own browser pool.
    let advertise = async () => {};
    const app =
      Object.keys(handlers).length > 0
        ? await createApp({ ...settings, handlers })
        : await createService({
            ...settings,
            browsers: {
              ...(options.maxBrowsers !== undefined ? { maxBrowsers: options.maxBrowsers } : {}),
              ...(options.warmBrowsers !== undefined ? { warmBrowsers: options.warmBrowsers } : {}),
              ...(options.sessionsPerBrowser !== undefined
                ? { sessionsPerBrowser: options.sessionsPerBrowser }
                : {}),
              ...(options.browserArgs ? { args: options.browserArgs } : {}),
              ...(options.isolation ? { isolation: options.isolation } : {}),
            },
            cdpUrlHosts: options.cdpUrlHosts,
            modelBaseUrlHosts: options.modelBaseUrlHosts,
            ...(options.maxTabsPerSession !== undefined
              ? { maxTabsPerSession: options.maxTabsPerSession }
              : {}),
            ...(options.cdpMaxMessageBytes !== undefined
              ? { cdpMaxMessageBytes: options.cdpMaxMessageBytes }
              : {}),
            ...(options.cdpBytesPerSecond !== undefined
              ? { cdpBytesPerSecond: options.cdpBytesPerSecond }
              : {}),
            ...(options.sessionDisconnectGraceMs !== undefined
              ? { sessionDisconnectGraceMs: options.sessionDisconnectGraceMs }
              : {}),
            ...(options.nodeLeaseMs !== undefined ? { nodeLeaseMs: options.nodeLeaseMs } : {}),
            ...(options.screenshotRetentionDays !== undefined
              ? {
                  screenshots:
                    options.screenshotRetentionDays === 0
                      ? { enabled: false }
                      : { retentionMs: options.screenshotRetentionDays * 24 * 3600_000 },
                }
              : {}),
            ...(options.cluster ? { cluster: options.cluster } : {}),
          }).then((service) => {
            advertise = service.advertise;
            return service.app;
          });
    const stopped = untilStopSignal();
    const host = options.host ?? DEFAULT_HOST;
    await app.listen({ host, port: options.port ?? DEFAULT_PORT });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : options.port;
    try {
      // A cluster node checks that its advertised address reaches it before the others may use it.
      await advertise();
    } catch (error) {
      await app.close();
      throw error;
    }
    out.write(
      `deckhand-server listening on http://${host.includes(":") ? `[${host}]` : host}:${port} (${store.description})\n`,
    );
    let metrics: MetricsListener | undefined;
    try {
      if (options.metricsPort !== undefined) {
        metrics = await listenMetrics(app.deckhand.metrics, {
          host: options.metricsHost ?? DEFAULT_HOST,
          port: options.metricsPort,
        });
      }
    } catch (error) {
      await app.close();
      throw error;
    }
    if (metrics) out.write(`deckhand-server metrics on ${metrics.url}\n`);
    try {
      const signal = await stopped;
      app.log.info({ signal }, "stopping");
    } finally {
      await metrics?.close();
    }
    await app.close();
    return 0;
  } finally {
    await store.close();
  }
}
