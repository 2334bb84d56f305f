// Starting Chrome and making sure it goes away again.
//
// Chrome is started with `--remote-debugging-pipe`, whose other end this process holds: when this
// process dies for any reason (even SIGKILL) the pipe closes and Chrome shuts itself down. By
// default it also gets a remote-debugging port (the WebSocket Deckhand talks over, which other
// tools can join); with `debuggingPort: false` it gets none, and CDP runs over the pipe itself, so
// that nothing on the machine can reach the browser but this process. On POSIX a one-line `sh`
// parent waits for Chrome and then removes the temporary profile, so that a killed caller leaves
// neither a process nor a directory behind. `keepAlive` launches skip both: that browser is meant
// to outlive us.
//
// Stopping: a browser on a temporary profile has nothing worth a clean shutdown, so it is killed
// (its whole process group) and its profile removed as soon as every process of it is gone, which
// takes a few milliseconds. A caller's own profile gets a clean shutdown first (see Browser.close),
// so that what it holds (cookies) is written.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { ServiceInitError } from "../errors.ts";
import { PipeTransport } from "./cdp/transport.ts";
import { chromeSearchPaths, findChrome } from "./chrome-path.ts";

/** The spec's default arguments, added before the caller's `args` unless `ignoreDefaultArgs` says otherwise. */
export const DEFAULT_ARGS: readonly string[] = [
  "--remote-allow-origins=*",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-dev-shm-usage",
  "--site-per-process",
];

/**
 * The viewport of a browser Deckhand launches when the caller names none (the reference library's
 * default): what a person expects of a laptop window, where Chrome's own headless default is 800x600
 * with a 780x437 page area.
 */
export const DEFAULT_VIEWPORT: Readonly<{ width: number; height: number }> = { width: 1288, height: 711 };

export const TEMP_PROFILE_PREFIX = "deckhand-profile-";
/** Chrome's TMPDIR when the caller gives a profile of their own. */
export const TEMP_SCRATCH_PREFIX = "deckhand-tmp-";

/**
 * Where Chrome on Linux and macOS puts its process-singleton socket: a directory it makes under
 * its TMPDIR, `org.chromium.Chromium.XXXXXX/SingletonSocket` (the profile's `SingletonSocket` is
 * only a symbolic link to it). A Unix socket's path has at most 107 bytes on Linux (sun_path is 108
 * with its NUL; 103 on macOS), and Chrome aborts at start ("Socket path too long") past that.
 */
const SINGLETON_SOCKET_TAIL = "/org.chromium.Chromium.XXXXXX/SingletonSocket";
const MAX_SOCKET_PATH = process.platform === "linux" ? 107 : 103;
/** The temporary directory every POSIX system has, short enough for the socket. */
const SHORT_TEMP_ROOT = "/tmp";

/** Whether Chrome, given `dir` as its TMPDIR, can make its socket there. */
function fitsChromeSocket(dir: string): boolean {
  return (
    process.platform === "win32" || Buffer.byteLength(dir) + SINGLETON_SOCKET_TAIL.length <= MAX_SOCKET_PATH
  );
}

/**
 * A new directory for Chrome's own temporary files: in the caller's temporary directory, or under
 * /tmp when that one is too long a path for Chrome's socket.
 */
async function makeScratch(): Promise<string> {
  const inTmpdir = join(tmpdir(), `${TEMP_SCRATCH_PREFIX}XXXXXX`);
  const root = fitsChromeSocket(inTmpdir) ? tmpdir() : SHORT_TEMP_ROOT;
  try {
    return await mkdtemp(join(root, TEMP_SCRATCH_PREFIX));
  } catch (error) {
    throw new ServiceInitError(
      `Could not make a directory for Chrome's temporary files in ${root}: ${(error as Error).message}. ` +
        (root === SHORT_TEMP_ROOT
          ? `TMPDIR (${tmpdir()}) is too long a path for Chrome's socket; set TMPDIR to a shorter, writable directory.`
          : "Set TMPDIR to a writable directory."),
      { cause: error },
    );
  }
}

const HEADLESS_TRIM = "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup";

