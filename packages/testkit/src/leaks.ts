// Checks that a test left no browser and no temporary profile behind. Reads /proc (Linux) rather
// than asking `ps`, and skips zombies: a killed child that its parent has not reaped yet is
// gone for every purpose a test cares about.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

export interface ChromeProcess {
  pid: number;
  /** The command line, argv[0] first. */
  args: string[];
}

const browserExecutables = new Set([
  "chromium",
  "chromium-browser",
  "chrome",
  "google-chrome",
  "chrome-headless-shell",
  "headless_shell",
  "chrome_crashpad_handler",
]);

function readProcess(pid: number): ChromeProcess | undefined {
  try {
    // The state is the first field after the command name, which is in parentheses and may
    // itself contain spaces or parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return undefined;
    let args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    // Chromium's child processes rewrite their title (setproctitle), which leaves the whole
    // command line as one space-separated string.
    if (args.length === 1 && args[0]!.includes(" --")) args = args[0]!.split(" ");
    let executable = "";
    try {
      executable = basename(readlinkSync(`/proc/${pid}/exe`));
    } catch {
      // Another user's process: fall back to argv[0] below.
    }
    const names = [executable, basename(args[0] ?? "")];
    return names.some((name) => browserExecutables.has(name)) ? { pid, args } : undefined;
  } catch {
    return undefined; // exited while we looked
  }
}

/**
 * Chrome, Chromium and crashpad processes that are really running (zombies excluded), optionally
 * only those whose command line contains `filter` (a user-data-dir path, for example). Crashpad
 * handlers do not carry the profile path; they exit with their browser, so a filtered check that
 * finds the browser and its children gone is enough.
 */
export function liveChromeProcesses(filter?: string): ChromeProcess[] {
  const found: ChromeProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const chrome = readProcess(Number(entry));
    if (chrome && (filter === undefined || chrome.args.join(" ").includes(filter))) found.push(chrome);
  }
  return found;
}

/**
 * Every live process (not only browsers: a watchdog shell too) whose command line contains `text`
 * (a profile path, say), this process excepted.
 */
export function processesMentioning(text: string): ChromeProcess[] {
  const found: ChromeProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (args.join(" ").includes(text)) found.push({ pid: Number(entry), args });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Absolute paths of the entries of os.tmpdir() whose name starts with `prefix`. */
export function leftoverTempDirs(prefix: string): string[] {
  const dir = tmpdir();
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => join(dir, name));
}

/**
 * Polls until no browser process matches `filter`, or `timeoutMs` passes. Resolves to the
 * processes still alive, so `expect(await waitForNoChrome(dir)).toEqual([])` shows what leaked.
 * The default is a bound only a stall reaches: a browser on a loaded machine can take seconds to
 * exit, and the wait ends as soon as it has.
 */
export async function waitForNoChrome(filter?: string, timeoutMs = 60_000): Promise<ChromeProcess[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = liveChromeProcesses(filter);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
