// Attacks through a session's own CDP proxy, by a client holding one valid API key: reading the
// server's files, opening the browser's own pages, writing downloads anywhere, reaching into a
// sibling session's context and windows, and commands nobody thought about. Each must fail, and
// the bystanders (a sibling session of the same project in the same browser, and a session of
// another project) must be untouched.

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";
import { type RawCdpClient, rawCdpClient, sessionTexts } from "./cdp-attacker.ts";

let svc: LiveService;
let fx: Fixtures;
/** The attacker's session, a sibling of the same project (same browser), and another project's. */
let mine: string;
let sibling: string;
let bystander: string;
let attacker: RawCdpClient;
/** The attacker's page, attached. */
let page: { targetId: string; session: string };
/** A file only the server can read, and its content. */
let secretPath: string;
let secret: string;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  // The content is what must never show; the name may (in an error page naming the refused URL).
  secret = `server-only-${randomBytes(8).toString("hex")}`;
  secretPath = join(tmpdir(), `deckhand-secret-file-${randomBytes(4).toString("hex")}.txt`);
  await writeFile(secretPath, secret);
  fx.site.route("/download", (_req, res) => {
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-disposition": 'attachment; filename="tenant-file.txt"',
    });
    res.end("downloaded by the tenant");
  });
  [mine, sibling] = [await svc.start(), await svc.start()];
  bystander = await svc.start({}, { key: svc.otherKey.key });
  await ok(await svc.op(mine, "navigate", { url: fx.site.url("form.html") }));
  await ok(await svc.op(sibling, "navigate", { url: fx.site.url("index.html") }));
  await ok(
    await svc.op(
      bystander,
      "navigate",
      { url: fx.site.url("set-cookie?name=bystander&value=kept") },
      {
        key: svc.otherKey.key,
      },
    ),
  );
  attacker = await rawCdpClient(svc, mine, svc.key.key);
  const [first] = await attacker.pages();
  page = { targetId: first!.targetId, session: await attacker.attach(first!.targetId) };
});

afterAll(async () => {
  attacker?.close();
  await rm(secretPath, { force: true });
  await svc?.close();
  await fx?.close();
});

/** No page of any session shows the secret file, and no tab is on a file:, chrome: or view-source: URL. */
async function nothingLeaked(): Promise<void> {
  for (const id of [mine, sibling]) {
    for (const text of await sessionTexts(svc, id)) {
      expect(text).not.toContain(secret);
      expect(text).not.toMatch(/^(file|chrome|view-source|devtools):/);
    }
  }
  const live = svc.service.sessions.get(mine)!;
  const { targetInfos } = await live.cdp.browser.connection.root.send("Target.getTargets");
  for (const target of targetInfos) expect(target.url).not.toMatch(/^(file|chrome|view-source|devtools):/);
}

