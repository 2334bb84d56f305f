// The Deckhand service for the benchmarks: `deckhand-server` as a child process on 127.0.0.1 (as it
// is deployed: its own process, its own event loop), with a scratch data directory and an operator
// key, and a marker on its Chromium's command line so that its profiles are tracked for the leak
// check at the end of the run.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { liveChromeProcesses, waitForNoChrome } from "@deckhand/testkit";
import { SERVICE_NODE_FLAGS, serviceEnvironment } from "../../scripts/service-node-flags.mjs";
import { BENCH_TMP_PREFIX, QUIET_ARGS, rememberDir } from "./browser.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SERVER_CLI = join(ROOT, "packages", "server", "src", "cli.ts");

export interface ServiceProcess {
  /** http://127.0.0.1:port */
  url: string;
  /** An operator key (DECKHAND_API_KEYS) to call it with. */
  apiKey: string;
  /** Every operator key, one project each (`keys` of startServiceProcess; the first is apiKey). */
  apiKeys: string[];
  /** The service's process id. */
  pid: number;
  /** What it printed on stdout so far (its address, its metrics address). */
  stdout(): string;
  /** Remembers the profile of every Chromium the service runs now, for the final leak check. */
  trackProfiles(): void;
  /** Stops it (SIGTERM: it ends its sessions and closes its browsers) and removes its data. */
  close(): Promise<void>;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface ServiceProcessOptions {
  /** More deckhand-server flags. */
  args?: string[];
  /** Operator keys to make, each its own project (default 1). */
  keys?: number;
}

export async function startServiceProcess(options: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), `${BENCH_TMP_PREFIX}service-`));
  rememberDir(dataDir);
  const apiKeys = Array.from(
    { length: Math.max(1, options.keys ?? 1) },
    () => `dh_bench_${randomBytes(16).toString("hex")}`,
  );
  const apiKey = apiKeys[0]!;
  const marker = `--deckhand-bench-service=${randomBytes(6).toString("hex")}`;
  const child = spawn(
    process.execPath,
    [
      "--conditions=deckhand-source",
      "--no-warnings",
      // As npm start runs it (unless DECKHAND_BENCH_SERVICE_NODE_ARGS says otherwise: V8 takes the last).
      ...SERVICE_NODE_FLAGS,
      // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": a profile of the service alone (NODE_OPTIONS
      // may not carry --cpu-prof, and would profile the bench as well).
      ...(process.env.DECKHAND_BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      SERVER_CLI,
      "--host=127.0.0.1",
      "--port=0",
      `--data-dir=${dataDir}`,
      ...[...QUIET_ARGS, marker].map((arg) => `--browser-arg=${arg}`),
      ...(options.args ?? []),
    ],
    {
      // With jemalloc preloaded, as npm start runs it (DECKHAND_MALLOC=system: glibc's malloc).
      env: { ...serviceEnvironment().env, DECKHAND_API_KEYS: apiKeys.join(","), DECKHAND_LOG_LEVEL: "error" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      if (!(await waitForExit(child, 20_000))) {
        child.kill("SIGKILL");
        await waitForExit(child, 5_000);
      }
    }
    await waitForNoChrome(marker, 10_000);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`deckhand-server did not start in 30 s: ${output}`)),
        30_000,
      );
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`deckhand-server exited during start-up (code ${code}): ${output.slice(-800)}`));
      });
    });
    return {
      url,
      apiKey,
      apiKeys,
      pid: child.pid!,
      stdout: () => output,
      trackProfiles: () => {
        for (const chrome of liveChromeProcesses(marker)) {
          const dir = chrome.args.find((a) => a.startsWith("--user-data-dir="));
          if (dir) rememberDir(dir.slice("--user-data-dir=".length));
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
