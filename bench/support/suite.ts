// The shape of one benchmark suite, as bench/run.ts registers and runs it.

import type { SuiteOutput } from "./report.ts";

export interface SuiteContext {
  /** `--quick`: fewer repetitions, same measurements. */
  quick: boolean;
  /** Repetitions to use: `full` normally, `quick` (default a third of full, at least 2) with --quick. */
  reps(full: number, quick?: number): number;
  /** `--soak-minutes=N`: how long each run of the soak suite lasts (its default: 15). */
  soakMinutes?: number | undefined;
  /** A progress line on stderr (the tables go to stdout). */
  progress(message: string): void;
}

export interface Suite {
  /** The name `--only=` takes. */
  name: string;
  /** One line on what it measures. */
  title: string;
  /** Left out of a run without --only (it takes long: the soak). */
  onlyWhenNamed?: boolean;
  run(ctx: SuiteContext): Promise<SuiteOutput>;
}