describe("URLs: only http, https, data: and about:blank, however they are asked for", () => {
  it("refuses file: through Page.navigate, Target.createTarget and Network.loadNetworkResource", async () => {
    const { frameTree } = await attacker.call<{ frameTree: { frame: { id: string } } }>(
      "Page.getFrameTree",
      {},
      page.session,
    );
    const attempts = [
      attacker.send("Page.navigate", { url: "file:///etc/hostname" }, page.session),
      attacker.send("Page.navigate", { url: `file://${secretPath}` }, page.session),
      attacker.send("Page.navigate", { url: ` FILE://${secretPath}` }, page.session),
      attacker.send(
        "Page.navigate",
        { url: `file://localhost${secretPath}`, frameId: frameTree.frame.id },
        page.session,
      ),
      attacker.send("Target.createTarget", { url: "file:///etc/hostname" }),
      attacker.send("Target.createTarget", { url: `file://${secretPath}`, newWindow: true }),
      attacker.send(
        "Network.loadNetworkResource",
        {
          frameId: frameTree.frame.id,
          url: `file://${secretPath}`,
          options: { disableCache: true, includeCredentials: false },
        },
        page.session,
      ),
    ];
    for (const reply of await Promise.all(attempts)) {
      expect(reply.error?.message).toMatch(/file: URLs cannot be opened in a session/);
      expect(JSON.stringify(reply)).not.toContain(secret);
    }
    expect((await attacker.pages()).map((p) => p.url)).toEqual([fx.site.url("form.html")]);
    await nothingLeaked();
  });

  it("refuses the browser's own pages and every other scheme, through CDP and the HTTP API", async () => {
    const urls = [
      "chrome://version",
      "chrome://history",
      "chrome://crash",
      "chrome://settings",
      "about:history",
      "about:version",
      `view-source:${fx.site.url("form.html")}`,
      "javascript:document.title='owned'",
      `blob:${fx.site.origin}/0d6a1c9b-8f1e-4c1a-9d1e-000000000000`,
      `filesystem:${fx.site.origin}/temporary/x`,
      "devtools://devtools/bundled/inspector.html",
      "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x.html",
      "ws://127.0.0.1:1/",
    ];
    for (const url of urls) {
      const navigate = await attacker.send("Page.navigate", { url }, page.session);
      expect(navigate.error?.message, url).toMatch(/URLs cannot be opened in a session/);
      const create = await attacker.send("Target.createTarget", { url });
      expect(create.error?.message, url).toMatch(/URLs cannot be opened in a session/);
      const http = await svc.op(mine, "navigate", { url });
      expect(http.status, url).toBe(400);
      expect((await http.json()).error).toContain("body field `url`");
    }
    // What is allowed still works, through both.
    const data = await attacker.call<{ frameId: string }>(
      "Page.navigate",
      { url: "data:text/html,<title>inline</title><p>an inline document</p>" },
      page.session,
    );
    expect(data.frameId).toBeTypeOf("string");
    await ok(await svc.op(mine, "navigate", { url: "about:blank" }));
    await ok(await svc.op(mine, "navigate", { url: fx.site.url("form.html") }));
    // The browser is whole: nothing crashed it, and the bystanders answer.
    await ok(await svc.op(sibling, "extract", {}));
    await ok(await svc.op(bystander, "extract", {}, { key: svc.otherKey.key }));
    await nothingLeaked();
  });

  it("a page cannot take itself (or a tab it opens) to file:, chrome: or view-source:", async () => {
    await attacker.call("Page.navigate", { url: fx.site.url("form.html") }, page.session);
    await eventually(async () => (await sessionTexts(svc, mine)).some((t) => t.includes("Username")), 5000);
    const fileUrl = `file://${secretPath}`;
    const script = `(() => {
      const tries = [];
      const attempt = (what, fn) => { try { fn(); tries.push(what); } catch (e) { tries.push(what + ": " + e.message); } };
      attempt("window.open file", () => window.open(${JSON.stringify(fileUrl)}));
      attempt("window.open chrome", () => window.open("chrome://version"));
      attempt("window.open view-source", () => window.open("view-source:" + location.href));
      attempt("iframe", () => { const f = document.createElement("iframe"); f.src = ${JSON.stringify(fileUrl)}; document.body.append(f); });
      attempt("link", () => { const a = document.createElement("a"); a.href = ${JSON.stringify(fileUrl)}; a.target = "_self"; document.body.append(a); a.click(); });
      fetch(${JSON.stringify(fileUrl)}).then((r) => r.text()).then((t) => { document.title = t; }, () => {});
      setTimeout(() => { location.href = ${JSON.stringify(fileUrl)}; }, 50);
      return tries.join("; ");
    })()`;
    await attacker.call("Runtime.evaluate", { expression: script }, page.session);
    // A server-side redirect to file: is the browser's own navigation: Chrome refuses it too.
    const redirected = await svc.op(mine, "navigate", {
      url: fx.site.url(`redirect?to=${encodeURIComponent(fileUrl)}`),
    });
    expect(redirected.status).not.toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await nothingLeaked();
    // Tabs the page opened are closed again; the attacker's page is as it was.
    for (const tab of await attacker.pages()) {
      if (tab.targetId !== page.targetId)
        await attacker.call("Target.closeTarget", { targetId: tab.targetId });
    }
  });

  it("refuses to rewrite an intercepted request to file:", async () => {
    await attacker.call("Fetch.enable", { patterns: [{ urlPattern: "*list.html*" }] }, page.session);
    const navigation = attacker.send("Page.navigate", { url: fx.site.url("list.html") }, page.session);
    await eventually(
      () => attacker.events.some((e) => e.method === "Fetch.requestPaused"),
      5000,
      "the paused request",
    );
    const paused = attacker.events.find((e) => e.method === "Fetch.requestPaused")!;
    const requestId = paused.params.requestId as string;
    const rewrite = await attacker.send(
      "Fetch.continueRequest",
      { requestId, url: `file://${secretPath}` },
      page.session,
    );
    expect(rewrite.error?.message).toMatch(/file: URLs cannot be opened/);
    await attacker.call("Fetch.continueRequest", { requestId }, page.session);
    await navigation;
    await attacker.call("Fetch.disable", {}, page.session);
    await nothingLeaked();
  });
});

