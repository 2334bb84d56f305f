import { defineConfig } from "vitest/config";

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

// One vitest run covers every workspace (each package is a project). Browser tests are heavy on a
// 2-core machine, so files run in a small pool of forks rather than one per core per project.
export default defineConfig({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    projects: ["packages/*"],
    onUnhandledError: (error) => !isPatchrightFloatingSessionClose(error),
  },
});
