import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
