// The deckhand-server command in a process of its own, as an operator runs it (the TypeScript
// source on Node 24), for tests that signal or kill it: its address once it listens, everything it
// wrote, and how it ended.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { QUIET_ARGS } from "./live-helpers.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const node = path.resolve(here, "../../../node_modules/.bin/node");
const cli = path.resolve(here, "../src/cli.ts");

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /**
   * The process's own temporary directory (its TMPDIR: browser profiles and scratch directories go
   * there). `leftovers()` lists what is in it; `removeTmp()` deletes it.
   */
  tmp: string;
  leftovers(): string[];
  removeTmp(): void;
  /** Standard output and error so far. */
  output(): string;
  /** Resolves with the exit code (null: killed by a signal) once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `deckhand-server --port 0 ...args` with its pool browsers marked by `marker` (for leak
 * checks), and waits for its "listening on" line.
 */
export async function startServerProcess(
  args: string[],
  options: {
    marker: string;
    env?: NodeJS.ProcessEnv /** Share this TMPDIR (one machine's). */;
    tmp?: string;
  },
): Promise<ServerProcess> {
  const tmp = options.tmp ?? mkdtempSync(path.join(tmpdir(), "deckhand-server-process-"));
  const env: NodeJS.ProcessEnv = { ...process.env, DECKHAND_LOG_LEVEL: "warn", TMPDIR: tmp, ...options.env };
  delete env.DATABASE_URL;
  const browserArgs = [...QUIET_ARGS, options.marker].map((arg) => `--browser-arg=${arg}`);
  const child = spawn(
    node,
    ["--conditions=deckhand-source", "--no-warnings", cli, "--port", "0", ...browserArgs, ...args],
    {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const started = untilListening(child);
  const { exited } = started;
  const url = await started.url;
  return {
    child,
    url,
    tmp,
    leftovers: () => readdirSync(tmp),
    removeTmp: () => rmSync(tmp, { recursive: true, force: true }),
    output: started.output,
    exited,
  };
}

/**
 * Collects a service process's output and waits for its "listening on" line: the address, or a
 * rejection with the output when it exits first or has not listened after two minutes (a bound
 * for a process that never starts, not a measure of start-up: loading the TypeScript source took
 * 21 s for one process on this machine at a load of 60; then it is killed).
 */
export function untilListening(child: ChildProcess): {
  url: Promise<string>;
  output(): string;
  exited: Promise<number | null>;
} {
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`deckhand-server did not start listening: ${output}`));
    }, 120_000);
    const onData = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`deckhand-server exited (${code}) before listening: ${output}`));
    });
  });
  return { url, output: () => output, exited };
}
