import { defineConfig } from "vitest/config";

// One vitest run covers every workspace (each package is a project). Browser tests are heavy on a
// 2-core machine, so files run in a small pool of forks rather than one per core per project.
export default defineConfig({
  resolve: { conditions: ["deckhand-source"] },
  ssr: { resolve: { conditions: ["deckhand-source"], externalConditions: ["deckhand-source"] } },
  test: {
    projects: ["packages/*"],
  },
});