function ignoredByCaller(arg: string, ignore: boolean | string[] | undefined): boolean {
  return ignore === true || (Array.isArray(ignore) && ignore.includes(arg));
}

export interface ChromeLaunchOptions {
  executablePath?: string;
  headless: boolean;
  port?: number;
  /**
   * Default true: Chrome opens a DevTools WebSocket on `port` (a free one when unset). `false`: no
   * TCP endpoint at all; the connection runs over the DevTools pipe (`LaunchedChrome.pipe`), which
   * only this process holds. Not with `port` or `keepAlive`.
   */
  debuggingPort?: boolean;
  args?: string[];
  ignoreDefaultArgs?: boolean | string[];
  userDataDir?: string;
  windowSize?: { width: number; height: number };
  devtools?: boolean;
  proxy?: { server: string; bypass?: string };
  /** The browser must outlive this process: no watchdog pipe, profile kept. */
  keepAlive?: boolean;
  timeoutMs?: number;
}

export interface LaunchedChrome {
  /** The DevTools WebSocket; undefined for a browser launched with `debuggingPort: false`. */
  wsEndpoint: string | undefined;
  /**
   * The DevTools pipe (unless keepAlive): `Browser.connect(launched)` talks over it, with or without
   * a port open for other tools.
   */
  pipe: PipeTransport | undefined;
  executablePath: string;
  userDataDir: string;
  temporaryProfile: boolean;
  pid: number;
  /** Resolves once the browser process (and its profile cleanup) has finished. */
  exited: Promise<void>;
  hasExited(): boolean;
  /**
   * Kills the browser's whole process group, waits until each of its processes is gone, and
   * removes the temporary profile (or scratch directory).
   */
  kill(): Promise<void>;
  /** Resolves once the browser process itself has exited (a clean shutdown), at most after `timeoutMs`; false on timeout. */
  browserExited(timeoutMs: number): Promise<boolean>;
  /** The last lines Chrome wrote to stderr, for error messages. */
  stderrTail(): string;
}

/** Arguments in the order Chrome receives them: defaults, Deckhand's operational flags, the caller's. */
export function buildChromeArgs(options: ChromeLaunchOptions, userDataDir: string): string[] {
  const ignore = options.ignoreDefaultArgs;
  const defaults =
    ignore === true ? [] : DEFAULT_ARGS.filter((a) => !(Array.isArray(ignore) && ignore.includes(a)));
  const operational = [
    ...(options.debuggingPort === false ? [] : [`--remote-debugging-port=${options.port ?? 0}`]),
    ...(options.keepAlive ? [] : ["--remote-debugging-pipe"]),
    `--user-data-dir=${userDataDir}`,
  ];
  if (options.headless) {
    operational.push("--headless");
    // Headless Chromium still builds the omnibox's popup pages at start (a renderer that no one
    // sees): leaving them out takes about 80 ms off init(). Dropped with the defaults.
    if (!ignoredByCaller(HEADLESS_TRIM, ignore)) operational.push(HEADLESS_TRIM);
  }
  // Chrome refuses to start as root with its sandbox on.
  if (typeof process.getuid === "function" && process.getuid() === 0) operational.push("--no-sandbox");
  if (options.windowSize)
    operational.push(`--window-size=${options.windowSize.width},${options.windowSize.height}`);
  if (options.devtools) operational.push("--auto-open-devtools-for-tabs");
  if (options.proxy) {
    operational.push(`--proxy-server=${options.proxy.server}`);
    if (options.proxy.bypass) operational.push(`--proxy-bypass-list=${options.proxy.bypass}`);
  }
  const callerArgs = options.args ?? [];
  const all = [...defaults, ...operational, ...callerArgs];
  // Without a URL Chrome opens its new-tab page; about:blank gives a first page that loads nothing.
  if (!callerArgs.some((a) => !a.startsWith("-"))) all.push("about:blank");
  return all;
}

