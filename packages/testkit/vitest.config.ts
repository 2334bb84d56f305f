import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    name: "testkit",
    include: ["test/**/*.test.ts"],
    // Backstops for a stall, not measures of speed: a test waits for signals, and on a loaded
    // 2-core machine (other work beside the suite) a browser test can take several times as long.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
