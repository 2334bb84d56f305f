// The Deckhand a command works with. Without --keep-open: a browser of its own (or a REMOTE
// session), ended when the command ends. With --keep-open: the browser is launched with keepAlive
// (it outlives the command) and its address is written to a state file; the next command attaches
// to it, and `deckhand close` ends it and removes its profile. A kept browser that no command uses
// for its idle timeout (--idle-timeout, default five minutes) is ended by its keeper (keeper.ts).
// REMOTE: the session is started with keepAlive and the next command resumes it by id.
//
// The state file is $DECKHAND_CLI_STATE, or ~/.deckhand/cli-session.json; it holds no key.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Deckhand } from "../deckhand.ts";
import { ServiceBrowserClosedError, ServiceError, ServiceInitError } from "../errors.ts";
import type { RecordedRow } from "../history.ts";
import type { DeckhandOptions } from "../options.ts";
import type { LogLine } from "../types.ts";
import type { CommonOptions } from "./args.ts";
import { alive, DEFAULT_IDLE_MS, inUseMarker, startKeeper, stopBrowser } from "./keeper.ts";

interface KeptLocal {
  kind: "local";
  cdpUrl: string;
  pid: number;
  userDataDir: string;
  /** The keeper process that ends the browser after idleMs without use. */
  keeperPid?: number;
  idleMs?: number;
  /** When a command last used the browser (ms since the epoch). */
  lastUsedAt?: number;
}
interface KeptRemote {
  kind: "remote";
  apiUrl: string;
  sessionId: string;
}
type Kept = KeptLocal | KeptRemote;

export function statePath(env: NodeJS.ProcessEnv = process.env): string {
  return env.DECKHAND_CLI_STATE || join(homedir(), ".deckhand", "cli-session.json");
}

function readKept(): Kept | undefined {
  const path = statePath();
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Kept;
  } catch {
    return undefined;
  }
}

function writeKept(kept: Kept): void {
  const path = statePath();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
}

/**
 * What the commands on a kept LOCAL browser did, in the replay record's shape (variable values
 * already masked), next to the state file: each command is its own process and Deckhand, so the
 * record `deckhand export` reads is carried from one to the next here.
 */
function recordPath(): string {
  return `${statePath()}.record.json`;
}

function readRecord(): RecordedRow[] {
  try {
    const rows = JSON.parse(readFileSync(recordPath(), "utf8")) as unknown;
    return Array.isArray(rows) ? (rows as RecordedRow[]) : [];
  } catch {
    return [];
  }
}

function writeRecord(dh: Deckhand): void {
  try {
    writeFileSync(recordPath(), `${JSON.stringify(dh.historyRecorder.recordedRows())}\n`, { mode: 0o600 });
  } catch {
    // The record only serves `deckhand export`; a command's own work does not depend on it.
  }
}

/**
 * Marks the kept browser as in use by this command until the returned release is called: a marker
 * file next to the state file names this process (its keeper does not end a browser a live
 * command holds, however long the command runs), and the state file gets the time of use, again
 * at the release (the keeper counts the idle time from there). `idleMs`, when given, becomes the
 * browser's idle timeout.
 */
function holdKept(kept: KeptLocal, idleMs: number | undefined): () => void {
  const marker = inUseMarker(statePath(), process.pid);
  const mark = () => {
    // Another command may have closed it, or kept another browser meanwhile: only ours is marked.
    const now = readKept();
    if (now?.kind !== "local" || now.pid !== kept.pid) return;
    writeKept({ ...now, lastUsedAt: Date.now(), ...(idleMs !== undefined ? { idleMs } : {}) });
  };
  try {
    writeFileSync(marker, `${kept.pid}\n`, { mode: 0o600 });
  } catch {
    // No marker (a read-only directory): the time of use below still counts.
  }
  mark();
  return () => {
    mark();
    rmSync(marker, { force: true });
  };
}

/** Whether `pid` is still the keeper of the browser with this profile (not a reused pid); Linux only. */
function isKeeperOf(pid: number, userDataDir: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes("--keeper") && args.includes(userDataDir);
  } catch {
    return false; // gone, or no /proc: the keeper exits by itself once the browser is gone
  }
}

/** The service --remote names (or the one --keep-open kept) did not answer: exit code 6. */
export class ServiceUnreachableError extends ServiceError {
  override readonly code = "SERVICE_UNREACHABLE";
}

/**
 * Why a REMOTE session could not start, in the command's terms: an address that does not answer
 * names the flag it came from, not the library's `apiUrl` option.
 */
function remoteStartError(error: unknown, apiUrl: string, fromFlag: boolean): unknown {
  const unreachable = error instanceof ServiceInitError && error.cause instanceof ServiceBrowserClosedError;
  if (!unreachable) return error;
  const why = /could not be reached \((.*)\)\. Is it running\?/.exec((error.cause as Error).message)?.[1];
  return new ServiceUnreachableError(
    `The Deckhand service at ${apiUrl} could not be reached${why ? ` (${why})` : ""}. Is it running? ` +
      (fromFlag
        ? "Check the address after --remote."
        : "It is the one an earlier --keep-open kept; `deckhand close` forgets it."),
    { cause: error },
  );
}

