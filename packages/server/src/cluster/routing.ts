// Where a request is served, decided before its route runs:
//
// - a request that says it was forwarded (the cluster headers) is checked (trust.ts) and then
//   served here, never forwarded again; one whose check fails is refused 401, and so is any such
//   request on a node that has no cluster secret;
// - a route marked `cluster: { kind: "session" }` (act, extract, observe, navigate, agentExecute,
//   end) finds the caller's session (404 and 410 as usual) and, when another live node owns it,
//   forwards the request there with the caller's identity;
// - `kind: "start"`: a resume goes to the session's owner like the above; a new session is placed
//   on a node that runs its project's browser, if one has room, then on one with a warm browser,
//   then on the one with the most free capacity (this one among equals: Cluster.placement), and a
//   node that turns out to be full is passed over for the next; 429 only when no node has room;
// - `kind: "link"` (the session page, its live view, the debugger): the signed link is checked
//   here and the request forwarded, token and all, to the owner of a running session.
//
// Every response of a cluster node says which node answered (`x-deckhand-node`) and, for a
// session's request, which node owns the session (`x-deckhand-owner`).

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { authOf } from "../auth.ts";
import { ApiError, projectAtCapacity } from "../errors.ts";
import { loadActiveSession } from "../routes/session-access.ts";
import type { Store } from "../store/store.ts";
import type { LinkPurpose } from "../viewer/links.ts";
import type { SessionLinks } from "../viewer/session-links.ts";
import type { Cluster } from "./cluster.ts";
import {
  CLUSTER_HEADER,
  CLUSTER_SIGNATURE_HEADER,
  ClusterTrustError,
  type ForwardedClaim,
  NODE_HEADER,
  OWNER_HEADER,
} from "./trust.ts";

export type ClusterRoute = { kind: "session" } | { kind: "start" } | { kind: "link"; purpose: LinkPurpose };

declare module "fastify" {
  interface FastifyRequest {
    /** Set when another node of the cluster forwarded this request (its signature checked). */
    forwarded: ForwardedClaim | null;
  }
  interface FastifyContextConfig {
    /** How a cluster node decides where this route's request is served (cluster/routing.ts). */
    cluster?: ClusterRoute;
  }
}

export function clusterUnauthorized(message: string): ApiError {
  return new ApiError(401, "CLUSTER_UNAUTHORIZED", message);
}

/** The cluster claim of a request that carries the cluster headers; null when it carries none. */
export function claimOf(
  cluster: Cluster | undefined,
  headers: Record<string, string | string[] | undefined>,
  method: string,
  url: string,
): ForwardedClaim | null {
  const header = headers[CLUSTER_HEADER];
  if (header === undefined && headers[CLUSTER_SIGNATURE_HEADER] === undefined) return null;
  if (!cluster) {
    throw clusterUnauthorized(
      "This node accepts no forwarded requests: it runs without a cluster secret (--cluster-secret).",
    );
  }
  try {
    return cluster.trust.verify(header, headers[CLUSTER_SIGNATURE_HEADER], method, url);
  } catch (error) {
    if (error instanceof ClusterTrustError)
      throw clusterUnauthorized(`Forwarded request refused: ${error.message}`);
    throw error;
  }
}

/** Before auth: who forwarded the request, if anyone. Installed on every app, cluster or not. */
export function installForwardedCheck(app: FastifyInstance, cluster: Cluster | undefined): void {
  app.decorateRequest("forwarded", null);
  app.addHook("onRequest", async (request) => {
    request.forwarded = claimOf(cluster, request.headers, request.method, request.url);
  });
  if (cluster) {
    // On the raw response, so that answers written past Fastify (event streams, the live view) say it too.
    app.addHook("onRequest", async (_request, reply) => {
      reply.raw.setHeader(NODE_HEADER, cluster.nodeId);
    });
  }
}

export interface ClusterRoutingDeps {
  store: Store;
  links: SessionLinks;
  maxSessionsPerProject: number;
}

/** The placement and forwarding of the routes marked `cluster` (see the top). */
export function installClusterRouting(
  app: FastifyInstance,
  cluster: Cluster,
  deps: ClusterRoutingDeps,
): void {
  const { store } = deps;

  const toOwner = async (request: FastifyRequest, reply: FastifyReply, id: string) => {
    const auth = authOf(request);
    const record = await loadActiveSession(store, auth, id);
    const owner = await cluster.remoteOwner(record);
    if (!owner) {
      reply.raw.setHeader(OWNER_HEADER, record.nodeId ?? cluster.nodeId);
      return undefined;
    }
    return cluster.forwarder.http(request, reply, owner, { identity: auth, placed: false });
  };

  const place = async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = authOf(request);
    // The project's quota is the cluster's: counted in the shared table (and again, under the
    // admission lock, by the node that takes the session).
    if ((await store.countActiveSessions({ projectId: auth.projectId })) >= deps.maxSessionsPerProject)
      throw projectAtCapacity(deps.maxSessionsPerProject);
    for (const node of await cluster.placement(auth.projectId)) {
      if (node.id === cluster.nodeId) {
        reply.raw.setHeader(OWNER_HEADER, cluster.nodeId);
        return undefined;
      }
      const target = { id: node.id, advertiseUrl: node.advertiseUrl! };
      const answer = await cluster.forwarder.exchange(request, target, { identity: auth, placed: true });
      // Unreachable, full or stopping since the table was read: the next node.
      if (!answer) continue;
      const code = answer.status === 429 || answer.status === 503 ? codeOf(answer.body) : undefined;
      if (code === "AT_CAPACITY" || code === "SHUTTING_DOWN") continue;
      reply.code(answer.status);
      for (const [name, value] of Object.entries(answer.headers)) {
        if (
          value === undefined ||
          ["connection", "keep-alive", "transfer-encoding", "content-length", NODE_HEADER].includes(name)
        )
          continue;
        reply.header(name, value);
      }
      const owner = answer.headers[NODE_HEADER];
      reply.header(OWNER_HEADER, typeof owner === "string" ? owner : node.id);
      return reply.send(answer.body);
    }
    throw new ApiError(
      429,
      "AT_CAPACITY",
      "Every node of the service is running its maximum of sessions. End a session, or retry later.",
    );
  };

  app.addHook("preValidation", async (request, reply) => {
    const route = request.routeOptions.config?.cluster;
    // A forwarded request is served here, whatever it is.
    if (!route || request.forwarded) return;
    const params = request.params as { id?: string };
    if (route.kind === "session") return toOwner(request, reply, params.id ?? "");
    if (route.kind === "start") {
      const body = (request.body ?? {}) as { sessionId?: unknown; browserbaseSessionID?: unknown };
      const resume = body.sessionId ?? body.browserbaseSessionID;
      if (typeof resume === "string") return toOwner(request, reply, resume);
      return place(request, reply);
    }
    // A signed link: checked here; a bad one is left to the route, which answers it as usual.
    const token = (request.query as { token?: unknown }).token;
    const opened = await deps.links.open(params.id ?? "", token, route.purpose).catch(() => undefined);
    if (opened?.session.status !== "active") return undefined;
    const owner = await cluster.remoteOwner(opened.session);
    if (!owner) {
      reply.raw.setHeader(OWNER_HEADER, opened.session.nodeId ?? cluster.nodeId);
      return undefined;
    }
    return cluster.forwarder.http(request, reply, owner, { placed: false });
  });
}

function codeOf(body: Buffer): string | undefined {
  try {
    const code = (JSON.parse(body.toString()) as { code?: unknown }).code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}
