// A browser launched with `debuggingPort: false` is driven over its DevTools pipe only: it works
// like any other, no process of it listens on a TCP port, and it leaves nothing behind when it is
// closed, when it dies, or when the process that holds its pipe is killed.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FixtureServer,
  largePageHtml,
  leftoverTempDirs,
  listeningSockets,
  liveChromeProcesses,
  processTree,
  startChildScript,
  startFixtureServer,
  waitForNoChrome,
} from "@deckhand/testkit";
import {
  Browser,
  Deckhand,
  type LaunchedChrome,
  launchChrome,
  ServiceBrowserClosedError,
  ServiceError,
  ServiceInitError,
} from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TEMP_PROFILE_PREFIX } from "../../src/browser/launch.ts";
import { QUIET_ARGS } from "../support/browser.ts";

const here = dirname(fileURLToPath(import.meta.url));

let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer();
  const big = largePageHtml({ elements: 3000 });
  site.route("/big.html", (_req, res) => {
    res.setHeader("content-type", "text/html");
    res.end(big);
  });
});
afterAll(async () => {
  await site.close();
});

function launchPipeOnly(): Promise<LaunchedChrome> {
  return launchChrome({ headless: true, debuggingPort: false, args: QUIET_ARGS });
}

/** Closes the browser and checks that neither a process nor its temporary profile is left. */
async function closeAndCheck(browser: Browser, launched: LaunchedChrome): Promise<void> {
  await browser.close();
  expect(await waitForNoChrome(launched.userDataDir)).toEqual([]);
  expect(existsSync(launched.userDataDir)).toBe(false);
  expect(leftoverTempDirs(TEMP_PROFILE_PREFIX)).not.toContain(launched.userDataDir);
}

describe("a browser launched with debuggingPort: false", () => {
  test("is driven over its pipe: pages open, navigate, evaluate, and a large screenshot arrives whole", async () => {
    const launched = await launchPipeOnly();
    expect(launched.wsEndpoint).toBeUndefined();
    expect(launched.pipe).toBeDefined();
    const browser = await Browser.connect(launched);
    try {
      expect(browser.wsEndpoint).toBeUndefined();
      const page = await browser.defaultContext().newPage();
      await page.goto(site.url("form.html"));
      expect(await page.title()).not.toBe("");
      expect(await page.evaluate(() => location.href)).toBe(site.url("form.html"));
      // Many messages at once, each answered in order.
      const sums = await Promise.all(Array.from({ length: 50 }, (_, i) => page.evaluate(`${i} + 1`)));
      expect(sums).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      // A message of megabytes crosses the pipe in many chunks and is put back together.
      await page.goto(site.url("big.html"));
      const png = await page.screenshot({ fullPage: true });
      expect(png.length).toBeGreaterThan(1_000_000);
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      const { product } = await browser.connection.root.send("Browser.getVersion");
      expect(product).toMatch(/Chrom/);
    } finally {
      await closeAndCheck(browser, launched);
    }
  });

  test("no process of it listens on any TCP port, while a default launch does", async () => {
    const piped = await launchPipeOnly();
    const pipeBrowser = await Browser.connect(piped);
    const ported = await launchChrome({ headless: true, args: QUIET_ARGS });
    const portBrowser = await Browser.connect(ported);
    try {
      // A renderer and a network service are up: every process the browser will have for a page.
      const page = await pipeBrowser.defaultContext().newPage();
      await page.goto(site.url("form.html"));
      const tree = processTree(piped.pid);
      expect(tree.length).toBeGreaterThan(3);
      const args = liveChromeProcesses(piped.userDataDir).flatMap((p) => p.args);
      expect(args.some((a) => a.startsWith("--remote-debugging-port"))).toBe(false);
      expect(listeningSockets(tree)).toEqual([]);
      // The check itself sees a DevTools port where there is one.
      const port = Number(new URL(ported.wsEndpoint!).port);
      expect(listeningSockets(processTree(ported.pid)).map((s) => s.port)).toContain(port);
    } finally {
      await Promise.all([closeAndCheck(pipeBrowser, piped), closeAndCheck(portBrowser, ported)]);
    }
  });

  test("works under a Deckhand instance in one of its contexts", async () => {
    const launched = await launchPipeOnly();
    const browser = await Browser.connect(launched);
    try {
      const dh = Deckhand.inContext(await browser.newContext(), { verbose: 0, disablePino: true });
      await dh.init();
      await dh.page.goto(site.url("form.html"));
      expect((await dh.extract()).pageText).toContain("textbox");
      // There is no URL to hand another library: the error says why.
      expect(() => dh.connectURL()).toThrowError(/pipe.*no DevTools URL/);
      await dh.close();
    } finally {
      await closeAndCheck(browser, launched);
    }
  });

  test("pending calls fail promptly with ServiceBrowserClosedError when it dies", async () => {
    const launched = await launchPipeOnly();
    const browser = await Browser.connect(launched);
    const page = await browser.defaultContext().newPage();
    const pending = page.evaluate("new Promise(() => {})");
    for (const proc of liveChromeProcesses(launched.userDataDir)) {
      try {
        process.kill(proc.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const started = Date.now();
    await expect(pending).rejects.toBeInstanceOf(ServiceError);
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(page.evaluate("1")).rejects.toBeInstanceOf(ServiceBrowserClosedError);
    expect(browser.isConnected()).toBe(false);
    await closeAndCheck(browser, launched);
  });

  test("the process it was launched as, killed by someone else: kill() still ends the rest and removes the profile", async () => {
    const launched = await launchPipeOnly();
    const browser = await Browser.connect(launched);
    await browser.defaultContext().newPage();
    // On Debian that process is the chromium launcher script, with Chromium under it; elsewhere
    // Chromium itself. Either way what is left of it is no child of ours any more.
    process.kill(launched.pid, "SIGKILL");
    await launched.exited;
    expect(launched.hasExited()).toBe(true);
    await launched.kill();
    // At once: kill() returns only when every process of it is gone and its profile removed.
    expect(liveChromeProcesses(launched.userDataDir)).toEqual([]);
    expect(existsSync(launched.userDataDir)).toBe(false);
    browser.disconnect();
  });

  test("a SIGKILLed caller leaves no browser and no profile behind", async () => {
    const script = join(here, "../support/launch-pipe-and-wait.ts");
    const { child, match } = await startChildScript(script, /PROFILE (\S+)/);
    const profile = match[1]!;
    expect(liveChromeProcesses(profile).length).toBeGreaterThan(0);
    child.kill("SIGKILL");
    expect(await waitForNoChrome(profile)).toEqual([]);
    for (const until = Date.now() + 60_000; existsSync(profile) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(profile)).toBe(false);
  });

  test("contradicting options are refused before anything starts", async () => {
    await expect(launchChrome({ headless: true, debuggingPort: false, port: 9333 })).rejects.toThrowError(
      ServiceInitError,
    );
    await expect(
      launchChrome({ headless: true, debuggingPort: false, keepAlive: true }),
    ).rejects.toThrowError(/keepAlive.*debugging port/);
  });

  test("a browser that cannot start says so, with its own output", async () => {
    // /bin/sh refuses Chrome's arguments and exits at once, as a broken Chrome would.
    const error = await launchChrome({
      headless: true,
      debuggingPort: false,
      executablePath: "/bin/sh",
      timeoutMs: 15_000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceInitError);
    expect((error as Error).message).toMatch(/could not be started: it exited during startup/);
    expect((error as Error).message).toMatch(/last output:\n.*sh/);
  });
});
