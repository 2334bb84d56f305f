// One node of a test cluster, in the test's process: the service on a real PostgreSQL schema, on
// a free loopback port that it advertises (checked, as a node does at start), with the test's
// cluster secret. And the wait for what placement reads of the nodes' warm browsers.

import pg from "pg";
import { createLogger } from "../src/logger.ts";
import { createService, type Service, type ServiceOptions } from "../src/service.ts";
import { PostgresStore } from "../src/store/postgres-store.ts";
import type { Store } from "../src/store/store.ts";
import { eventually } from "./live-helpers.ts";
import { freePort } from "./nginx.ts";

export interface ClusterNode {
  service: Service;
  store: PostgresStore;
  url: string;
  id: string;
}

export async function startClusterNode(
  database: { url: string; schema: string; secret: string },
  options: Omit<ServiceOptions, "store" | "logger" | "cluster">,
): Promise<ClusterNode> {
  const store = await PostgresStore.open({ url: database.url, schema: database.schema });
  const port = await freePort();
  const service = await createService({
    ...options,
    store,
    logger: createLogger({ level: "warn" }),
    cluster: { advertiseUrl: `http://127.0.0.1:${port}`, secret: database.secret },
  });
  await service.app.listen({ host: "127.0.0.1", port });
  await service.advertise();
  return { service, store, url: `http://127.0.0.1:${port}`, id: service.sessions.nodeId };
}

/** A session start sent straight to `node`: its status, error code, session id and the owner it names. */
export async function startOn(
  node: ClusterNode,
  key: { key: string },
): Promise<{ status: number; code?: string; id?: string; owner: string | null }> {
  const response = await fetch(`${node.url}/v1/sessions/start`, {
    method: "POST",
    headers: { "x-platform-api-key": key.key, "content-type": "application/json" },
    body: "{}",
  });
  const body = (await response.json()) as { code?: string; data?: { sessionId: string } };
  return {
    status: response.status,
    ...(body.code !== undefined ? { code: body.code } : {}),
    ...(body.data ? { id: body.data.sessionId } : {}),
    owner: response.headers.get("x-deckhand-owner"),
  };
}

/**
 * Until each of these cluster nodes has published in the store that it can start a new project's
 * session without a browser launch (its warm browser is up), and, given a project, none of them
 * runs a session of that project or keeps a browser of it (one lingers after its last session):
 * placement reads both (a project's sessions go where its browser is), so a test that expects the
 * receiving node to take a start waits for them first.
 */
export async function untilWarmPublished(
  store: Store,
  nodeIds: readonly string[],
  projectId?: string,
): Promise<void> {
  await eventually(
    async () => {
      const nodes = await store.listLiveNodes(projectId);
      return nodeIds.every((id) => {
        const node = nodes.find((n) => n.id === id);
        if ((node?.ready?.anyProject ?? 0) === 0) return false;
        if (projectId === undefined) return true;
        return (node?.projectSessions ?? 0) === 0 && (node?.ready?.projects[projectId] ?? 0) === 0;
      });
    },
    30_000,
    projectId === undefined
      ? "the nodes' warm browsers, published"
      : "the nodes' warm browsers, published, and no session or browser of the project on any",
  );
}

/** Stops the nodes (their sessions end, their browsers close) and drops the cluster's schema. */
export async function stopCluster(
  database: { url: string; schema: string },
  nodes: readonly (ClusterNode | undefined)[],
): Promise<void> {
  for (const node of nodes) {
    await node?.service.app.close();
    await node?.store.close();
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${database.schema} CASCADE`);
  await client.end();
}
