// A bare Chromium for the testkit's own tests (the library has the real launcher; the testkit
// cannot depend on it). Headless, fresh profile, DevTools on a random port.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForNoChrome } from "../../src/index.ts";

export const chromeTempPrefix = "deckhand-testkit-chrome-";

export function chromePath(): string {
  const candidates = [
    process.env.CHROME_PATH,
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/google-chrome",
  ];
  const found = candidates.find((path): path is string => Boolean(path) && existsSync(path!));
  if (!found) throw new Error("No Chromium found: set CHROME_PATH or install chromium.");
  return found;
}

export interface TestChrome {
  process: ChildProcess;
  userDataDir: string;
  /** Like "http://127.0.0.1:9222", for /json/list. */
  httpEndpoint: string;
  /** The browser's DevTools WebSocket URL. */
  wsEndpoint: string;
  /** SIGKILLs the browser, waits for it and its children to exit, and removes its profile. */
  kill(): Promise<void>;
}

export async function launchTestChrome(url: string, extraArgs: string[] = []): Promise<TestChrome> {
  const userDataDir = mkdtempSync(join(tmpdir(), chromeTempPrefix));
  const args = [
    "--headless",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-gpu",
    "--no-sandbox", // tests run as root in CI containers
    `--user-data-dir=${userDataDir}`,
    "--remote-debugging-port=0",
    ...extraArgs,
    url,
  ];
  // Chrome's own temporary files (its singleton socket folder) go under the profile, which is
  // removed: a SIGKILLed browser would otherwise leave them in /tmp.
  const child = spawn(chromePath(), args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, TMPDIR: userDataDir },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    // The browser's children outlive it briefly and can still write into the profile; removing
    // it before they are gone lets them recreate it.
    await waitForNoChrome(userDataDir);
    rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    const wsEndpoint = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      // A stall bound, not a measure of start-up (a loaded machine takes seconds).
      const timer = setTimeout(() => reject(new Error(`Chromium did not start:\n${stderr}`)), 60_000);
      const onData = (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          child.stderr?.off("data", onData);
          resolve(match[1]!);
        }
      };
      child.stderr?.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code}) before DevTools was ready:\n${stderr}`));
      });
    });
    // Keep draining stderr so that a chatty browser never blocks on a full pipe.
    child.stderr?.resume();
    const httpEndpoint = `http://${new URL(wsEndpoint).host}`;
    return { process: child, userDataDir, httpEndpoint, wsEndpoint, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
