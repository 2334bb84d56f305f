import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type FixtureServer,
  leftoverTempDirs,
  liveChromeProcesses,
  startFixtureServer,
  waitForNoChrome,
} from "../src/index.ts";
import { chromePath, chromeTempPrefix, launchTestChrome, type TestChrome } from "./support/chrome.ts";

let server: FixtureServer;
let chrome: TestChrome | undefined;

beforeAll(async () => {
  server = await startFixtureServer();
});

afterAll(async () => {
  await chrome?.kill();
  await server?.close();
});

it("finds a running Chromium by its profile, and nothing once it is killed", async () => {
  chrome = await launchTestChrome(server.url("index.html"));
  // The page's renderer starts a moment after DevTools is up.
  let running = liveChromeProcesses(chrome.userDataDir);
  // (As long as it takes on a busy machine; a minute is a stall.)
  for (
    const until = Date.now() + 60_000;
    !running.some((p) => p.args.includes("--type=renderer")) && Date.now() < until;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    running = liveChromeProcesses(chrome.userDataDir);
  }
  const browser = running.find((p) => p.pid === chrome?.process.pid);
  expect(browser?.args[0]).toBe(chromePath());
  // Renderers carry the profile path too, their retitled command lines split back into args.
  expect(running.some((p) => p.args.includes("--type=renderer"))).toBe(true);
  expect(leftoverTempDirs(chromeTempPrefix)).toContain(chrome.userDataDir);

  const dir = chrome.userDataDir;
  await chrome.kill();
  chrome = undefined;
  // Killed children stay as zombies until reaped; those must not count.
  expect(await waitForNoChrome(dir)).toEqual([]);
  expect(leftoverTempDirs(chromeTempPrefix)).not.toContain(dir);
});

it("returns nothing for a filter no process matches", async () => {
  expect(liveChromeProcesses("/no/such/profile-dir")).toEqual([]);
  expect(await waitForNoChrome("/no/such/profile-dir", 100)).toEqual([]);
});
