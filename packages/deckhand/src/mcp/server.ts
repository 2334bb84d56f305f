// An MCP server of the tool definitions: each tool of TOOLS is an MCP tool with the same name,
// description and input schema. Results are what an assistant can use: page text within a token
// budget, JSON as text plus structured content, screenshots as image content; a failed operation
// or an error is a tool error (`isError: true`) whose text says why.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Deckhand } from "../deckhand.ts";
import { TOOLS, type ToolResult } from "../tools/definitions.ts";

/** The package version the MCP handshake reports. */
const VERSION = "0.1.0";

/** What a tool call gives an MCP client. */
export function toCallResult(result: ToolResult): CallToolResult {
  const { output } = result;
  if (output.kind === "image") {
    return {
      content: [
        { type: "image", data: output.base64, mimeType: output.mimeType },
        { type: "text", text: output.text },
      ],
      isError: !result.ok,
    };
  }
  const content: CallToolResult["content"] = [
    { type: "text", text: output.kind === "json" ? JSON.stringify(output.data, null, 2) : output.text },
  ];
  if (output.kind === "json" && output.text && output.text !== JSON.stringify(output.data, null, 2))
    content.unshift({ type: "text", text: output.text });
  return { content, isError: !result.ok };
}

function errorResult(error: unknown): CallToolResult {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: "text", text: `${name}: ${message}` }], isError: true };
}

/**
 * An MCP server whose tools work on the Deckhand `deckhand()` gives (started on the first call,
 * so that listing the tools starts no browser).
 */
export function createMcpServer(deckhand: () => Promise<Deckhand>): McpServer {
  const server = new McpServer({ name: "deckhand", version: VERSION });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input },
      async (input: unknown) => {
        try {
          const dh = await deckhand();
          return toCallResult(await tool.run(dh, input as never));
        } catch (error) {
          return errorResult(error);
        }
      },
    );
  }
  return server;
}
