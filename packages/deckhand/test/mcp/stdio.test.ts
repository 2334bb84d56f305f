// `deckhand mcp` over stdio, driven by the MCP SDK's own client: the tools it lists are the
// definitions', a real page is driven through a task (open, act explicitly, read the text, take a
// screenshot), failures come back as tool errors with the reason, and the browser goes when the
// client does.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type FixtureServer, processTree, startFixtureServer, waitForNoChrome } from "@deckhand/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TOOLS } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, NODE_ARGS } from "../cli/helpers.ts";

type Content = { type: string; text?: string; data?: string; mimeType?: string }[];

let site: FixtureServer;
let client: Client;
let transport: StdioClientTransport;
beforeAll(async () => {
  site = await startFixtureServer();
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [...NODE_ARGS, "mcp"],
    env: cleanEnv({ DECKHAND_CLI_STATE: "/nonexistent/deckhand-mcp-test.json" }) as Record<string, string>,
    stderr: "pipe",
  });
  client = new Client({ name: "deckhand-test", version: "1.0.0" });
  await client.connect(transport);
});
afterAll(async () => {
  await client?.close();
  await site?.close();
});

function text(content: unknown): string {
  return (content as Content)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

describe("deckhand mcp (stdio)", () => {
  it("lists the tools of the definitions, with their input schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    const act = tools.find((t) => t.name === "act")!;
    expect(act.description).toBe(TOOLS.find((t) => t.name === "act")!.description);
    expect(act.inputSchema.required).toEqual(["instruction"]);
  });

  it("lists each tool's annotations: its title, and whether it reads only, may destroy, reaches the web", async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const definition = TOOLS.find((t) => t.name === tool.name)!;
      expect(tool.annotations).toEqual({ title: definition.title, ...definition.annotations });
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.text).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(hints.act).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    expect(hints.navigate).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: true,
    });
    expect(hints.tabs).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
  });

  it("drives a page through a task", async () => {
    const opened = await client.callTool({
      name: "navigate",
      arguments: { url: site.url("explicit/widgets.html") },
    });
    expect(opened.isError).toBeFalsy();
    expect(text(opened.content)).toContain('"Preferences"');

    const typed = await client.callTool({
      name: "act",
      arguments: { instruction: "type 'Ann' into the First name field" },
    });
    expect(typed.isError).toBeFalsy();
    expect(text(typed.content)).toContain("Done without a model");

    const page = await client.callTool({ name: "text", arguments: { maxTokens: 2000 } });
    expect(text(page.content)).toContain('textbox: First name value="Ann"');

    const shot = await client.callTool({ name: "screenshot", arguments: {} });
    const image = (shot.content as Content).find((c) => c.type === "image")!;
    expect(image.mimeType).toBe("image/png");
    expect(Buffer.from(image.data!, "base64").subarray(1, 4).toString()).toBe("PNG");

    const listed = await client.callTool({ name: "observe", arguments: {} });
    expect(text(listed.content)).toContain("First name");

    // The session so far, as a script: the act is a step with a locator checked when it ran.
    const exported = await client.callTool({ name: "export", arguments: { format: "playwright-test" } });
    expect(exported.isError).toBeFalsy();
    const spec = text(exported.content);
    expect(spec).toContain('import { test } from "@playwright/test";');
    expect(spec).toMatch(/getByRole\("textbox", \{ name: "First name", exact: true \}\)\s*\.fill\("Ann"\)/);
    expect(spec).toContain("// observe: every interactive element");
  });

  it("cuts page text to the token budget and says so", async () => {
    await client.callTool({ name: "navigate", arguments: { url: site.url("explicit/sections.html") } });
    const page = await client.callTool({ name: "text", arguments: { maxTokens: 100 } });
    expect(text(page.content)).toMatch(/more lines; ask for a selector or a larger maxTokens/);
  });

  it("gives errors as tool errors with the reason", async () => {
    await client.callTool({ name: "navigate", arguments: { url: site.url("explicit/sections.html") } });
    const vague = await client.callTool({ name: "act", arguments: { instruction: "click Save" } });
    expect(vague.isError).toBe(true);
    expect(text(vague.content)).toMatch(
      /MissingLLMConfigurationError: .*2 visible elements on the page fit "Save"/,
    );
    // The way to give a model here: the server's command line and environment (the tools take none).
    expect(text(vague.content)).toContain("Start `deckhand mcp` with OPENAI_API_KEY in its environment");
    expect(text(vague.content)).not.toContain("llmClient");
    const badTab = await client.callTool({ name: "tabs", arguments: { action: "switch", index: 7 } });
    expect(badTab.isError).toBe(true);
    expect(text(badTab.content)).toContain("needs the index of an open tab");
  });

  it("refuses file: URLs (and the browser's own pages) by default, with one clear message", async () => {
    await client.callTool({ name: "navigate", arguments: { url: site.url("explicit/sections.html") } });
    for (const url of [
      "file:///etc/passwd",
      "FILE:///etc/hostname",
      "chrome://version",
      "view-source:file:///etc/passwd",
    ]) {
      const refused = await client.callTool({ name: "navigate", arguments: { url } });
      expect(refused.isError, url).toBe(true);
      const message = text(refused.content);
      expect(message, url).toMatch(
        /^navigate refused: [a-z-]+: URLs cannot be opened in this MCP server's browser/,
      );
      expect(message).not.toContain("root:");
      expect(message).not.toMatch(/Page\.navigate/);
    }
    const file = text(
      (await client.callTool({ name: "navigate", arguments: { url: "file:///etc/passwd" } })).content,
    );
    expect(file).toBe(
      "navigate refused: file: URLs cannot be opened in this MCP server's browser (only http:, https:, data: and " +
        "about:blank can: the machine's files are not the page's); start the server with deckhand mcp " +
        "--allow-file-urls to allow them.",
    );
    // The page stayed where it was.
    const page = await client.callTool({ name: "text", arguments: { maxTokens: 200 } });
    expect(text(page.content)).toContain(site.url("explicit/sections.html"));
    // The web and inline documents open as before.
    const inline = await client.callTool({
      name: "navigate",
      arguments: { url: "data:text/html,<title>Inline</title><p>hello</p>" },
    });
    expect(inline.isError, text(inline.content)).toBeFalsy();
  });

  it("ends its browser, and removes its profile, when the client goes", async () => {
    const pid = transport.pid!;
    // The browser this server launched: below its process, with a temporary profile.
    const profiles = processTree(pid)
      .map((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
        } catch {
          return [];
        }
      })
      .flatMap((args) => args.filter((a) => a.startsWith("--user-data-dir=")))
      .map((a) => a.slice("--user-data-dir=".length));
    expect(profiles.length).toBeGreaterThan(0);
    await client.close();
    for (const profile of new Set(profiles)) {
      expect(await waitForNoChrome(profile)).toEqual([]);
      expect(existsSync(profile)).toBe(false);
    }
  });
});

