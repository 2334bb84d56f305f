// A real MCP server on loopback, built with the official SDK (Streamable HTTP, stateless): one
// tool, `stockOf`, that answers how many of a product are in stock and remembers its calls.

import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface TestMcpServer {
  url: string;
  calls: { product: string }[];
  close(): Promise<void>;
}

export async function startMcpServer(): Promise<TestMcpServer> {
  const calls: { product: string }[] = [];
  const sockets = new Set<Socket>();
  const http: Server = createServer(async (req, res) => {
    // Stateless: a server and a transport per request.
    const server = new McpServer({ name: "stock", version: "1.0.0" });
    server.registerTool(
      "stockOf",
      { description: "How many of a product are in stock", inputSchema: { product: z.string() } },
      async ({ product }) => {
        calls.push({ product });
        return { content: [{ type: "text", text: `${product}: 12 in stock` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
  });
  http.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
