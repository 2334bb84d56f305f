import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  leftoverTempDirs,
  liveChromeProcesses,
  match,
  processesMentioning,
  startChildScript,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { Deckhand, ServiceBrowserClosedError, ServiceError } from "deckhand";
import { describe, expect, test } from "vitest";
import { browserProcess, startDeckhand, testOptions } from "../support/browser.ts";

const here = dirname(fileURLToPath(import.meta.url));

describe("init() and close()", () => {
  test("the first page exists after init()", async () => {
    const dh = await startDeckhand();
    try {
      expect(dh.context.pages()).toHaveLength(1);
      expect(dh.context.activePage()).toBe(dh.page);
      expect(dh.page.url()).toBe("about:blank");
    } finally {
      await dh.close();
    }
  });

  test("close() leaves no Chrome process and no temporary profile directory", async () => {
    const dh = await startDeckhand();
    const { profile } = await browserProcess(dh);
    expect(existsSync(profile)).toBe(true);
    expect(liveChromeProcesses(profile).length).toBeGreaterThan(0);
    await dh.close();
    expect(await waitForNoChrome(profile)).toEqual([]);
    expect(existsSync(profile)).toBe(false);
  });

  test("when close() of a temporary profile returns, nothing is left: no process (no watchdog shell either) names the profile, and it is gone", async () => {
    const dh = await startDeckhand();
    const { profile } = await browserProcess(dh);
    expect(processesMentioning(profile).length).toBeGreaterThan(1);
    await dh.close();
    // Checked at once, with no waiting: close() itself waits until everything is gone.
    expect(processesMentioning(profile)).toEqual([]);
    expect(existsSync(profile)).toBe(false);
  });

  test("close() twice, and close({ force }) during a close, are safe", async () => {
    const dh = await startDeckhand();
    const { profile } = await browserProcess(dh);
    const first = dh.close();
    const forced = dh.close({ force: true });
    await Promise.all([first, forced, dh.close()]);
    expect(await waitForNoChrome(profile)).toEqual([]);
    expect(existsSync(profile)).toBe(false);
  });

  test("methods after close() say the instance was closed", async () => {
    const dh = await startDeckhand();
    await dh.close();
    expect(() => dh.context).toThrowError(/after close/);
    await expect(dh.init()).rejects.toThrowError(/closed/);
  });

  test("with keepAlive, close() only disconnects and the browser keeps running", async () => {
    const dh = await startDeckhand({}, { keepAlive: true });
    const endpoint = dh.connectURL();
    const { profile } = await browserProcess(dh);
    await dh.close();
    // Still there: attach to it through cdpUrl, then really close it.
    const again = new Deckhand(testOptions({ cdpUrl: endpoint }));
    await again.init();
    expect(again.context.pages().length).toBeGreaterThan(0);
    await again.context.browser.connection.root.send("Browser.close").catch(() => undefined);
    await again.close();
    expect(await waitForNoChrome(profile)).toEqual([]);
    // A keepAlive browser keeps its profile (it is meant to outlive us); this test removes it.
    expect(existsSync(profile)).toBe(true);
    await rm(profile, { recursive: true, force: true });
  });
});

/**
 * "At once" in this file: well under the 30-s limits an operation would otherwise wait out, and
 * beyond what a busy machine's delays reach.
 */
const STALL_MS = 10_000;

describe("a browser that dies under Deckhand", () => {
  test("pending calls fail promptly with ServiceBrowserClosedError, nothing hangs", async () => {
    const dh = await startDeckhand();
    const { profile } = await browserProcess(dh);
    const page = dh.page;
    const pending = page.evaluate("new Promise(() => {})");
    const navigation = page
      .goto("data:text/html,<p>x</p>")
      .then(() => page.evaluate("new Promise(() => {})"));
    for (const proc of liveChromeProcesses(profile)) {
      try {
        process.kill(proc.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const started = Date.now();
    await expect(pending).rejects.toBeInstanceOf(ServiceError);
    await expect(navigation).rejects.toBeInstanceOf(ServiceError);
    // Promptly: the evaluate never ends by itself and the navigation's limit is 30 s. The bound is
    // one only a stall reaches, not a measure of speed (a loaded machine takes seconds).
    expect(Date.now() - started).toBeLessThan(STALL_MS);
    await expect(page.evaluate("1")).rejects.toBeInstanceOf(ServiceBrowserClosedError);
    await dh.close();
    expect(await waitForNoChrome(profile)).toEqual([]);
  });
});

describe("a browser that dies while an operation waits on the model", () => {
  test("the pending extract and every later operation fail at once with ServiceBrowserClosedError", async () => {
    const [model, site] = await Promise.all([startScriptedModel(), startFixtureServer()]);
    const dh = await startDeckhand(
      {},
      {
        model: {
          modelName: "openai/gpt-4.1-mini",
          apiKey: "sk-test-gone-0123456789",
          baseURL: model.baseURL,
        },
      },
    );
    try {
      const { profile } = await browserProcess(dh);
      await dh.page.goto(site.url("form.html"));
      // The model answers only once the browser is gone, as a slow provider would.
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let asked!: () => void;
      const modelAsked = new Promise<void>((resolve) => {
        asked = resolve;
      });
      model.on(match.schemaName("extract"), async () => {
        asked();
        await released;
        return { extraction: "an answer that must never be returned" };
      });
      const pending = dh.extract("what is the page about?").then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      await modelAsked;
      for (const proc of liveChromeProcesses(profile)) {
        try {
          process.kill(proc.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      const killed = Date.now();
      const outcome = await pending;
      // The model never answers unless released, and an operation's limit is 30 s.
      expect(Date.now() - killed).toBeLessThan(STALL_MS);
      expect(outcome).toMatchObject({ error: expect.any(ServiceBrowserClosedError) });
      release();
      // Later operations fail at once too, with no model call.
      const calls = model.callCount;
      for (const later of [
        () => dh.observe("find the form"),
        () => dh.extract("the title"),
        () => dh.act("click"),
      ]) {
        const started = Date.now();
        await expect(later()).rejects.toBeInstanceOf(ServiceBrowserClosedError);
        expect(Date.now() - started).toBeLessThan(STALL_MS);
      }
      expect(model.callCount).toBe(calls);
      await dh.close();
      expect(await waitForNoChrome(profile)).toEqual([]);
    } finally {
      await dh.close();
      await Promise.all([model.close(), site.close()]);
    }
  });
});

describe("a script with nothing else to do", () => {
  test("close() resolves, nothing is left, and the script ends by itself", async () => {
    const script = join(here, "../support/init-and-close.ts");
    const { child, match } = await startChildScript(script, /PROFILE (\S+)/);
    const profile = match[1]!;
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(out).toContain("CLOSED");
    expect(code).toBe(0);
    expect(processesMentioning(profile)).toEqual([]);
    expect(existsSync(profile)).toBe(false);
  });
});

describe("the calling process is killed", () => {
  test("a SIGKILLed caller leaves no browser and no profile behind", async () => {
    const script = join(here, "../support/launch-and-wait.ts");
    const { child, match } = await startChildScript(script, /PROFILE (\S+)/);
    const profile = match[1]!;
    expect(liveChromeProcesses(profile).length).toBeGreaterThan(0);
    child.kill("SIGKILL");
    expect(await waitForNoChrome(profile)).toEqual([]);
    // The watchdog removes the profile right after the browser exits.
    for (const until = Date.now() + 60_000; existsSync(profile) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(profile)).toBe(false);
    expect(leftoverTempDirs("deckhand-profile-")).not.toContain(profile);
  });
});
