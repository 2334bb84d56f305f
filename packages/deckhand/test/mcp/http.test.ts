// The service's /mcp endpoint (streamable HTTP), driven by the MCP SDK's own client: the API key
// is required, a client drives a real page through a task in a session of its own, two clients at
// once cannot see each other's pages (nor reach each other's MCP session with their own key), and
// a client's session ends when the client goes.

import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Deckhand, TOOLS } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.ts";

type Content = { type: string; text?: string; data?: string; mimeType?: string }[];

function text(content: unknown): string {
  return (content as Content)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

let service: TestService;
let site: FixtureServer;
const opened: { client: Client; transport: StreamableHTTPClientTransport }[] = [];

async function connect(key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
    requestInit: { headers: { "x-platform-api-key": key } },
  });
  const client = new Client({ name: "deckhand-http-test", version: "1.0.0" });
  await client.connect(transport);
  opened.push({ client, transport });
  return { client, transport };
}

const activeSessions = () => service.service.app.deckhand.store.countActiveSessions();

beforeAll(async () => {
  [service, site] = await Promise.all([startTestService(), startFixtureServer()]);
});
afterAll(async () => {
  for (const { client } of opened) await client.close().catch(() => undefined);
  await site?.close();
  await service?.close();
});

describe("/mcp on the service", () => {
  it("refuses a request without a valid API key", async () => {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify(initialize),
    });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers: { ...headers, "x-platform-api-key": "dh_not_a_key_0123456789" },
      body: JSON.stringify(initialize),
    });
    expect(wrong.status).toBe(401);
  });

  it("lists the tools and drives a page through a task", async () => {
    const { client } = await connect(service.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    // Each with its annotations, as the stdio server lists them.
    for (const tool of tools) {
      const definition = TOOLS.find((t) => t.name === tool.name)!;
      expect(tool.annotations).toEqual({ title: definition.title, ...definition.annotations });
    }
    expect(tools.find((t) => t.name === "screenshot")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "act")?.annotations?.destructiveHint).toBe(true);
    const nav = await client.callTool({
      name: "navigate",
      arguments: { url: site.url("explicit/login.html") },
    });
    expect(nav.isError, text(nav.content)).toBeFalsy();
    const acted = await client.callTool({
      name: "act",
      arguments: {
        instruction: "type %email% into the Email field",
        variables: { email: "mcp.secret@example.com" },
      },
    });
    expect(acted.isError, text(acted.content)).toBeFalsy();
    expect(text(acted.content)).not.toContain("mcp.secret@example.com");
    const page = await client.callTool({ name: "text", arguments: {} });
    expect(text(page.content)).toMatch(/textbox: Email value="?%email%"?/);
    expect(text(page.content)).not.toContain("mcp.secret@example.com");
    const shot = await client.callTool({ name: "screenshot", arguments: {} });
    expect((shot.content as Content).some((c) => c.type === "image" && c.mimeType === "image/png")).toBe(
      true,
    );
    const vague = await client.callTool({ name: "act", arguments: { instruction: "log in" } });
    expect(vague.isError).toBe(true);
  });

  it("keeps two clients apart: neither sees the other's pages, nor reaches its MCP session", async () => {
    const a = await connect(service.apiKey);
    const b = await connect(service.otherApiKey);
    await a.client.callTool({ name: "navigate", arguments: { url: site.url("explicit/widgets.html") } });
    await a.client.callTool({
      name: "act",
      arguments: { instruction: "type 'only-a' into the First name field" },
    });
    await b.client.callTool({ name: "navigate", arguments: { url: site.url("explicit/sections.html") } });

    const aTabs = text((await a.client.callTool({ name: "tabs", arguments: {} })).content);
    const bTabs = text((await b.client.callTool({ name: "tabs", arguments: {} })).content);
    expect(aTabs).toContain("widgets.html");
    expect(aTabs).not.toContain("sections.html");
    expect(bTabs).toContain("sections.html");
    expect(bTabs).not.toContain("widgets.html");
    expect(text((await b.client.callTool({ name: "text", arguments: {} })).content)).not.toContain("only-a");

    // B's key with A's MCP session id: as if it did not exist.
    const stolen = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-platform-api-key": service.otherApiKey,
        "mcp-session-id": a.transport.sessionId!,
        "mcp-protocol-version": "2025-03-26",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "text", arguments: {} },
      }),
    });
    expect(stolen.status).toBe(404);
    expect(await stolen.text()).not.toContain("only-a");
  });

  it("refuses file: URLs with one clear message, as the service's URL policy does", async () => {
    const { client } = await connect(service.apiKey);
    await client.callTool({ name: "navigate", arguments: { url: site.url("explicit/login.html") } });
    const refused = await client.callTool({ name: "navigate", arguments: { url: "file:///etc/passwd" } });
    expect(refused.isError).toBe(true);
    const message = text(refused.content);
    expect(message).toMatch(/^navigate refused: file: URLs cannot be opened in this MCP server's browser/);
    // Nothing the operator of a service could be asked for, no relay's name twice, no file content.
    expect(message).not.toContain("--allow-file-urls");
    expect(message).not.toMatch(/Page\.navigate/);
    expect(message).not.toContain("root:");

    // The page API of a REMOTE client, refused by the CDP proxy itself: the method is named once.
    const dh = new Deckhand({
      env: "REMOTE",
      apiUrl: service.url,
      apiKey: service.apiKey,
      verbose: 0,
      disablePino: true,
    });
    await dh.init();
    try {
      const error = await dh.page.goto("file:///etc/passwd").then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/^Page\.navigate: `url`: file: URLs cannot be opened in a session/);
      expect(error?.message).not.toContain("Page.navigate: Page.navigate");
    } finally {
      await dh.close();
    }
  });

  it("ends the client's session when the client goes", async () => {
    const { client, transport } = await connect(service.apiKey);
    await client.callTool({ name: "navigate", arguments: { url: site.url("explicit/login.html") } });
    const before = await activeSessions();
    await transport.terminateSession();
    await client.close();
    // Waiting ends as soon as the session is gone; only a stall reaches the limit.
    const deadline = Date.now() + 60_000;
    let now = await activeSessions();
    while (now >= before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      now = await activeSessions();
    }
    expect(now).toBe(before - 1);
  });
});
