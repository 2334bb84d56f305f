import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { TEST_FILES_AT_ONCE } from "./vitest.workers.ts";

/**
 * Patchright's page object starts `setRequestInterception(true)` in its constructor without
 * awaiting or catching it (patchright-core's CRPage). When a test lets go of the browser, or
 * closes a tab, while that call is still in flight, the library's own promise rejects with
 * "session closed" and nothing of ours can catch it. Only that rejection, thrown from inside
 * patchright-core, is ignored; every other unhandled error still fails the run.
 */
function isPatchrightFloatingSessionClose(error: { message?: string; stack?: string }): boolean {
  const stack = error.stack ?? "";
  const message = error.message ?? "";
  return (
    stack.includes("patchright-core") &&
    /session closed|Target closed|has been closed/i.test(message) &&
    /Network\.setCacheDisabled|Fetch\.enable|Network\.setRequestInterception/.test(`${message}\n${stack}`)
  );
}

// Node processes the tests start (the CLI, the examples, the service's command, helper scripts)
// run the TypeScript sources; Node's compile cache keeps what it made of them between processes
// and runs, which halves each start's CPU time. It lives in node_modules/.cache, not in the
// temporary directory the tests check for leftovers.
process.env.NODE_COMPILE_CACHE ??= join(
  dirname(fileURLToPath(import.meta.url)),
  "node_modules",
  ".cache",
  "node-compile-cache",
);

// One vitest run covers every workspace (each package is a project), its files in one pool of
// forks, TEST_FILES_AT_ONCE at a time (vitest.workers.ts; each project says it too, or it runs its
// files one by one); the tests wait for signals, not for numbers of milliseconds, so they do not
// mind sharing the machine. Each file has its own browsers, servers, temporary directories and
// database schema.
export default defineConfig({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    projects: ["packages/*"],
    pool: "forks",
    maxWorkers: TEST_FILES_AT_ONCE,
    onUnhandledError: (error) => !isPatchrightFloatingSessionClose(error),
  },
});
