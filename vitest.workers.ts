import { availableParallelism } from "node:os";

/**
 * How many test files run at once, in the root config and in every package's project. Each
 * project resolves its own `maxWorkers` (vitest's default is one fewer than the cores, so 1 on 2
 * cores); a project with 1 and isolated files runs them one after the other, whatever the root
 * says. That is how the whole suite ran one file at a time until the projects were given this.
 * Most of a browser test's time is waiting (for Chromium, a page, a child process), so two files
 * run at once even on 2 cores.
 */
export const TEST_FILES_AT_ONCE = Math.max(2, availableParallelism() - 1);
