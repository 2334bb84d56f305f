// An MCP client of Deckhand, with the official MCP SDK: it starts `deckhand mcp` over stdio (as an
// AI assistant would), lists the tools, and drives the bundled shop with them. No model needed:
// the instructions are explicit. For the service's HTTP endpoint, use
// StreamableHTTPClientTransport with `${PLATFORM_API_URL}/mcp` and the x-platform-api-key header.
//
// Run: node scripts/setup.mjs --run examples/mcp-client.ts

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { servePages } from "./support.ts";

const bin = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "packages",
  "deckhand",
  "src",
  "cli",
  "bin.ts",
);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: ["--conditions=deckhand-source", "--no-warnings", bin, "mcp"],
});
// The MCP server opens http(s) pages only (a page could talk an assistant into opening the
// machine's files: `deckhand mcp --allow-file-urls` lifts that), so the shop is served on 127.0.0.1.
const pages = await servePages();
const client = new Client({ name: "deckhand-example", version: "1.0.0" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(", ")}`);
  const say = (result: Record<string, unknown>) =>
    (result.content as { type: string; text?: string }[])
      .filter((c) => c.type === "text")
      .map((c) => c.text)
      .join("\n");
  console.log(say(await client.callTool({ name: "navigate", arguments: { url: pages.url("shop.html") } })));
  console.log(
    say(await client.callTool({ name: "act", arguments: { instruction: "check Gift wrap" } })).split("\n")[0],
  );
  const text = say(await client.callTool({ name: "text", arguments: { maxTokens: 1000 } }));
  console.log(
    text
      .split("\n")
      .filter((line) => line.includes("Gift wrap"))
      .join("\n"),
  );
} finally {
  await client.close();
  await pages.close();
}