// $1 chrome, $2 and $3 directories to remove afterwards (the temporary profile, the scratch
// directory; "" for none); the rest are Chrome's arguments. It matters when this process died first
// (Chrome then exits as its pipe closes): the shell removes the directories, and once more a second
// later for helper processes that outlive the browser briefly. When this process stops the
// browser, it kills the shell with it and cleans up itself, so no shell is left waiting.
// fds 3 and 4 (the debugging pipe) are passed to Chrome and then closed in the shell, so that only
// this Node process holds their other ends. fd 5 is the shell's alone: it writes a line there as
// soon as its wait for Chrome returns, which tells close() that a clean shutdown is over the moment
// it is (see browserExited) instead of at its next look in /proc. SIGPIPE is ignored (after Chrome
// started, which must not inherit that) so that a write to a dead caller cannot stop the cleanup.
const WATCHDOG_SCRIPT =
  'chrome="$1"; a="$2"; b="$3"; shift 3; "$chrome" "$@" 3<&3 4>&4 5>&- & pid=$!; exec 3<&- 4>&-; ' +
  'trap "" PIPE; ' +
  'trap \'kill -TERM "$pid" 2>/dev/null\' TERM INT; wait "$pid"; code=$?; echo 2>/dev/null >&5; ' +
  'clean() { [ -n "$a" ] && rm -rf "$a"; [ -n "$b" ] && rm -rf "$b"; }; ' +
  '[ -n "$a$b" ] && { clean; sleep 1; clean; }; exit $code';

/** The pipe's first message, answered before the connection above takes it over (its ids start at 1). */
const PIPE_PROBE_ID = 0;

