// An MCP server of the tool definitions: each tool of TOOLS is an MCP tool with the same name,
// description, input schema and annotations (whether it only reads, may do what cannot be undone,
// reaches the open web). Results are what an assistant can use: page text within a token budget,
// JSON as text plus structured content, screenshots as image content; a failed operation or an
// error is a tool error (`isError: true`) whose text says why.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Deckhand } from "../deckhand.ts";
import { type MissingLLMConfigurationError, withModelAdvice } from "../errors.ts";
import { checkPageUrl } from "../page-url.ts";
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

/**
 * How an MCP client gets a model for an instruction that needs one. The tools take no model: it is
 * the server's to configure (`deckhand mcp --model ...` and the provider's key in its environment);
 * an explicit instruction needs none.
 */
export type McpModelAdvice = (error: MissingLLMConfigurationError) => string;

/** The advice of `deckhand mcp` (stdio), whose model comes from its command line and environment. */
export const stdioModelAdvice: McpModelAdvice = (error) =>
  error.missing === "baseURL"
    ? "Start `deckhand mcp` with --base-url and the address of the model's server."
    : `Start \`deckhand mcp\` with ${error.keyEnv ? error.keyEnv.split(", ")[0] : "the provider's key variable"} in its ` +
      "environment (and --model provider/model for another model), or give the tool an explicit instruction " +
      'that names one element ("click the Sign in button").';

function errorResult(error: unknown, advice: McpModelAdvice): CallToolResult {
  const name = error instanceof Error ? error.name : "Error";
  const message = withModelAdvice(error, advice);
  return { content: [{ type: "text", text: `${name}: ${message}` }], isError: true };
}

export interface McpServerOptions {
  /**
   * Let `navigate` open file: URLs (the machine's files). Default false: an assistant can be talked
   * into anything by a page's text, so only http:, https:, data: and about:blank are opened, as in
   * the service's sessions. `deckhand mcp --allow-file-urls` sets it.
   */
  allowFileUrls?: boolean;
  /** Said after refusing a file: URL: how to allow them, where the operator can. */
  fileUrlHint?: string;
  /** What a tool says when an instruction needs a model and there is none (default: the stdio server's advice). */
  modelAdvice?: McpModelAdvice;
}

/** A tool error that says why, in one sentence of the caller's own. */
function refusal(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * An MCP server whose tools work on the Deckhand `deckhand()` gives (started on the first call,
 * so that listing the tools starts no browser).
 */
export function createMcpServer(
  deckhand: () => Promise<Deckhand>,
  options: McpServerOptions = {},
): McpServer {
  const server = new McpServer({ name: "deckhand", version: VERSION });
  const allowFile = options.allowFileUrls === true;
  const modelAdvice = options.modelAdvice ?? stdioModelAdvice;
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        annotations: { title: tool.title, ...tool.annotations },
      },
      async (input: unknown) => {
        if (tool.name === "navigate") {
          const check = checkPageUrl((input as { url?: unknown }).url, {
            allowFile,
            where: "this MCP server's browser",
            ...(options.fileUrlHint ? { fileHint: options.fileUrlHint } : {}),
          });
          if (!check.ok) return refusal(`navigate refused: ${check.problem}.`);
          (input as { url: string }).url = check.href;
        }
        try {
          const dh = await deckhand();
          return toCallResult(await tool.run(dh, input as never));
        } catch (error) {
          return errorResult(error, modelAdvice);
        }
      },
    );
  }
  return server;
}
