// Browsers for the benchmarks: Deckhand options with the flags that keep Chromium off the network,
// and a record of every profile directory the benchmarks used, so that the run can prove at the
// end that no browser process and no temporary directory was left behind.

import { existsSync, readFileSync } from "node:fs";
import { type ChromeProcess, leftoverTempDirs, liveChromeProcesses } from "@deckhand/testkit";

export { processesMentioning } from "@deckhand/testkit";

import { Deckhand, type DeckhandOptions } from "deckhand";

/** Keeps Chromium from reaching for the network at start-up (this machine has none). */
export const QUIET_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run"];

/** The real Chromium binary (not the /usr/bin shell wrapper), for the raw launch measurement. */
export const CHROMIUM = "/usr/lib/chromium/chromium";

/** Prefix of every temporary directory the benchmarks make themselves (raw launches, caches). */
export const BENCH_TMP_PREFIX = "deckhand-bench-";
/** Deckhand's own temporary profiles. */
export const PROFILE_PREFIX = "deckhand-profile-";

const usedDirs = new Set<string>();

/** Remembers a directory a browser of this run used, for the final leak check. */
export function rememberDir(dir: string): void {
  usedDirs.add(dir);
}

export function benchOptions(extra: Partial<DeckhandOptions> = {}): DeckhandOptions {
  return {
    env: "LOCAL",
    verbose: 0,
    disablePino: true,
    ...extra,
    localBrowserLaunchOptions: {
      ...extra.localBrowserLaunchOptions,
      args: [...QUIET_ARGS, ...(extra.localBrowserLaunchOptions?.args ?? [])],
    },
  };
}

/** The profile directory of the browser a Deckhand launched (undefined when it attached). */
export function profileOf(dh: Deckhand): string | undefined {
  return dh.context.browser.launched?.userDataDir;
}

/** A started Deckhand whose profile is tracked for the leak check. */
export async function startDeckhand(extra: Partial<DeckhandOptions> = {}): Promise<Deckhand> {
  const dh = new Deckhand(benchOptions(extra));
  await dh.init();
  const dir = profileOf(dh);
  if (dir) rememberDir(dir);
  return dh;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a descendant of this process. */
function isOurs(pid: number): boolean {
  for (let p: number | undefined = pid, hops = 0; p && p > 1 && hops < 64; hops++) {
    if (p === process.pid) return true;
    p = parentOf(p);
  }
  return false;
}

export interface LeakReport {
  /** Browser processes that use one of this run's profiles, or descend from this process. */
  processes: ChromeProcess[];
  /** This run's profile and scratch directories that still exist. */
  dirs: string[];
  /** How many profiles and scratch directories this run used. */
  tracked: number;
}

/** What this run left behind (checked by profile path and by process ancestry). */
export function leftBehind(): LeakReport {
  const processes = liveChromeProcesses().filter(
    (p) => isOurs(p.pid) || [...usedDirs].some((dir) => p.args.join(" ").includes(dir)),
  );
  const dirs = [...usedDirs].filter((dir) => existsSync(dir));
  for (const dir of leftoverTempDirs(BENCH_TMP_PREFIX)) if (!dirs.includes(dir)) dirs.push(dir);
  return { processes, dirs, tracked: usedDirs.size };
}

/** How many Deckhand profiles exist in the temporary directory right now (anyone's). */
export function profileDirCount(): number {
  return leftoverTempDirs(PROFILE_PREFIX).length;
}

/** How many browser processes run on the machine right now (anyone's). */
export function browserProcessCount(): number {
  return liveChromeProcesses().length;
}