export async function launchChrome(options: ChromeLaunchOptions): Promise<LaunchedChrome> {
  const pipeOnly = options.debuggingPort === false;
  if (pipeOnly && options.port !== undefined) {
    throw new ServiceInitError(
      "launchChrome: `port` and `debuggingPort: false` contradict each other (no port is opened). Give one of them.",
    );
  }
  if (pipeOnly && options.keepAlive) {
    throw new ServiceInitError(
      "launchChrome: `keepAlive` needs a debugging port (a browser without one cannot be reached again after " +
        "this process lets go of its pipe). Leave `debuggingPort` unset, or `keepAlive` off.",
    );
  }
  const executablePath = resolveExecutable(options.executablePath);
  const temporaryProfile = !options.userDataDir;
  const userDataDir = options.userDataDir ?? (await mkdtemp(join(tmpdir(), TEMP_PROFILE_PREFIX)));
  // Chrome's own temporary files (its process-singleton socket directory, shared memory with
  // --disable-dev-shm-usage) go where TMPDIR says; a browser that is killed never removes them.
  // Pointing TMPDIR into a directory Deckhand removes keeps /tmp clean whatever happens. That is the
  // temporary profile when its path leaves room for Chrome's socket, else a directory of its own
  // (under /tmp when the caller's TMPDIR is that long). A keepAlive browser outlives this process,
  // which cannot remove a directory after it: it gets its profile, or plain /tmp when the caller's
  // TMPDIR is too long (Chrome removes its socket directory when it exits).
  let scratch: string | undefined;
  if (temporaryProfile && fitsChromeSocket(userDataDir)) scratch = userDataDir;
  else if (!options.keepAlive) {
    try {
      scratch = await makeScratch();
    } catch (error) {
      if (temporaryProfile) await removeProfile(userDataDir);
      throw error;
    }
  } else if (!fitsChromeSocket(tmpdir())) scratch = SHORT_TEMP_ROOT;
  const removable = options.keepAlive
    ? []
    : [...new Set([...(temporaryProfile ? [userDataDir] : []), ...(scratch ? [scratch] : [])])];
  const env = scratch ? { ...process.env, TMPDIR: scratch } : process.env;
  const args = buildChromeArgs(options, userDataDir);
  const useWatchdog = !options.keepAlive && process.platform !== "win32";

  let child: ChildProcess;
  try {
    child = useWatchdog
      ? spawn(
          "/bin/sh",
          [
            "-c",
            WATCHDOG_SCRIPT,
            "deckhand-chrome",
            executablePath,
            removable[0] ?? "",
            removable[1] ?? "",
            ...args,
          ],
          { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe", "pipe"], detached: true, env },
        )
      : spawn(executablePath, args, {
          stdio: ["ignore", "ignore", "pipe", ...(options.keepAlive ? [] : (["pipe", "pipe"] as const))],
          detached: true,
          env,
        });
  } catch (error) {
    await removeAll(removable);
    throw new ServiceInitError(`Could not start ${executablePath}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  // The caller's process must be free to exit without waiting for the browser: when it does, the
  // debugging pipe closes and Chrome follows (unless keepAlive).
  child.unref();
  for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();

  const stderrLines: string[] = [];
  let partial = "";
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
  }).then(async () => {
    // Retry on "not empty" (a helper still writing); cleanup never fails the caller.
    await removeAll(removable);
  });

  // The watchdog's word that its wait for Chrome returned (or that the shell is gone).
  const watchdogLine = (child.stdio as readonly unknown[])[5] as Readable | null | undefined;
  const waitReturned = watchdogLine
    ? new Promise<void>((resolve) => {
        const stream = watchdogLine;
        stream.once("data", () => resolve());
        stream.once("close", () => resolve());
        stream.on("error", () => resolve());
      })
    : undefined;

  const stderrTail = () => [...stderrLines, partial].filter(Boolean).slice(-12).join("\n");
  // The pipe is there whenever the browser must not outlive us; Deckhand talks over it even when a
  // port is open for other tools, since it needs no handshake and is read as soon as Chrome starts.
  const pipe = options.keepAlive
    ? undefined
    : new PipeTransport(child.stdio[3] as Writable, child.stdio[4] as Readable, PIPE_PROBE_ID);

  const wsEndpoint = await new Promise<string | undefined>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(
      () => fail(`it did not open its DevTools ${pipe ? "pipe" : "endpoint"} within ${timeoutMs} ms`),
      timeoutMs,
    );
    // Over the pipe alone, Chrome is ready once it answers a first command.
    if (pipeOnly)
      pipe?.probe().then(
        () => {
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve(undefined);
        },
        () => {
          // The pipe closed: the exit handler says why, with Chrome's own words.
        },
      );
    const onData = (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        stderrLines.push(line);
        if (stderrLines.length > 50) stderrLines.shift();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(line);
        if (match?.[1] && !pipeOnly) {
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve(match[1]);
          return;
        }
        if (
          /Cannot start http server for devtools|bind\(\) failed.*Address already in use/i.test(line) &&
          options.port
        ) {
          fail(
            `its debugging port ${options.port} is already in use; choose another \`port\` or leave it unset`,
          );
          return;
        }
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`it exited during startup (${signal ? `signal ${signal}` : `code ${code}`})`);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.off("exit", onExit);
      reject(
        new ServiceInitError(
          `The browser at ${executablePath} could not be started: ${why}.` +
            (stderrTail() ? `\nChrome's last output:\n${stderrTail()}` : ""),
        ),
      );
    };
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  }).catch(async (error: unknown) => {
    killGroup(child);
    await exitedPromise;
    throw error;
  });

  // Keep draining stderr (a full pipe would block Chrome) but only keep the tail.
  return {
    wsEndpoint,
    pipe,
    executablePath,
    userDataDir,
    temporaryProfile,
    pid: child.pid ?? -1,
    exited: exitedPromise,
    hasExited: () => exited,
    kill: async () => {
      // Every process of the browser, known before they go: they are no children of ours (the
      // shell's), so only their own entries in /proc tell when they are gone.
      const processes = descendantsOf(child.pid);
      killGroup(child);
      // The browser itself was killed by someone else: its helpers (zygote, renderers, GPU) have
      // left its tree for init's, but are still in its process group, and may still write into
      // the profile. They go too, and the profile is removed once they are gone.
      if (child.exitCode !== null || child.signalCode !== null)
        processes.push(...killGroupLeftovers(child.pid));
      // The child is unref'd (a caller may exit without waiting for it); a caller that waits for
      // the kill must keep this process alive until the exit is seen.
      child.ref();
      try {
        await Promise.all([exitedPromise, allGone(processes)]);
      } finally {
        child.unref();
      }
      // With every process gone nothing writes into the directories any more.
      await removeAll(removable);
    },
    browserExited: async (timeoutMs) => {
      const browserPid = useWatchdog ? descendantsOf(child.pid, 1)[0] : child.pid;
      if (browserPid !== undefined && process.platform === "linux")
        return gone(browserPid, timeoutMs, waitReturned);
      child.ref();
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          exitedPromise.then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), timeoutMs);
          }),
        ]);
      } finally {
        clearTimeout(timer);
        child.unref();
      }
    },
    stderrTail,
  };
}

