// Runs the real `deckhand` executable (src/cli/bin.ts under the pinned Node, from the workspace
// sources) as a child process, as a person or a script would.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../src/cli/bin.ts", import.meta.url));
export const NODE_ARGS = ["--conditions=deckhand-source", "--no-warnings", BIN];

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON object a command prints when not on a terminal. */
  json: Record<string, unknown>;
}

/** Environment without any model key (a fresh machine), plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env))
    if (/_API_KEY$/.test(key) || key.startsWith("DECKHAND_VAR_")) delete env[key];
  return { ...env, ...extra };
}

/**
 * Runs one `deckhand` command. `timeout` kills it: a bound only a stall reaches. Each command is a
 * Node process that starts (and most launch) a browser; with the CLI file's tests at once beside
 * a busy machine (a busy-loop run of the suite: load average above 30) one took over 60 s.
 */
export function deckhand(args: string[], env: NodeJS.ProcessEnv, timeout = 150_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...NODE_ARGS, ...args], { env, timeout }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
      } catch {
        // not JSON (help text)
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
