import { describe, expect, it } from "vitest";
import { emptyMetrics, MetricsRecorder } from "../../src/metrics.ts";

describe("MetricsRecorder", () => {
  it("starts with all 25 fields at zero", () => {
    const metrics = new MetricsRecorder().snapshot();
    expect(Object.keys(metrics)).toHaveLength(25);
    expect(Object.values(metrics).every((v) => v === 0)).toBe(true);
    expect(metrics).toEqual(emptyMetrics());
  });

  it("adds each call to its operation and keeps totals as the sums", () => {
    const recorder = new MetricsRecorder();
    recorder.record(
      "act",
      { promptTokens: 100, completionTokens: 20, reasoningTokens: 5, cachedInputTokens: 40 },
      300,
    );
    recorder.record("act", { promptTokens: 50, completionTokens: 10 }, 100);
    recorder.record(
      "extract",
      { promptTokens: 7, completionTokens: 3, reasoningTokens: 1, cachedInputTokens: 2 },
      12,
    );
    const m = recorder.snapshot();
    expect(m.actPromptTokens).toBe(150);
    expect(m.actCompletionTokens).toBe(30);
    expect(m.actReasoningTokens).toBe(5);
    expect(m.actCachedInputTokens).toBe(40);
    expect(m.actInferenceTimeMs).toBe(400);
    expect(m.extractPromptTokens).toBe(7);
    expect(m.observePromptTokens).toBe(0);
    expect(m.totalPromptTokens).toBe(157);
    expect(m.totalCompletionTokens).toBe(33);
    expect(m.totalReasoningTokens).toBe(6);
    expect(m.totalCachedInputTokens).toBe(42);
    expect(m.totalInferenceTimeMs).toBe(412);
  });

  it("adds usage from elsewhere, and whole records whose totals it recomputes", () => {
    const recorder = new MetricsRecorder();
    recorder.add("agent", { promptTokens: 10, inferenceTimeMs: 5 });
    recorder.addMetrics({ observePromptTokens: 3, observeCompletionTokens: 2, totalPromptTokens: 999 });
    const m = recorder.snapshot();
    expect(m.agentPromptTokens).toBe(10);
    expect(m.agentInferenceTimeMs).toBe(5);
    expect(m.observePromptTokens).toBe(3);
    expect(m.totalPromptTokens).toBe(13);
    expect(m.totalCompletionTokens).toBe(2);
  });

  it("ignores numbers that cannot be counts", () => {
    const recorder = new MetricsRecorder();
    recorder.add("act", { promptTokens: Number.NaN, completionTokens: -4 });
    expect(recorder.snapshot().totalPromptTokens).toBe(0);
    expect(recorder.snapshot().totalCompletionTokens).toBe(0);
  });

  it("returns copies, and reset starts over", () => {
    const recorder = new MetricsRecorder();
    recorder.add("act", { promptTokens: 1 });
    const before = recorder.snapshot();
    recorder.add("act", { promptTokens: 1 });
    expect(before.actPromptTokens).toBe(1);
    recorder.reset();
    expect(recorder.snapshot().actPromptTokens).toBe(0);
  });
});
