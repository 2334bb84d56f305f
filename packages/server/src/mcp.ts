// POST/GET/DELETE /mcp: the library's tools (navigate, act, extract, observe, text, screenshot,
// tabs, back, forward) over MCP's streamable HTTP transport, with the official SDK.
//
// Every request carries an API key (x-platform-api-key, or Authorization: Bearer). An MCP client
// gets its own session of this service: on its first tool call a REMOTE Deckhand is started
// against this very service with the client's key, so the client's browser context, limits,
// egress rules and replay record are those of any other session of its project. The MCP session
// id is bound to the key's project: another project's key naming it gets 404, as for any session
// it does not own. The session ends when the client ends it (DELETE), after the service's idle
// timeout without a request, or when the service closes.
//
// In a cluster an MCP session lives in the memory of the node that initialised it, so its id starts
// with that node's id (`<node>.<uuid>`): any other node that receives a request naming it forwards
// the request there with the caller's identity (cluster/forward.ts), as for any session.

import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer, Deckhand } from "deckhand";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { KeyVerifier } from "./auth.ts";
import type { Cluster } from "./cluster/cluster.ts";
import { ApiError } from "./errors.ts";
import type { KeyIdentity } from "./store/store.ts";

export interface McpOptions {
  verifier: KeyVerifier;
  /** An MCP session with no request for this long is ended (ms). */
  idleTimeoutMs: number;
  /** This node's cluster: MCP sessions of other nodes are forwarded to them. */
  cluster?: Cluster;
}

function notFound(): ApiError {
  return new ApiError(404, "SESSION_NOT_FOUND", "No such MCP session for this key; initialize a new one.");
}

interface McpClient {
  id: string | undefined;
  projectId: string;
  transport: StreamableHTTPServerTransport;
  deckhand: Promise<Deckhand> | undefined;
  idle: NodeJS.Timeout | undefined;
  ended: boolean;
}

function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers["x-platform-api-key"];
  if (typeof header === "string" && header) return header;
  const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "");
  return bearer?.[1];
}

/** This service's own address, for the REMOTE Deckhand of an MCP client. */
function selfUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | null;
  if (!address) throw new ApiError(503, "SHUTTING_DOWN", "The service is not listening.");
  const host =
    address.address === "::" || address.address === "0.0.0.0"
      ? "127.0.0.1"
      : address.family === "IPv6"
        ? `[${address.address}]`
        : address.address;
  return `http://${host}:${address.port}`;
}

export function installMcp(app: FastifyInstance, options: McpOptions): void {
  const clients = new Map<string, McpClient>();

  const end = async (client: McpClient): Promise<void> => {
    if (client.ended) return;
    client.ended = true;
    if (client.idle) clearTimeout(client.idle);
    if (client.id) clients.delete(client.id);
    await client.transport.close().catch(() => undefined);
    const dh = await client.deckhand?.catch(() => undefined);
    if (!dh) return;
    // Its service session ends over HTTP; a service that is closing ends it anyway, so the wait
    // is bounded.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      dh.close().catch((error: unknown) => app.log.warn({ err: error }, "mcp: ending a session failed")),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 5_000);
      }),
    ]);
    clearTimeout(timer);
  };

  const touch = (client: McpClient): void => {
    if (client.idle) clearTimeout(client.idle);
    client.idle = setTimeout(() => void end(client), options.idleTimeoutMs);
    client.idle.unref();
  };

  const open = async (request: FastifyRequest, key: string, projectId: string): Promise<McpClient> => {
    const modelKey = request.headers["x-model-api-key"];
    const modelName = request.headers["x-model-name"];
    const client: McpClient = {
      id: undefined,
      projectId,
      deckhand: undefined,
      idle: undefined,
      ended: false,
      transport: new StreamableHTTPServerTransport({
        // In a cluster the id says which node holds the session, so that every node can route it.
        sessionIdGenerator: () =>
          options.cluster ? `${options.cluster.nodeId}.${randomUUID()}` : randomUUID(),
        onsessioninitialized: (id) => {
          client.id = id;
          clients.set(id, client);
        },
      }),
    };
    const startDeckhand = async (): Promise<Deckhand> => {
      const dh = new Deckhand({
        env: "REMOTE",
        apiUrl: selfUrl(app),
        apiKey: key,
        verbose: 0,
        disablePino: true,
        ...(typeof modelKey === "string" && modelKey
          ? {
              model: {
                modelName: typeof modelName === "string" ? modelName : "openai/gpt-4.1-mini",
                apiKey: modelKey,
              },
            }
          : typeof modelName === "string"
            ? { model: modelName }
            : {}),
      });
      await dh.init();
      if (client.ended) {
        await dh.close();
        throw new ApiError(410, "SESSION_ENDED", "The MCP session ended.");
      }
      return dh;
    };
    const server = createMcpServer(
      () => {
        client.deckhand ??= startDeckhand();
        return client.deckhand;
      },
      {
        // No model travels with MCP requests here: an instruction must be explicit.
        modelAdvice: () =>
          "This service's MCP endpoint has no model: give the tool an explicit instruction that names one " +
          'element ("click the Sign in button"), or use the HTTP API with the x-model-api-key header.',
      },
    );
    client.transport.onclose = () => void end(client);
    await server.connect(client.transport);
    return client;
  };

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    schema: { hide: true },
    handler: async (request, reply) => {
      const key = keyOf(request);
      let identity: KeyIdentity | null;
      const forwarded = request.forwarded?.identity;
      if (forwarded) {
        // Another node of the cluster checked the key; it may have been revoked since.
        identity = (await options.verifier.isLive(forwarded.keyId)) ? forwarded : null;
      } else {
        if (!key)
          throw new ApiError(
            401,
            "UNAUTHORIZED",
            "Missing API key: send it in the x-platform-api-key header.",
          );
        identity = await options.verifier.verify(key);
      }
      if (!identity)
        throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key (x-platform-api-key).");
      const sessionId = request.headers["mcp-session-id"];
      let client: McpClient | undefined;
      if (typeof sessionId === "string") {
        const cluster = options.cluster;
        const holder = sessionId.includes(".") ? sessionId.slice(0, sessionId.indexOf(".")) : undefined;
        if (cluster && holder !== undefined && holder !== cluster.nodeId && !request.forwarded) {
          const owner = await cluster.forwardable(holder);
          // Its node is gone (and the session with it): as for any session that does not exist.
          if (!owner) throw notFound();
          return cluster.forwarder.http(request, reply, owner, { identity, placed: false });
        }
        client = clients.get(sessionId);
        // Another project's session is answered as one that does not exist.
        if (!client || client.projectId !== identity.projectId) throw notFound();
      } else if (request.method === "POST" && isInitializeRequest(request.body)) {
        // An initialize is served where it lands; it carries the caller's own key.
        if (!key)
          throw new ApiError(
            401,
            "UNAUTHORIZED",
            "Missing API key: send it in the x-platform-api-key header.",
          );
        client = await open(request, key, identity.projectId);
      } else {
        throw new ApiError(
          400,
          "INVALID_ARGUMENT",
          "Start with an MCP initialize request, then send the mcp-session-id header it answers with.",
        );
      }
      touch(client);
      reply.hijack();
      await client.transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });

  app.addHook("onClose", async () => {
    await Promise.all([...clients.values()].map((c) => end(c)));
  });
}
