// The Deckhand a command works with. Without --keep-open: a browser of its own (or a REMOTE
// session), ended when the command ends. With --keep-open: the browser is launched with keepAlive
// (it outlives the command) and its address is written to a state file; the next command attaches
// to it, and `deckhand close` ends it and removes its profile. REMOTE: the session is started with
// keepAlive and the next command resumes it by id.
//
// The state file is $DECKHAND_CLI_STATE, or ~/.deckhand/cli-session.json; it holds no key.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Deckhand } from "../deckhand.ts";
import { ServiceBrowserClosedError, ServiceError, ServiceInitError } from "../errors.ts";
import type { DeckhandOptions } from "../options.ts";
import type { LogLine } from "../types.ts";
import type { CommonOptions } from "./args.ts";

interface KeptLocal {
  kind: "local";
  cdpUrl: string;
  pid: number;
  userDataDir: string;
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
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
    const dh = new Deckhand({
      ...base,
      env: "LOCAL",
      keepAlive: true,
      localBrowserLaunchOptions: { cdpUrl: kept.cdpUrl },
    });
    await dh.init();
    return { dh, reused: true, done: () => dh.close() };
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
    writeKept({
      kind: "local",
      cdpUrl: dh.connectURL(),
      pid: launched.pid,
      userDataDir: launched.userDataDir,
    });
  }
  return { dh, reused: false, done: () => dh.close() };
}

/** `deckhand close`: ends what --keep-open kept. Answers what it ended, or undefined. */
export async function closeKept(): Promise<string | undefined> {
  const kept = readKept();
  rmSync(statePath(), { force: true });
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
  if (alive(kept.pid)) {
    // The browser leads its own process group (it was launched detached): its helpers go too.
    try {
      process.kill(-kept.pid, "SIGTERM");
    } catch {
      process.kill(kept.pid, "SIGTERM");
    }
    for (let i = 0; i < 100 && alive(kept.pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (alive(kept.pid)) process.kill(-kept.pid, "SIGKILL");
  }
  rmSync(kept.userDataDir, { recursive: true, force: true });
  return `browser ${kept.pid}`;
}
