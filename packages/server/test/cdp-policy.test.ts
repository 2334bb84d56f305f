// The CDP proxy's allow-list as data: every command it lists exists in the protocol Chrome speaks
// (a misspelt entry would silently refuse what it meant to allow), and its parameter rules hold
// for paths a page could not produce through a real session (a link out of the session's own
// directory). The attacks themselves run against a real service in test/security/.

import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowedMethods, checkCommand, type SessionScope } from "../src/cdp-proxy/policy.ts";

const require = createRequire(import.meta.url);

function protocolMethods(): Set<string> {
  const names = new Set<string>();
  for (const file of ["browser_protocol.json", "js_protocol.json"]) {
    const protocol = require(`devtools-protocol/json/${file}`) as {
      domains: { domain: string; commands?: { name: string }[] }[];
    };
    for (const domain of protocol.domains) {
      for (const command of domain.commands ?? []) names.add(`${domain.domain}.${command.name}`);
    }
  }
  return names;
}

let dir: string;
let scope: SessionScope;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "deckhand-policy-"));
  await writeFile(join(dir, "report.pdf"), "a download");
  await symlink("/etc/passwd", join(dir, "link-out"));
  scope = {
    contextId: "CTX",
    isDefaultContext: false,
    downloadDir: dir,
    ownsTarget: async (id) => id === "MINE",
    ownsWindow: async (id) => id === 1,
    tabLimitProblem: async () => undefined,
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the CDP proxy's allow-list", () => {
  it("lists only commands that exist in the protocol", () => {
    const known = protocolMethods();
    const listed = allowedMethods().map((m) => m.method);
    expect(listed.length).toBeGreaterThan(300);
    expect(listed.filter((method) => !known.has(method))).toEqual([]);
  });

  it("takes files only from the session's own directory, following links", async () => {
    const files = (list: string[]) =>
      checkCommand("DOM.setFileInputFiles", { files: list, nodeId: 1 }, "target", scope);
    expect((await files([join(dir, "report.pdf")])).ok).toBe(true);
    for (const outside of [join(dir, "link-out"), join(dir, "..", "x"), "/etc/passwd", dir, "report.pdf"]) {
      expect((await files([outside])).ok, outside).toBe(false);
    }
  });

  it("binds a browser context, and replaces a download directory", async () => {
    const verdict = await checkCommand(
      "Browser.setDownloadBehavior",
      { behavior: "allowAndName", downloadPath: "/etc" },
      "browser",
      scope,
    );
    expect(verdict).toEqual({
      ok: true,
      params: { behavior: "allowAndName", downloadPath: dir, browserContextId: "CTX" },
    });
    const foreign = await checkCommand(
      "Browser.resetPermissions",
      { browserContextId: "OTHER" },
      "browser",
      scope,
    );
    expect(foreign.ok).toBe(false);
  });

  it("passes on the URL as it was checked", async () => {
    const verdict = await checkCommand(
      "Page.navigate",
      { url: "HTTP://Example.COM/a/../b" },
      "target",
      scope,
    );
    expect(verdict).toEqual({ ok: true, params: { url: "http://example.com/b" } });
  });
});
