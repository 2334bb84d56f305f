import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as deckhand from "deckhand";
import {
  Deckhand,
  ServiceEnvironmentError,
  ServiceError,
  ServiceInitError,
  ServiceNotInitializedError,
} from "deckhand";
import { describe, expect, test } from "vitest";
import { testOptions } from "../support/browser.ts";

describe("options are checked at construction", () => {
  test("an unknown env value names the option", () => {
    expect(() => new Deckhand({ env: "CLOUD" } as never)).toThrowError(ServiceEnvironmentError);
    try {
      new Deckhand({ env: "CLOUD" } as never);
    } catch (error) {
      expect((error as ServiceEnvironmentError).option).toBe("env");
      expect((error as Error).message).toContain('"LOCAL" or "REMOTE"');
      expect((error as Error).message).toContain('"CLOUD"');
    }
  });

  test("a missing env is rejected", () => {
    expect(() => new Deckhand({} as never)).toThrowError(/`env`/);
  });

  test.each([
    [{ verbose: 3 }, "verbose"],
    [{ selfHeal: "yes" }, "selfHeal"],
    [{ domSettleTimeout: -5 }, "domSettleTimeout"],
    [{ logger: "console" }, "logger"],
    [{ model: 42 }, "model"],
    [{ llmClient: {} }, "llmClient"],
    [{ localBrowserLaunchOptions: { port: 70000 } }, "localBrowserLaunchOptions.port"],
    [{ localBrowserLaunchOptions: { headless: "false" } }, "localBrowserLaunchOptions.headless"],
    [{ localBrowserLaunchOptions: { args: "--foo" } }, "localBrowserLaunchOptions.args"],
    [
      { localBrowserLaunchOptions: { viewport: { width: 0, height: 10 } } },
      "localBrowserLaunchOptions.viewport.width",
    ],
    [{ localBrowserLaunchOptions: { proxy: { bypass: "x" } } }, "localBrowserLaunchOptions.proxy.server"],
    [{ localBrowserLaunchOptions: { cdpUrl: "localhost:9222" } }, "localBrowserLaunchOptions.cdpUrl"],
  ])("a wrong type or value (%j) names %s", (bad, option) => {
    let caught: unknown;
    try {
      new Deckhand({ env: "LOCAL", ...bad } as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ServiceEnvironmentError);
    expect((caught as ServiceEnvironmentError).option).toBe(option);
    expect((caught as Error).message).toContain(`\`${option}\``);
  });

  test("an option error never echoes a credential", () => {
    let caught: unknown;
    try {
      new Deckhand({ env: "LOCAL", apiKey: 12345678 } as never);
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).not.toContain("12345678");
  });

  test("the v3 aliases are accepted and folded into the neutral names", () => {
    const dh = new Deckhand({
      env: "LOCAL",
      browserbaseSessionID: "abc",
      browserbaseSessionCreateParams: { keepAlive: true },
    });
    expect(dh.options.sessionId).toBe("abc");
    expect(dh.options.keepAlive).toBe(true);
    expect(
      new Deckhand({ env: "LOCAL", keepAlive: false, sessionCreateParams: { keepAlive: true } }).options
        .keepAlive,
    ).toBe(false);
  });

  test("defaults follow the spec", () => {
    const { options } = new Deckhand({ env: "LOCAL" });
    expect(options.selfHeal).toBe(true);
    expect(options.domSettleTimeout).toBe(30_000);
    expect(options.verbose).toBe(1);
    expect(options.serverCache).toBe(true);
    expect(options.keepAlive).toBe(false);
  });
});

describe("before init()", () => {
  test("context and connectURL throw ServiceNotInitializedError", () => {
    const dh = new Deckhand(testOptions());
    expect(() => dh.context).toThrowError(ServiceNotInitializedError);
    expect(() => dh.connectURL()).toThrowError(/init\(\)/);
  });

  test("session id, session URL and debug URL are undefined for a local instance", () => {
    const dh = new Deckhand(testOptions());
    expect(dh.sessionId).toBeUndefined();
    expect(dh.sessionUrl).toBeUndefined();
    expect(dh.debugUrl).toBeUndefined();
    expect(dh.browserbaseSessionID).toBeUndefined();
  });
});

describe("a browser that cannot be started", () => {
  test("a missing executablePath gives ServiceInitError naming the path", async () => {
    const dh = new Deckhand(testOptions({ executablePath: "/nowhere/chrome" }));
    const error = await dh.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceInitError);
    expect((error as Error).message).toContain("/nowhere/chrome");
  });

  test("a browser that exits at start gives ServiceInitError with its last stderr lines", async () => {
    const dir = await mkdtemp(join(tmpdir(), "deckhand-test-fake-"));
    const fake = join(dir, "fake-chrome");
    await writeFile(fake, "#!/bin/sh\necho 'fake chrome: missing libnss3.so' >&2\nexit 3\n");
    await chmod(fake, 0o755);
    try {
      const dh = new Deckhand(testOptions({ executablePath: fake }));
      const error = await dh.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceInitError);
      expect((error as Error).message).toContain(fake);
      expect((error as Error).message).toContain("missing libnss3.so");
      expect((error as Error).message).toMatch(/exited during startup/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("error classes", () => {
  const names = [
    "ServiceError",
    "ZodSchemaValidationError",
    "ServiceDomProcessError",
    "ServiceEvalError",
    "ServiceIframeError",
    "ContentFrameNotFoundError",
    "XPathResolutionError",
    "ServiceShadowRootMissingError",
    "LLMResponseError",
    "MissingLLMConfigurationError",
    "UnsupportedModelError",
    "InvalidAISDKModelFormatError",
    "ServiceElementNotFoundError",
    "ServiceClickError",
    "ServiceInitError",
    "ServiceNotInitializedError",
    "BrowserbaseSessionNotFoundError",
    "MissingEnvironmentVariableError",
    "ServiceEnvironmentError",
  ];

  test.each(names)("%s is exported and is a ServiceError", (name) => {
    const cls = (deckhand as unknown as Record<string, new (...args: never[]) => Error>)[name];
    expect(typeof cls).toBe("function");
    expect(cls === ServiceError || cls!.prototype instanceof ServiceError).toBe(true);
  });

  test("the remote-session error also has a neutral name", () => {
    expect(deckhand.RemoteSessionNotFoundError).toBe(deckhand.BrowserbaseSessionNotFoundError);
    const error = new deckhand.RemoteSessionNotFoundError("s-1");
    expect(error.name).toBe("BrowserbaseSessionNotFoundError");
    expect(error.message).toContain("s-1");
  });
});
