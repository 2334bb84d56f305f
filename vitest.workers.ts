import { availableParallelism } from "node:os";

/**
 * How many test files run at once, in the root config and in every package's project. Each
 * project resolves its own `maxWorkers` (vitest's default is one fewer than the cores, so 1 on 2
 * cores); a project with 1 and isolated files runs them one after the other, whatever the root
 * says. That is how the whole suite ran one file at a time until the projects were given this.
 * Most of a browser test's time is waiting (for Chromium, a page, a child process), and each file
 * first spends a few seconds in a new worker importing the sources, so one more file than there
 * are cores runs at once: three on 2 cores. On an idle 2-core machine the whole suite took 542 s
 * with two at once and 460 s with three (README "Tests"). DECKHAND_TEST_FILES_AT_ONCE sets another
 * number, to measure one against another or to run one file at a time on a crowded machine.
 */
function filesAtOnce(): number {
  const asked = process.env.DECKHAND_TEST_FILES_AT_ONCE;
  if (asked === undefined || asked === "") return availableParallelism() + 1;
  const n = Number(asked);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(
      `DECKHAND_TEST_FILES_AT_ONCE must be a whole number of files, 1 or more; got "${asked}".`,
    );
  return n;
}

export const TEST_FILES_AT_ONCE = filesAtOnce();
