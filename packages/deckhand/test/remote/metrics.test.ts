// `metrics` of a REMOTE client come from the service's replay record of the session (GET
// /v1/sessions/{id}/replay): the sums of its operations' token usage, the same for every client of
// the session. The record keeps input and output tokens and time; reasoning and cached-input tokens
// are not in it and read 0.

import { match, type ScriptedRequest } from "@deckhand/testkit";
import type { DeckhandMetrics } from "deckhand";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { Replay } from "../support/service.ts";
import { type RemoteFixture, remoteFixture } from "./helpers.ts";

let fx: RemoteFixture;
beforeAll(async () => {
  fx = await remoteFixture();
});
afterAll(async () => {
  await fx?.close();
});
afterEach(() => {
  fx.model.clear();
});

function incrementId(request: ScriptedRequest): number {
  return Number(/\[(\d+)\] button: Increment/.exec(request.text)![1]);
}

/** Scripted answers for act, observe and extract, each with its own usage. */
function scriptWithUsage(): void {
  fx.model.on(
    match.schemaName("act"),
    (request) => ({
      elementId: incrementId(request),
      method: "click",
      arguments: [],
      description: "click Increment",
      completed: true,
    }),
    { usage: { promptTokens: 1_000, completionTokens: 50, reasoningTokens: 10 }, latencyMs: 40 },
  );
  fx.model.on(
    match.schemaName("observe"),
    { elements: [] },
    { usage: { promptTokens: 300, completionTokens: 30 } },
  );
  fx.model.on(
    match.schemaName("extract"),
    { extraction: "1" },
    { usage: { promptTokens: 700, completionTokens: 70, cachedPromptTokens: 100 } },
  );
}

/** Input tokens, output tokens and time of the replay's actions of one method (all methods: "total"). */
function sums(replay: Replay, method: string): [number, number, number] {
  const usages = replay.pages
    .flatMap((p) => p.actions)
    .filter((a) => method === "total" || a.method === method)
    .map((a) => a.tokenUsage ?? {});
  return [
    usages.reduce((n, u) => n + (u.inputTokens ?? 0), 0),
    usages.reduce((n, u) => n + (u.outputTokens ?? 0), 0),
    usages.reduce((n, u) => n + (u.timeMs ?? 0), 0),
  ];
}

function figures(
  m: DeckhandMetrics,
  prefix: "act" | "extract" | "observe" | "total",
): [number, number, number] {
  return [m[`${prefix}PromptTokens`], m[`${prefix}CompletionTokens`], m[`${prefix}InferenceTimeMs`]];
}

it("are the sums of the token usage in the session's replay, per operation and in total", async () => {
  const dh = await fx.started({ serverCache: false });
  await dh.page.goto(fx.site.url("index.html"));
  scriptWithUsage();
  await dh.act("click increment");
  await dh.observe("find a link");
  await dh.extract("what is the count?");

  const metrics = await dh.metrics;
  const replay = await fx.service.replay(dh.sessionId!);
  for (const prefix of ["act", "extract", "observe", "total"] as const)
    expect(figures(metrics, prefix)).toEqual(sums(replay, prefix));
  expect([metrics.actPromptTokens, metrics.actCompletionTokens]).toEqual([1_000, 50]);
  expect([metrics.observePromptTokens, metrics.observeCompletionTokens]).toEqual([300, 30]);
  expect([metrics.extractPromptTokens, metrics.extractCompletionTokens]).toEqual([700, 70]);
  expect([metrics.totalPromptTokens, metrics.totalCompletionTokens]).toEqual([2_000, 150]);
  // The act's model answer took 40 ms at least; the totals add up the operations.
  expect(metrics.actInferenceTimeMs).toBeGreaterThanOrEqual(40);
  expect(metrics.totalInferenceTimeMs).toBe(
    metrics.actInferenceTimeMs + metrics.extractInferenceTimeMs + metrics.observeInferenceTimeMs,
  );
  // Not in the record: reasoning and cached-input tokens.
  expect([metrics.totalReasoningTokens, metrics.totalCachedInputTokens]).toEqual([0, 0]);
});

it("are the session's, whichever client asks: a client that resumed it reads the same figures", async () => {
  const first = await fx.started({ keepAlive: true, serverCache: false });
  await first.page.goto(fx.site.url("index.html"));
  scriptWithUsage();
  await first.act("click increment");
  const before = await first.metrics;
  await first.close();

  const second = await fx.started({ sessionId: first.sessionId!, serverCache: false });
  expect(await second.metrics).toEqual(before);
  await second.extract("what is the count?");
  const after = await second.metrics;
  expect(after.actPromptTokens).toBe(1_000);
  expect(after.extractPromptTokens).toBe(700);
  await second.close();
});

it("count no tokens for an answer the server cache served", async () => {
  const dh = await fx.started({ apiKey: await fx.service.createKey() });
  await dh.page.goto(fx.site.url("index.html"));
  scriptWithUsage();
  expect(await dh.extract("what is the count?")).toMatchObject({ cacheStatus: "MISS" });
  const before = await dh.metrics;
  expect(await dh.extract("what is the count?")).toMatchObject({ cacheStatus: "HIT" });
  expect(await dh.metrics).toEqual(before);
  await dh.close();
});