describe("files and downloads", () => {
  it("takes no file from the server's disk into a page (file inputs, drag and drop)", async () => {
    await attacker.call("Page.navigate", { url: fx.site.url("upload.html") }, page.session);
    await eventually(async () => (await sessionTexts(svc, mine)).some((t) => t.includes("upload")), 5000);
    const { root } = await attacker.call<{ root: { nodeId: number } }>("DOM.getDocument", {}, page.session);
    const { nodeId } = await attacker.call<{ nodeId: number }>(
      "DOM.querySelector",
      { nodeId: root.nodeId, selector: "input[type=file]" },
      page.session,
    );
    for (const files of [["/etc/passwd"], [secretPath], ["relative/path"], [`${tmpdir()}/../etc/passwd`]]) {
      const set = await attacker.send("DOM.setFileInputFiles", { files, nodeId }, page.session);
      expect(set.error?.message).toMatch(/is not a file of this session/);
    }
    const drag = await attacker.send(
      "Input.dispatchDragEvent",
      { type: "dragEnter", x: 10, y: 10, data: { items: [], files: [secretPath], dragOperationsMask: 1 } },
      page.session,
    );
    expect(drag.error?.message).toMatch(/is not a file of this session/);
    const names = await attacker.call<{ result: { value: string } }>(
      "Runtime.evaluate",
      { expression: "[...document.querySelectorAll('input[type=file]')].map((i) => i.files.length).join()" },
      page.session,
    );
    expect(names.result.value).not.toMatch(/[1-9]/);
  });

  it("puts downloads in the session's own directory whatever directory is named, and removes it at the end", async () => {
    const id = await svc.start();
    const live = svc.service.sessions.get(id)!;
    const client = await rawCdpClient(svc, id, svc.key.key);
    const elsewhere = await mkdtemp(join(tmpdir(), "deckhand-attacker-dir-"));
    try {
      const [tab] = await client.pages();
      const tabSession = await client.attach(tab!.targetId);
      // Both ways of saying where downloads go are accepted, with the directory replaced.
      await client.call("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: elsewhere });
      await client.call(
        "Page.setDownloadBehavior",
        { behavior: "allow", downloadPath: elsewhere },
        tabSession,
      );
      // And naming another context is refused.
      const foreign = await client.send("Browser.setDownloadBehavior", {
        behavior: "allow",
        downloadPath: elsewhere,
        browserContextId: svc.service.sessions.get(sibling)!.cdp.contextId,
      });
      expect(foreign.error?.message).toMatch(/names a browser context that is not this session's/);
      // The page is loaded (the HTTP navigate waits for it) before its link is clicked.
      await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
      await client.call(
        "Runtime.evaluate",
        {
          expression: `(() => { const a = document.createElement("a"); a.href = ${JSON.stringify(fx.site.url("download"))}; a.download = ""; document.body.append(a); a.click(); })()`,
        },
        tabSession,
      );
      await eventually(
        async () => (await readdir(live.downloadDir)).includes("tenant-file.txt"),
        10_000,
        "the download",
      );
      expect(await readdir(elsewhere)).toEqual([]);
    } finally {
      client.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
    await ok(await svc.op(id, "end"));
    expect(existsSync(live.downloadDir)).toBe(false);
  });
});

describe("Browser-domain commands are held to the caller's own context and windows", () => {
  it("refuses permissions, download settings and cookies of another context", async () => {
    const other = svc.service.sessions.get(sibling)!;
    const otherContext = other.cdp.contextId!;
    const origin = fx.site.origin;
    const permissionState = async (id: string) =>
      (await svc.service.sessions
        .get(id)!
        .dh.page.evaluate(
          "navigator.permissions.query({ name: 'geolocation' }).then((s) => s.state)",
        )) as string;
    const before = await permissionState(sibling);
    const attempts = [
      attacker.send("Browser.grantPermissions", {
        permissions: ["geolocation"],
        origin,
        browserContextId: otherContext,
      }),
      attacker.send("Browser.resetPermissions", { browserContextId: otherContext }),
      attacker.send("Browser.setPermission", {
        permission: { name: "geolocation" },
        setting: "granted",
        origin,
        browserContextId: otherContext,
      }),
      attacker.send("Browser.cancelDownload", { guid: "x", browserContextId: otherContext }),
      attacker.send("Storage.getCookies", { browserContextId: otherContext }),
      attacker.send("Storage.clearCookies", { browserContextId: otherContext }),
      attacker.send("Target.createTarget", { url: "about:blank", browserContextId: otherContext }),
    ];
    for (const reply of await Promise.all(attempts)) {
      expect(reply.error?.message).toMatch(/names a browser context that is not this session's/);
    }
    expect(await permissionState(sibling)).toBe(before);
    // Without an id they act on the caller's own context only.
    await attacker.call("Browser.grantPermissions", { permissions: ["geolocation"], origin });
    expect(await permissionState(mine)).toBe("granted");
    expect(await permissionState(sibling)).toBe(before);
    await attacker.call("Browser.resetPermissions", {});
  });

  it("refuses another page's window, and leaves its bounds as they were", async () => {
    const other = svc.service.sessions.get(sibling)!;
    const root = other.cdp.browser.connection.root;
    const { windowId: theirs, bounds: theirBounds } = await root.send("Browser.getWindowForTarget", {
      targetId: other.dh.page.targetId,
    });
    const { windowId: own } = await attacker.call<{ windowId: number }>("Browser.getWindowForTarget", {
      targetId: page.targetId,
    });
    expect(own).not.toBe(theirs);
    const attempts = [
      attacker.send("Browser.setWindowBounds", { windowId: theirs, bounds: { width: 333, height: 222 } }),
      attacker.send("Browser.getWindowBounds", { windowId: theirs }),
      attacker.send("Browser.setContentsSize", { windowId: theirs, width: 100, height: 100 }),
      attacker.send("Browser.getWindowForTarget", { targetId: other.dh.page.targetId }),
    ];
    for (const reply of await Promise.all(attempts))
      expect(reply.error?.message).toMatch(/not a window of this session|No target/);
    expect((await root.send("Browser.getWindowBounds", { windowId: theirs })).bounds).toEqual(theirBounds);
    // Its own window it may move.
    await attacker.call("Browser.getWindowBounds", { windowId: own });
  });
});

describe("sizes the shared browser would allocate for", () => {
  it("refuses a giant viewport, scale, window or screenshot, and takes an ordinary one", async () => {
    const { windowId } = await attacker.call<{ windowId: number }>("Browser.getWindowForTarget", {
      targetId: page.targetId,
    });
    const huge = [
      [
        "Emulation.setDeviceMetricsOverride",
        { width: 100_000, height: 100_000, deviceScaleFactor: 1, mobile: false },
      ],
      [
        "Emulation.setDeviceMetricsOverride",
        { width: 800, height: 600, deviceScaleFactor: 50, mobile: false },
      ],
      ["Emulation.setVisibleSize", { width: 50_000, height: 50_000 }],
      ["Page.captureScreenshot", { clip: { x: 0, y: 0, width: 40_000, height: 40_000, scale: 1 } }],
      ["Page.captureScreenshot", { clip: { x: 0, y: 0, width: 100, height: 100, scale: 30 } }],
    ] as const;
    for (const [method, params] of huge) {
      const reply = await attacker.send(method, params, page.session);
      expect(reply.error?.message, method).toMatch(/must be a number from 0 to/);
    }
    const window = await attacker.send("Browser.setWindowBounds", {
      windowId,
      bounds: { width: 90_000, height: 90_000 },
    });
    expect(window.error?.message).toMatch(/must be a number from 0 to 4096/);
    // The page kept its size, and an ordinary override and screenshot work.
    const inner = await attacker.call<{ result: { value: number } }>(
      "Runtime.evaluate",
      { expression: "innerWidth" },
      page.session,
    );
    expect(inner.result.value).toBeLessThanOrEqual(4096);
    await attacker.call(
      "Emulation.setDeviceMetricsOverride",
      { width: 640, height: 480, deviceScaleFactor: 1, mobile: false },
      page.session,
    );
    const shot = await attacker.call<{ data: string }>(
      "Page.captureScreenshot",
      { clip: { x: 0, y: 0, width: 100, height: 100, scale: 1 } },
      page.session,
    );
    expect(shot.data.length).toBeGreaterThan(100);
    await attacker.call("Emulation.clearDeviceMetricsOverride", {}, page.session);
  });
});

describe("a command nobody listed is refused", () => {
  it("answers a CDP error for browser-wide, dangerous and unknown commands, on any session", async () => {
    const onRoot = [
      ["SystemInfo.getInfo", {}],
      ["SystemInfo.getProcessInfo", {}],
      ["Browser.getBrowserCommandLine", {}],
      ["Browser.crash", {}],
      ["Browser.crashGpuProcess", {}],
      ["Browser.close", {}],
      ["Browser.executeBrowserCommand", { commandId: "openTabSearch" }],
      ["Tracing.start", {}],
      ["Extensions.loadUnpacked", { path: tmpdir() }],
      ["Fetch.enable", {}],
      ["Security.setIgnoreCertificateErrors", { ignore: true }],
      ["Target.exposeDevToolsProtocol", { targetId: page.targetId }],
      ["Target.createBrowserContext", {}],
      ["Target.setRemoteLocations", { locations: [{ host: "127.0.0.1", port: 1 }] }],
      ["Target.openDevTools", { targetId: page.targetId }],
      ["PWA.install", { manifestId: "x", installUrlOrBundleUrl: `file://${secretPath}` }],
      ["Storage.clearDataForOrigin", { origin: "*", storageTypes: "all" }],
      ["Nonexistent.method", {}],
      ["constructor", {}],
      ["__proto__", {}],
      ["toString", {}],
    ] as const;
    for (const [method, params] of onRoot) {
      const reply = await attacker.send(method, params);
      expect(reply.error, method).toBeDefined();
      expect(reply.error!.message, method).toMatch(/not available/);
    }
    const onPage = [
      ["Page.crash", {}],
      ["Security.setIgnoreCertificateErrors", { ignore: true }],
      ["Emulation.addScreen", { left: 0, top: 0, width: 10, height: 10 }],
      ["Memory.getBrowserSamplingProfile", {}],
      ["Network.setCookieControls", { enableThirdPartyCookieRestriction: false }],
      ["Page.setSPCTransactionMode", { mode: "autoAccept" }],
      ["Nonexistent.method", {}],
    ] as const;
    for (const [method, params] of onPage) {
      const reply = await attacker.send(method, params, page.session);
      expect(reply.error?.message, method).toMatch(/not available/);
    }
    // The attacker's page and the browser are as they were.
    const { result } = await attacker.call<{ result: { value: number } }>(
      "Runtime.evaluate",
      { expression: "6 * 7" },
      page.session,
    );
    expect(result.value).toBe(42);
  });
});

describe("the bystanders", () => {
  it("are untouched: the sibling's and the other project's pages, cookies and sessions", async () => {
    const siblingText = await ok<{ result: { pageText: string } }>(await svc.op(sibling, "extract", {}));
    expect(siblingText.result.pageText).toContain("Deckhand fixture");
    await ok(
      await svc.op(bystander, "navigate", { url: fx.site.url("echo-cookies") }, { key: svc.otherKey.key }),
    );
    const theirs = await ok<{ result: { pageText: string } }>(
      await svc.op(bystander, "extract", {}, { key: svc.otherKey.key }),
    );
    expect(theirs.result.pageText).toContain("bystander=kept");
    // The other project's session is in another browser process altogether.
    expect(svc.service.sessions.get(bystander)!.cdp.browser).not.toBe(
      svc.service.sessions.get(mine)!.cdp.browser,
    );
    await nothingLeaked();
  });
});
