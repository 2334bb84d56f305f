// `integrations`: the tools of MCP servers, given as connected MCP clients (the official SDK's
// `Client`, or anything with listTools and callTool) or as server URLs, which the run connects to
// with the official SDK (Streamable HTTP) and disconnects from when it ends.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { dynamicTool, jsonSchema, type ToolSet } from "ai";
import { ServiceError, ServiceInvalidArgumentError } from "../errors.ts";
import type { AgentIntegration, McpClientLike } from "./types.ts";

function isClient(value: unknown): value is McpClientLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as McpClientLike).listTools === "function" &&
    typeof (value as McpClientLike).callTool === "function"
  );
}

function urlOf(integration: string | URL): URL {
  try {
    const url = new URL(String(integration));
    if (url.protocol === "http:" || url.protocol === "https:") return url;
  } catch {
    // below
  }
  throw new ServiceInvalidArgumentError(
    `integrations: ${JSON.stringify(String(integration))} is not a URL of an MCP server (http or https).`,
  );
}

export interface McpTools {
  tools: ToolSet;
  /** Disconnects from the servers the run connected to itself (clients given connected stay). */
  close(): Promise<void>;
}

/** The AI SDK tools of every integration (a name already taken keeps its first owner). */
export async function mcpTools(
  integrations: AgentIntegration[] | undefined,
  signal: AbortSignal,
): Promise<McpTools> {
  const tools: ToolSet = {};
  const opened: Client[] = [];
  const close = async () => {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  };
  if (integrations !== undefined && !Array.isArray(integrations))
    throw new ServiceInvalidArgumentError("integrations must be an array of MCP clients or MCP server URLs.");
  try {
    for (const integration of integrations ?? []) {
      let client: McpClientLike;
      if (isClient(integration)) client = integration;
      else if (typeof integration === "string" || integration instanceof URL) {
        const url = urlOf(integration);
        // Loaded on first use only, as the provider packages are.
        const [{ Client: McpClient }, { StreamableHTTPClientTransport }] = await Promise.all([
          import("@modelcontextprotocol/sdk/client/index.js"),
          import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
        ]);
        const connected = new McpClient({ name: "deckhand-agent", version: "1" });
        try {
          await connected.connect(new StreamableHTTPClientTransport(url));
        } catch (error) {
          throw new ServiceError(
            `integrations: could not connect to the MCP server at ${url.origin}${url.pathname}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        opened.push(connected);
        client = connected;
      } else {
        throw new ServiceInvalidArgumentError(
          "integrations takes MCP clients (with listTools and callTool) or MCP server URLs.",
        );
      }
      signal.throwIfAborted();
      const { tools: listed } = await client.listTools();
      for (const t of listed) {
        if (tools[t.name]) continue;
        tools[t.name] = dynamicTool({
          description: t.description ?? t.name,
          inputSchema: jsonSchema((t.inputSchema ?? { type: "object" }) as Record<string, unknown>),
          execute: async (input) =>
            client.callTool({ name: t.name, arguments: (input ?? {}) as Record<string, unknown> }),
        });
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}
