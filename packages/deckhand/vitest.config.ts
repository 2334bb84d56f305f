import { defineProject } from "vitest/config";
import { TEST_FILES_AT_ONCE } from "../../vitest.workers.ts";

export default defineProject({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    name: "deckhand",
    include: ["test/**/*.test.ts"],
    // The root's number: a project left to vitest's default runs its files one at a time.
    maxWorkers: TEST_FILES_AT_ONCE,
    // Per-file CPU seconds when DECKHAND_TEST_CPU_LOG is set (README "Tests").
    setupFiles: ["../testkit/src/cpu-account.ts"],
    // Backstops for a stall, not measures of speed: a test waits for signals, and on a loaded
    // 2-core machine (other work beside the suite) a browser test can take several times as long.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
