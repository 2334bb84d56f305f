// What an agent tool answers when its time (toolTimeout) runs out, whichever side notices first:
// the tool's own timer, or a step inside it that retries until its limit (never past the tool's)
// and fails in its own words. A busy event loop runs the timer late, so the second happens under
// load; the model must hear the same either way. No browser: the tool's work is a function here,
// and the event loop is held past the tool's end the way a loaded machine holds it.

import { describe, expect, it } from "vitest";
import { LoopDetector } from "../../src/agent/stuck.ts";
import { newRunState, step, type ToolContext } from "../../src/agent/tools.ts";
import type { AgentHost } from "../../src/agent/types.ts";
import type { Page } from "../../src/browser/page.ts";
import { Deadline } from "../../src/deadline.ts";
import { SecretRedactor } from "../../src/log.ts";

function context(toolTimeout: number): ToolContext {
  const redactor = new SecretRedactor();
  return {
    host: { redactor } as unknown as AgentHost,
    // Only asked whether it is closed, for the recorded action's URL.
    page: { isClosed: () => true } as unknown as Page,
    mode: "dom",
    variables: undefined,
    executionModel: undefined,
    toolTimeout,
    deadline: Deadline.start("the agent run"),
    output: undefined,
    loop: new LoopDetector(),
    state: newRunState(),
  };
}

/** Holds the event loop until the deadline has no time left (no timer can run meanwhile). */
function holdUntilOver(deadline: Deadline): void {
  while (deadline.timeLeft() > 0) {
    // A loaded machine: the tool's timer is due, but nothing runs it.
  }
}

describe("an agent tool that runs out of time", () => {
  it("says so with its call log when a step inside it gave up first, in its own words", async () => {
    const ctx = context(200);
    const answer = await step(ctx, "extract", { instruction: "prices" }, async (deadline) => {
      deadline.log("waiting for the page to settle");
      holdUntilOver(deadline);
      // What a step whose retries ran out (at the tool's end) makes of it.
      return { success: false, message: "Covered by <div id=overlay>" };
    });
    expect(answer.success).toBe(false);
    expect(answer.error).toBe(
      "The extract tool did not finish within 200 ms and was stopped.\nCall log:\n  - waiting for the page to settle",
    );
    expect(ctx.state.actions[0]).toMatchObject({ type: "extract", success: false });
  });

  it("says the same when its own timer stopped the work", async () => {
    const ctx = context(200);
    const answer = await step(ctx, "extract", { instruction: "prices" }, async (deadline) => {
      deadline.log("waiting for the page to settle");
      await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve, { once: true }));
      return { success: false, message: "never heard" };
    });
    expect(answer.error).toBe(
      "The extract tool did not finish within 200 ms and was stopped.\nCall log:\n  - waiting for the page to settle",
    );
  });

  it("passes on a failure that came with time left, and a success at the last moment", async () => {
    const early = await step(context(60_000), "extract", {}, async () => ({
      success: false,
      message: "No prices",
    }));
    expect(early).toEqual({ success: false, message: "No prices" });
    const ctx = context(200);
    const late = await step(ctx, "extract", {}, async (deadline) => {
      holdUntilOver(deadline);
      return { success: true, data: [1] };
    });
    expect(late).toEqual({ success: true, data: [1] });
  });
});