/** Launch Chromium quietly: no calls home at start-up (harmless elsewhere, needed on closed networks). */
const QUIET_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run"];

export interface OpenedSession {
  dh: Deckhand;
  /** Whether this command attached to a browser or session kept by an earlier one. */
  reused: boolean;
  /** Ends the command's hold on it (keeps it when --keep-open). */
  done(): Promise<void>;
}

export async function openSession(
  common: CommonOptions,
  logger: ((line: LogLine) => void) | undefined,
): Promise<OpenedSession> {
  const model: DeckhandOptions["model"] = common.model
    ? common.baseUrl
      ? { modelName: common.model, baseURL: common.baseUrl }
      : common.model
    : common.baseUrl
      ? { modelName: "openai/gpt-4.1-mini", baseURL: common.baseUrl }
      : undefined;
  const base: Partial<DeckhandOptions> = {
    verbose: logger ? 1 : 0,
    disablePino: true,
    ...(logger ? { logger } : {}),
    ...(model ? { model } : {}),
  };
  const kept = readKept();

  if (common.remote || kept?.kind === "remote") {
    const apiUrl = common.remote ?? (kept as KeptRemote).apiUrl;
    const resume = kept?.kind === "remote" && kept.apiUrl === apiUrl ? kept.sessionId : undefined;
    const dh = new Deckhand({
      ...base,
      env: "REMOTE",
      apiUrl,
      ...(resume ? { sessionId: resume } : {}),
      ...(common.keepOpen || resume ? { keepAlive: true } : {}),
    });
    try {
      await dh.init();
    } catch (error) {
      throw remoteStartError(error, apiUrl, common.remote !== undefined);
    }
    if (common.keepOpen && dh.sessionId) writeKept({ kind: "remote", apiUrl, sessionId: dh.sessionId });
    return { dh, reused: resume !== undefined, done: () => dh.close() };
  }

  if (kept?.kind === "local" && alive(kept.pid)) {
    const release = holdKept(kept, common.idleTimeout);
    const dh = new Deckhand({
      ...base,
      env: "LOCAL",
      keepAlive: true,
      localBrowserLaunchOptions: { cdpUrl: kept.cdpUrl },
    });
    try {
      await dh.init();
    } catch (error) {
      release();
      throw error;
    }
    for (const row of readRecord()) dh.historyRecorder.recordRow(row);
    return {
      dh,
      reused: true,
      done: async () => {
        try {
          writeRecord(dh);
          await dh.close();
        } finally {
          release();
        }
      },
    };
  }

  const dh = new Deckhand({
    ...base,
    env: "LOCAL",
    ...(common.keepOpen ? { keepAlive: true } : {}),
    localBrowserLaunchOptions: { headless: !common.headed, args: QUIET_ARGS },
  });
  await dh.init();
  const launched = dh.context.browser.launched;
  if (common.keepOpen && launched) {
    const idleMs = common.idleTimeout ?? DEFAULT_IDLE_MS;
    const kept: KeptLocal = {
      kind: "local",
      cdpUrl: dh.connectURL(),
      pid: launched.pid,
      userDataDir: launched.userDataDir,
      idleMs,
      lastUsedAt: Date.now(),
    };
    writeKept(kept);
    // Held by this command before its keeper starts: the keeper's first look sees it in use.
    const release = holdKept(kept, undefined);
    const keeperPid = startKeeper(statePath(), launched.pid, launched.userDataDir, idleMs);
    writeKept({ ...(readKept() ?? kept), keeperPid } as KeptLocal);
    return {
      dh,
      reused: false,
      done: async () => {
        try {
          writeRecord(dh);
          await dh.close();
        } finally {
          release();
        }
      },
    };
  }
  return { dh, reused: false, done: () => dh.close() };
}

/** `deckhand close`: ends what --keep-open kept. Answers what it ended, or undefined. */
export async function closeKept(): Promise<string | undefined> {
  const kept = readKept();
  rmSync(statePath(), { force: true });
  rmSync(recordPath(), { force: true });
  if (!kept) return undefined;
  if (kept.kind === "remote") {
    const dh = new Deckhand({
      env: "REMOTE",
      apiUrl: kept.apiUrl,
      sessionId: kept.sessionId,
      verbose: 0,
      disablePino: true,
    });
    await dh.init();
    await dh.close();
    return `remote session ${kept.sessionId}`;
  }
  // Its keeper first (it has nothing left to do), then the browser, which leads its own process
  // group (it was launched detached): its helpers go too.
  if (kept.keeperPid && isKeeperOf(kept.keeperPid, kept.userDataDir)) {
    try {
      process.kill(kept.keeperPid, "SIGTERM");
    } catch {
      // gone meanwhile
    }
  }
  await stopBrowser(kept.pid);
  rmSync(kept.userDataDir, { recursive: true, force: true, maxRetries: 3 });
  return `browser ${kept.pid}`;
}
