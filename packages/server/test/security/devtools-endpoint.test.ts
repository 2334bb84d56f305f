// The pool browsers expose no DevTools endpoint: no process of theirs listens on any TCP port, so
// a tenant's page cannot find one and open the browser-level WebSocket that controls every
// context (the attack that worked while they listened on --remote-debugging-port). The same probe
// against a browser that does listen succeeds, so the probe is a real one.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { allListeningSockets, listeningSockets, liveChromeProcesses, processTree } from "@deckhand/testkit";
import { type Browser, launchChrome } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Fixtures,
  type LiveService,
  ok,
  QUIET_ARGS,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";
import { rawCdpClient } from "./cdp-attacker.ts";

let svc: LiveService;
let fx: Fixtures;
let mine: string;
let theirs: string;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  mine = await svc.start();
  theirs = await svc.start({}, { key: svc.otherKey.key });
  await ok(await svc.op(mine, "navigate", { url: fx.site.url("form.html") }));
  await ok(
    await svc.op(
      theirs,
      "navigate",
      { url: fx.site.url("set-cookie?name=theirs&value=secret-cookie") },
      {
        key: svc.otherKey.key,
      },
    ),
  );
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

function poolBrowsers(): Browser[] {
  return [mine, theirs].map((id) => svc.service.sessions.get(id)!.cdp.browser);
}

describe("pool browsers have no DevTools port", () => {
  it("no process of any pool Chromium listens on a TCP socket", async () => {
    const pids = svc.service.sessions.pool.browserPids();
    expect(pids).toHaveLength(2);
    for (const pid of pids) {
      const tree = processTree(pid);
      // The browser, its zygotes, GPU, network service and renderers.
      expect(tree.length).toBeGreaterThan(3);
      expect(listeningSockets(tree)).toEqual([]);
    }
    for (const chrome of liveChromeProcesses(svc.marker)) {
      expect(chrome.args.some((arg) => arg.startsWith("--remote-debugging-port"))).toBe(false);
      const profile = chrome.args
        .find((arg) => arg.startsWith("--user-data-dir="))
        ?.slice("--user-data-dir=".length);
      // Chrome writes the port (and the browser's id) here when it has one.
      if (profile) expect(existsSync(join(profile, "DevToolsActivePort"))).toBe(false);
    }
  });

  it("a page cannot reach browser-level CDP on any port of this machine, knowing the browser's id", {
    timeout: 90_000,
  }, async () => {
    // The control: a browser with a DevTools port, as pool browsers had, which a page can reach.
    const control = await launchChrome({ headless: true, args: [...QUIET_ARGS, svc.marker] });
    try {
      const controlUrl = new URL(control.wsEndpoint!);
      const ids = {
        control: controlUrl.pathname.split("/").pop()!,
        ...Object.fromEntries(
          await Promise.all(
            poolBrowsers().map(async (browser, i) => {
              const { targetInfo } = await browser.connection.root.send("Target.getTargetInfo");
              return [i === 0 ? "mine" : "theirs", targetInfo.targetId] as const;
            }),
          ),
        ),
      };
      const ports = [
        ...new Set(
          allListeningSockets()
            .filter(
              (s) =>
                /^(127\.|0\.0\.0\.0$|::1?$|::ffff:127\.)/.test(s.address) || s.address === "0:0:0:0:0:0:0:0",
            )
            .map((s) => s.port),
        ),
      ];
      expect(ports).toContain(Number(controlUrl.port));
      // The attacker's own page tries every listening port with every id, as page JavaScript can.
      const attacker = await rawCdpClient(svc, mine, svc.key.key);
      try {
        const [tab] = await attacker.pages();
        const session = await attacker.attach(tab!.targetId);
        // As an attacker would: find the ports that speak HTTP (a DevTools endpoint does), then try
        // the browser-level WebSocket on each. All at once, each given 20 s: a refused attempt ends
        // at once, and the control's must open even on a loaded machine (a 2 s limit was reached).
        const probe = `(async () => {
          const ports = ${JSON.stringify(ports)};
          const ids = ${JSON.stringify(ids)};
          const http = (await Promise.all(ports.map((port) =>
            fetch("http://127.0.0.1:" + port + "/json/version", { mode: "no-cors", signal: AbortSignal.timeout(20000) })
              .then(() => port, () => undefined)))).filter(Boolean);
          const open = [];
          const attempt = (port, name, id) => new Promise((resolve) => {
            let ws;
            try { ws = new WebSocket("ws://127.0.0.1:" + port + "/devtools/browser/" + id); } catch { return resolve(); }
            const done = () => { try { ws.close(); } catch {} resolve(); };
            ws.onopen = () => { open.push(name + "@" + port); done(); };
            ws.onerror = done;
            setTimeout(done, 20000);
          });
          await Promise.all(http.flatMap((port) => Object.entries(ids).map(([name, id]) => attempt(port, name, id))));
          return http.length + ";" + open.join(",");
        })()`;
        const { result } = await attacker.call<{ result: { value: string } }>(
          "Runtime.evaluate",
          { expression: probe, awaitPromise: true, timeout: 120_000 },
          session,
        );
        const [httpPorts, list] = result.value.split(";");
        expect(Number(httpPorts)).toBeGreaterThanOrEqual(3);
        const opened = list!.split(",").filter(Boolean);
        expect(opened).toContain(`control@${controlUrl.port}`);
        expect(opened.filter((o) => !o.startsWith("control@"))).toEqual([]);
      } finally {
        attacker.close();
      }
    } finally {
      await control.kill();
    }
  });

  it("a page cannot read a DevToolsActivePort file, nor any file, through file:", async () => {
    const attacker = await rawCdpClient(svc, mine, svc.key.key);
    try {
      const [tab] = await attacker.pages();
      const session = await attacker.attach(tab!.targetId);
      const profile = liveChromeProcesses(svc.marker)
        .flatMap((c) => c.args)
        .find((arg) => arg.startsWith("--user-data-dir="))!
        .slice("--user-data-dir=".length);
      const { result } = await attacker.call<{ result: { value: string } }>(
        "Runtime.evaluate",
        {
          expression: `Promise.all([${JSON.stringify(`file://${profile}/DevToolsActivePort`)}, "file:///etc/hostname"].map(
            (url) => fetch(url).then((r) => r.text(), (e) => "refused: " + e.message)))
            .then((texts) => texts.join("|"))`,
          awaitPromise: true,
        },
        session,
      );
      for (const text of result.value.split("|")) expect(text).toMatch(/^refused/);
      const navigate = await attacker.send(
        "Page.navigate",
        { url: `file://${profile}/DevToolsActivePort` },
        session,
      );
      expect(navigate.error?.message).toMatch(/file: URLs cannot be opened/);
    } finally {
      attacker.close();
    }
  });

  it("the other project's session is untouched", async () => {
    await ok(
      await svc.op(theirs, "navigate", { url: fx.site.url("echo-cookies") }, { key: svc.otherKey.key }),
    );
    const text = await ok<{ result: { pageText: string } }>(
      await svc.op(theirs, "extract", {}, { key: svc.otherKey.key }),
    );
    expect(text.result.pageText).toContain("theirs=secret-cookie");
    expect(svc.service.sessions.get(theirs)!.cdp.browser.isConnected()).toBe(true);
  });
});
