// The keeper's decision and the --idle-timeout durations, on a clock the test sets (the thing tested
// is time). cli.test.ts runs the keeper for real: a kept browser that goes unused is ended.

import { describe, expect, it } from "vitest";
import { duration, UsageError } from "../../src/cli/args.ts";
import { DEFAULT_IDLE_MS, keeperStep } from "../../src/cli/keeper.ts";

describe("the keeper of a kept browser", () => {
  const used = 1_000_000;

  it("waits while the browser was used within its idle timeout, looking again every 2 s at most", () => {
    expect(keeperStep(true, used, DEFAULT_IDLE_MS, used)).toEqual({ kind: "wait", ms: 2_000 });
    expect(keeperStep(true, used, DEFAULT_IDLE_MS, used + DEFAULT_IDLE_MS - 300)).toEqual({
      kind: "wait",
      ms: 300,
    });
  });

  it("ends the browser once it has gone unused for the idle timeout", () => {
    expect(keeperStep(true, used, DEFAULT_IDLE_MS, used + DEFAULT_IDLE_MS)).toEqual({ kind: "end" });
    expect(keeperStep(true, used, 1_000, used + 60_000)).toEqual({ kind: "end" });
  });

  it("stops keeping a browser that is gone, whatever the time", () => {
    expect(keeperStep(false, used, DEFAULT_IDLE_MS, used)).toEqual({ kind: "gone" });
  });

  it("defaults to five minutes", () => {
    expect(DEFAULT_IDLE_MS).toBe(300_000);
  });
});

describe("--idle-timeout", () => {
  it("takes milliseconds, or a number with s, m or h", () => {
    expect(duration("idle-timeout", "1500")).toBe(1_500);
    expect(duration("idle-timeout", "90s")).toBe(90_000);
    expect(duration("idle-timeout", "10m")).toBe(600_000);
    expect(duration("idle-timeout", "1.5h")).toBe(5_400_000);
    expect(duration("idle-timeout", "250ms")).toBe(250);
  });

  it("refuses nothing, zero, negatives, words and more than a day, saying what it takes", () => {
    for (const text of ["", "0", "-5", "soon", "10 minutes", "25h"])
      expect(() => duration("idle-timeout", text)).toThrow(UsageError);
    expect(() => duration("idle-timeout", "soon")).toThrow(
      '--idle-timeout takes a duration from 1 ms to 24h: milliseconds, or a number with s, m or h (90s, 10m); got "soon".',
    );
  });
});
