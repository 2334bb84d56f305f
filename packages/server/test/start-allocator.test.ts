// `npm start` runs the service on jemalloc (scripts/service-node-flags.mjs: glibc's malloc keeps
// the memory of large CDP messages; README "Operations: memory"). Started for real as npm start
// starts it (scripts/setup.mjs handing over to the service on the pinned Node), the service's own
// memory map is read: jemalloc is loaded, or with DECKHAND_MALLOC=system it is not; either way
// node runs it with the V8 settings of service-node-flags.mjs, and the service answers, runs a
// session in Chromium, and stops on Ctrl-C leaving nothing behind.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { processesMentioning, processTree } from "@deckhand/testkit";
import { describe, expect, it } from "vitest";
import {
  findJemalloc,
  SERVICE_NODE_FLAGS,
  serviceEnvironment,
} from "../../../scripts/service-node-flags.mjs";
import { eventually, QUIET_ARGS } from "./live-helpers.ts";
import { untilListening } from "./server-process.ts";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const KEY = "dh_allocator_test_0123456789abcdef";

describe("the service's allocator as npm start chooses it", () => {
  it("preloads jemalloc unless told otherwise, and keeps what LD_PRELOAD already had", () => {
    const found = findJemalloc();
    expect(serviceEnvironment({ DECKHAND_MALLOC: "system" }).env).toEqual({ DECKHAND_MALLOC: "system" });
    // Someone who preloads a jemalloc of their own keeps it.
    const own = { LD_PRELOAD: "/opt/jemalloc/lib/libjemalloc.so.2" };
    expect(serviceEnvironment(own).env).toEqual(own);
    const other = serviceEnvironment({ LD_PRELOAD: "/opt/trace.so", PATH: "/bin" });
    if (found) {
      expect(other.env).toEqual({ LD_PRELOAD: `${found} /opt/trace.so`, PATH: "/bin" });
      expect(other.allocator).toContain(found);
    } else {
      expect(other.env).toEqual({ LD_PRELOAD: "/opt/trace.so", PATH: "/bin" });
      expect(other.allocator).toBeUndefined();
    }
  });

  // setup.mjs --tests (npm test) installs Debian's libjemalloc2 as it does for npm start; a machine
  // without apt-get as root may lack it, and then only the fallback below can be checked.
  const jemalloc = findJemalloc();
  for (const system of [false, true]) {
    it.skipIf(!system && !jemalloc)(
      system
        ? "DECKHAND_MALLOC=system: the service runs on glibc's malloc"
        : "npm start's service has jemalloc in its memory and serves a session",
      async () => {
        const tmp = mkdtempSync(path.join(tmpdir(), "deckhand-allocator-"));
        const marker = `--deckhand-allocator-test=${process.pid}-${system}`;
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          TMPDIR: tmp,
          DECKHAND_API_KEYS: KEY,
          DECKHAND_LOG_LEVEL: "warn",
        };
        delete env.DATABASE_URL;
        delete env.LD_PRELOAD;
        if (system) env.DECKHAND_MALLOC = "system";
        else delete env.DECKHAND_MALLOC;
        const setup = spawn(
          process.execPath,
          [
            "scripts/setup.mjs",
            "--quiet",
            "--run",
            "packages/server/src/cli.ts",
            "--host=127.0.0.1",
            "--port=0",
            `--data-dir=${path.join(tmp, "data")}`,
            ...[...QUIET_ARGS, marker].map((arg) => `--browser-arg=${arg}`),
          ],
          { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
        );
        const { url: listening, exited } = untilListening(setup);
        try {
          const url = await listening;
          const service = processTree(setup.pid!).find((pid) => {
            const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
            return args.includes("packages/server/src/cli.ts") && !args.includes("scripts/setup.mjs");
          });
          expect(service, "the service's process under setup.mjs").toBeDefined();
          // With the V8 settings of service-node-flags.mjs on node's own command line.
          const args = readFileSync(`/proc/${service}/cmdline`, "utf8").split("\0");
          expect(args.slice(0, args.indexOf("packages/server/src/cli.ts"))).toEqual(
            expect.arrayContaining([...SERVICE_NODE_FLAGS]),
          );
          const maps = readFileSync(`/proc/${service}/maps`, "utf8");
          if (system) expect(maps).not.toMatch(/libjemalloc\.so/);
          else expect(maps).toContain(jemalloc!);

          // It serves: a session starts in Chromium, and ends.
          const headers = { "content-type": "application/json", "x-platform-api-key": KEY };
          const started = await fetch(`${url}/v1/sessions/start`, { method: "POST", headers, body: "{}" });
          const body = (await started.json()) as { success: boolean; data: { sessionId: string } };
          expect(started.status, JSON.stringify(body)).toBe(200);
          const ended = await fetch(`${url}/v1/sessions/${body.data.sessionId}/end`, {
            method: "POST",
            headers: { "x-platform-api-key": KEY },
          });
          expect(ended.status).toBe(200);
        } finally {
          // Ctrl-C, as npm start is stopped: setup.mjs passes it on once, the service stops.
          process.kill(-setup.pid!, "SIGINT");
          expect(await exited, "npm start's exit code after Ctrl-C").toBe(0);
        }
        // Nothing of it left: no Chromium with its marker, no profile or scratch directory (its
        // browser's last processes and profile go a moment after the service has exited).
        await eventually(() => processesMentioning(marker).length === 0, 30_000, "its Chromium to exit");
        await eventually(
          () => readdirSync(tmp).filter((entry) => entry !== "data").length === 0,
          30_000,
          "its temporary directories to go",
        );
        rmSync(tmp, { recursive: true, force: true });
      },
      180_000,
    );
  }
});
