// Shared set-up for tests that need a real browser: a Deckhand instance on headless Chromium
// with the flags that keep Chromium off the (closed) network, and the fixture site.

import { readFile } from "node:fs/promises";
import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { Deckhand, type DeckhandOptions, type LocalBrowserLaunchOptions } from "deckhand";

/** Keeps Chromium from reaching for the network at start-up (this machine has none). */
export const QUIET_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run"];

export function testOptions(
  launch: LocalBrowserLaunchOptions = {},
  extra: Partial<DeckhandOptions> = {},
): DeckhandOptions {
  return {
    env: "LOCAL",
    verbose: 0,
    disablePino: true,
    ...extra,
    localBrowserLaunchOptions: { ...launch, args: [...QUIET_ARGS, ...(launch.args ?? [])] },
  };
}

/** A started Deckhand; close it in afterAll/afterEach. */
export async function startDeckhand(
  launch: LocalBrowserLaunchOptions = {},
  extra: Partial<DeckhandOptions> = {},
): Promise<Deckhand> {
  const dh = new Deckhand(testOptions(launch, extra));
  await dh.init();
  return dh;
}

export interface BrowserFixture {
  dh: Deckhand;
  site: FixtureServer;
  close(): Promise<void>;
}

/** One browser and one fixture site for a test file. */
export async function browserFixture(launch: LocalBrowserLaunchOptions = {}): Promise<BrowserFixture> {
  const [dh, site] = await Promise.all([startDeckhand(launch), startFixtureServer()]);
  return {
    dh,
    site,
    close: async () => {
      await Promise.all([dh.close(), site.close()]);
    },
  };
}

/** The browser's own process id and its --user-data-dir, asked of the browser itself. */
export async function browserProcess(dh: Deckhand): Promise<{ pid: number; profile: string }> {
  const { processInfo } = await dh.context.browser.connection.root.send("SystemInfo.getProcessInfo");
  const pid = processInfo.find((p) => p.type === "browser")?.id;
  if (!pid) throw new Error("the browser did not report its process");
  const args = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
  const dir = args.find((a) => a.startsWith("--user-data-dir="));
  if (!dir) throw new Error("no --user-data-dir on the browser's command line");
  return { pid, profile: dir.slice("--user-data-dir=".length) };
}

/** The browser's command line arguments. */
export async function browserArgs(dh: Deckhand): Promise<string[]> {
  const { pid } = await browserProcess(dh);
  return (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter(Boolean).slice(1);
}
