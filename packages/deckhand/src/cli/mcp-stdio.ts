// `deckhand mcp`: the tools over stdio, for an assistant that starts Deckhand as a subprocess.
// One browser for the client (started on its first tool call), closed when the client goes.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Deckhand } from "../deckhand.ts";
import { createMcpServer, type McpServerOptions } from "../mcp/server.ts";
import type { CommonOptions } from "./args.ts";
import { type OpenedSession, openSession } from "./session.ts";

export async function serveStdio(common: CommonOptions, options: McpServerOptions = {}): Promise<void> {
  let opening: Promise<OpenedSession> | undefined;
  const deckhand = async (): Promise<Deckhand> => {
    opening ??= openSession(common, undefined);
    return (await opening).dh;
  };
  const server = createMcpServer(deckhand, {
    fileUrlHint: "start the server with deckhand mcp --allow-file-urls to allow them",
    ...options,
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  if (opening) await (await opening.catch(() => undefined))?.done().catch(() => undefined);
}
