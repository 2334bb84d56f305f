// The keeper of a browser kept open by `deckhand ... --keep-open`: a small detached Node process
// started with the browser, that ends it once no command has used it for its idle timeout (default
// DEFAULT_IDLE_MS, `--idle-timeout` to change it): it kills the browser's process group, removes
// its temporary profile and the state file, and exits. It exits as well when the browser goes
// (`deckhand close`, a crash), removing the profile a crashed browser left. Without it, a kept
// browser whose `deckhand close` never came (a script that was killed, a state file that was
// deleted) would run until the machine restarts.
//
// Each command that uses the browser holds it while it runs (a marker file next to the state file
// names the command's process: a browser in use is never ended, however long the command takes),
// and writes its time of use into the state file as it starts and ends; the keeper counts the idle
// time from the last use. A state file that is gone or names another browser leaves the keeper
// counting from the last use it saw.
//
// Node built-ins only: it is started as its own process (see startKeeper) and stays small.

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** How long a kept browser may go unused before its keeper ends it (ms): five minutes. */
export const DEFAULT_IDLE_MS = 5 * 60_000;
/** How often the keeper looks at the browser and the state file at most (ms). */
const LOOK_MS = 2_000;
/** How long the browser gets to exit on SIGTERM before SIGKILL (ms). */
const TERM_GRACE_MS = 5_000;

/** What the keeper reads from the state file. */
export interface KeptUse {
  pid: number;
  /** When a command last used the browser (ms since the epoch). */
  lastUsedAt?: number;
  /** The idle timeout in force (ms). */
  idleMs?: number;
}

/** What the keeper does next. */
export type KeeperStep = { kind: "gone" } | { kind: "end" } | { kind: "wait"; ms: number };

/**
 * The keeper's decision, from the browser's liveness, the last use it knows of and the time now:
 * the browser is gone (exit), it has been idle for `idleMs` (end it), or wait (at most LOOK_MS, so
 * that a closed browser or a newer use is seen soon).
 */
export function keeperStep(
  browserAlive: boolean,
  lastUsedAt: number,
  idleMs: number,
  now: number,
): KeeperStep {
  if (!browserAlive) return { kind: "gone" };
  const left = lastUsedAt + idleMs - now;
  if (left <= 0) return { kind: "end" };
  return { kind: "wait", ms: Math.min(left, LOOK_MS) };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the pid is another user's process now, so ours is gone too.
    return false;
  }
}

function readUse(statePath: string, pid: number): KeptUse | undefined {
  try {
    const kept = JSON.parse(readFileSync(statePath, "utf8")) as Partial<KeptUse> & { kind?: string };
    return kept.kind === "local" && kept.pid === pid ? (kept as KeptUse) : undefined;
  } catch {
    return undefined;
  }
}

/** The marker file by which the command running as `pid` holds the kept browser of `statePath`. */
export function inUseMarker(statePath: string, pid: number): string {
  return `${statePath}.in-use.${pid}`;
}

/**
 * Whether a live command holds the browser of `statePath` (see inUseMarker). Markers of commands
 * that are gone (killed before their release) are removed.
 */
function inUse(statePath: string): boolean {
  const prefix = `${basename(statePath)}.in-use.`;
  let names: string[];
  try {
    names = readdirSync(dirname(statePath)).filter((name) => name.startsWith(prefix));
  } catch {
    return false; // the directory is gone
  }
  let held = false;
  for (const name of names) {
    if (alive(Number(name.slice(prefix.length)))) held = true;
    else rmSync(join(dirname(statePath), name), { force: true });
  }
  return held;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops the browser (its whole process group: it was launched detached) and waits for it to go. */
export async function stopBrowser(pid: number): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      return;
    }
  }
  const until = Date.now() + TERM_GRACE_MS;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      process.kill(pid, "SIGKILL");
    }
    while (alive(pid)) await sleep(50);
  }
}

/** The keeper's loop (the keeper process runs this). */
export async function keep(
  statePath: string,
  pid: number,
  userDataDir: string,
  idleMs: number,
): Promise<void> {
  let lastUsedAt = Date.now();
  let idle = idleMs;
  for (;;) {
    const use = readUse(statePath, pid);
    if (use) {
      lastUsedAt = Math.max(lastUsedAt, use.lastUsedAt ?? 0);
      idle = use.idleMs ?? idle;
    }
    // A command holds it now: in use until its release.
    if (inUse(statePath)) lastUsedAt = Math.max(lastUsedAt, Date.now());
    const step = keeperStep(alive(pid), lastUsedAt, idle, Date.now());
    if (step.kind === "wait") {
      await sleep(step.ms);
      continue;
    }
    if (step.kind === "end") await stopBrowser(pid);
    rmSync(userDataDir, { recursive: true, force: true, maxRetries: 3 });
    // The state file goes when it still names this browser (not when a new one took its place).
    if (readUse(statePath, pid)) rmSync(statePath, { force: true });
    return;
  }
}

/**
 * Starts the keeper of a browser just launched with --keep-open: a detached process of its own
 * (this command exits without waiting for it). Answers its pid.
 */
export function startKeeper(statePath: string, pid: number, userDataDir: string, idleMs: number): number {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [...process.execArgv, self, "--keeper", statePath, String(pid), userDataDir, String(idleMs)],
    { detached: true, stdio: "ignore" },
  );
  child.unref();
  return child.pid ?? 0;
}

// Run as the keeper process: node keeper.(ts|js) --keeper <state> <pid> <profile> <idleMs>.
const [, entry, flag, statePath, pid, userDataDir, idleMs] = process.argv;
if (
  flag === "--keeper" &&
  entry &&
  existsSync(entry) &&
  realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))
) {
  void keep(statePath!, Number(pid), userDataDir!, Number(idleMs)).then(() => process.exit(0));
}