/** The processes under `pid` (its children, theirs, ...), down to `depth` generations. */
function descendantsOf(pid: number | undefined, depth = 8): number[] {
  if (pid === undefined || process.platform !== "linux") return [];
  const found: number[] = [];
  let generation = [pid];
  for (let d = 0; d < depth && generation.length; d++) {
    const next: number[] = [];
    for (const parent of generation) {
      let tasks: string[] = [];
      try {
        tasks = readdirSync(`/proc/${parent}/task`);
      } catch {
        continue;
      }
      for (const task of tasks) {
        try {
          const text = readFileSync(`/proc/${parent}/task/${task}/children`, "utf8").trim();
          if (text) next.push(...text.split(" ").map(Number));
        } catch {
          // the task ended while we looked
        }
      }
    }
    found.push(...next);
    generation = next;
  }
  return found;
}

/** Whether a process has ended (gone, or a zombie nobody needs to wait for). */
function ended(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

/**
 * Resolves true once `pid` has ended, or false after `timeoutMs`. A killed process ends within tens
 * of milliseconds (the kernel tears it down), so it is looked at every 2 ms at first: a longer
 * pause would be time close() waits for nothing. `sooner`, when it settles, is a sign the process
 * may have ended (the watchdog shell's wait for it returned): it is looked at then, at once. A
 * clean shutdown on a loaded machine outlasts the 2 ms phase, and its end would otherwise be
 * seen up to 20 ms late.
 */
async function gone(pid: number, timeoutMs: number, sooner?: Promise<void>): Promise<boolean> {
  const started = Date.now();
  let wake: (() => void) | undefined;
  let woken = false;
  sooner?.then(() => {
    woken = true;
    wake?.();
  });
  while (!ended(pid)) {
    const waited = Date.now() - started;
    if (waited >= timeoutMs) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waited < 200 ? 2 : 20);
      // Once only: a wait that returned for another reason (the shell was signalled) leaves the
      // ordinary looks.
      if (woken) return;
      wake = () => {
        wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
  }
  return true;
}

/** Resolves once every one of `pids` has ended (a killed process group takes milliseconds). */
async function allGone(pids: number[]): Promise<void> {
  await Promise.all(pids.map((pid) => gone(pid, 5_000)));
}

async function removeProfile(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined);
}

/**
 * The processes still in the process group `pgid` led by a browser that has exited, each killed
 * (Linux; elsewhere none are known). While one of them lives the group, and so its id, cannot be
 * taken by another process.
 */
function killGroupLeftovers(pgid: number | undefined): number[] {
  if (pgid === undefined || process.platform !== "linux") return [];
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command's closing parenthesis: state, ppid, pgrp.
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== pgid || ended(Number(entry))) continue;
      process.kill(Number(entry), "SIGKILL");
      found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

async function removeAll(dirs: readonly string[]): Promise<void> {
  await Promise.all(dirs.map(removeProfile));
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // detached: the child leads its own process group, so this reaches Chrome's helpers too.
    process.kill(process.platform === "win32" ? child.pid : -child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

function resolveExecutable(explicit: string | undefined): string {
  if (explicit) {
    if (!existsSync(explicit)) {
      throw new ServiceInitError(
        `localBrowserLaunchOptions.executablePath ${JSON.stringify(explicit)} does not exist. ` +
          "Point it at a Chrome or Chromium executable, or leave it unset to search the usual places.",
      );
    }
    return explicit;
  }
  const found = findChrome();
  if (!found) {
    throw new ServiceInitError(
      `No Chrome or Chromium was found. Looked at: ${chromeSearchPaths().join(", ")}. ` +
        "Install one (Debian/Ubuntu: `apt-get install chromium`), set CHROME_PATH, or pass " +
        "localBrowserLaunchOptions.executablePath.",
    );
  }
  return found;
}