describe("deckhand mcp --allow-file-urls", () => {
  it("opens a local file when started with the flag, and still refuses the browser's own pages", async () => {
    const dir = mkdtempSync(join(tmpdir(), "deckhand-mcp-file-"));
    const page = join(dir, "notes.html");
    writeFileSync(page, "<title>Local notes</title><p>written on this machine</p>");
    const allowed = new Client({ name: "deckhand-test", version: "1.0.0" });
    await allowed.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...NODE_ARGS, "mcp", "--allow-file-urls"],
        env: cleanEnv({ DECKHAND_CLI_STATE: "/nonexistent/deckhand-mcp-test.json" }) as Record<
          string,
          string
        >,
        stderr: "pipe",
      }),
    );
    try {
      const opened = await allowed.callTool({
        name: "navigate",
        arguments: { url: pathToFileURL(page).href },
      });
      expect(opened.isError, text(opened.content)).toBeFalsy();
      expect(text(opened.content)).toContain('"Local notes"');
      const read = await allowed.callTool({ name: "text", arguments: {} });
      expect(text(read.content)).toContain("written on this machine");
      const internal = await allowed.callTool({ name: "navigate", arguments: { url: "chrome://version" } });
      expect(internal.isError).toBe(true);
      expect(text(internal.content)).toMatch(/^navigate refused: chrome: URLs cannot be opened/);
    } finally {
      await allowed.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
