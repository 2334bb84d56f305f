// What an operator scrapes and probes (issue 18): GET /metrics is nobody's by default and never a
// tenant's; with the operator's token (or on a port of its own) it is Prometheus text whose
// counters move when a session runs operations on a real browser with the scripted model. /readyz
// turns 503 with a reason when the database is closed, the browser pool cannot start browsers, or
// the event loop stalled beyond the threshold, and ready again after the stall.

import { match } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenMetrics, type MetricsListener } from "../src/metrics-route.ts";
import { startService } from "./helpers.ts";
import {
  eventually,
  type Fixtures,
  idOf,
  type LiveService,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";
import { rawCdpClient } from "./security/cdp-attacker.ts";

const TOKEN = "metrics-token-0123456789abcdef";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus text exposition (format 0.0.4), failing on any line that is not a comment, a
 * blank or a sample, and on a sample whose metric family has no TYPE line before it.
 */
function parseExposition(text: string): Sample[] {
  const typed = new Set<string>();
  const samples: Sample[] = [];
  const sampleLine =
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? ([^ ]+)(?: -?\d+)?$/;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      typed.add(type[1]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const sample = sampleLine.exec(line);
    if (!sample) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = sample;
    const family = name!.replace(/_(bucket|sum|count)$/, "");
    if (!typed.has(name!) && !typed.has(family)) throw new Error(`no TYPE line for ${name}`);
    // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case.
    const value = /^\+?inf$/i.test(valueText!)
      ? Infinity
      : /^-inf$/i.test(valueText!)
        ? -Infinity
        : /^nan$/i.test(valueText!)
          ? Number.NaN
          : Number(valueText);
    if (Number.isNaN(value) && !/^nan$/i.test(valueText!))
      throw new Error(`bad value in ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const label of (labelText ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1]!] = label[2]!;
    samples.push({ name: name!, labels, value });
  }
  return samples;
}

/** The value of one sample (0 when absent: a counter that never moved has no labelled sample). */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found?.value ?? 0;
}

describe("GET /metrics", () => {
  let svc: LiveService;
  let fx: Fixtures;
  let listener: MetricsListener;

  beforeAll(async () => {
    [svc, fx] = await Promise.all([startLiveService({ metricsToken: TOKEN }), startFixtures()]);
    listener = await listenMetrics(svc.service.metrics, { host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await listener?.close();
    await svc?.close();
    await fx?.close();
  });

  async function scrape(): Promise<Sample[]> {
    const response = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    return parseExposition(await response.text());
  }

  it("is off by default: 404, with or without a tenant's key", async () => {
    const plain = await startService();
    try {
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
      const withKey = await plain.call("/metrics");
      expect(withKey.status).toBe(404);
      expect(await withKey.json()).toMatchObject({ success: false, code: "NOT_FOUND" });
      expect((await plain.call("/v1/metrics")).status).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it("with a token: a tenant's API key, in any header, does not open it", async () => {
    const attempts: Record<string, string>[] = [
      { "x-platform-api-key": svc.key.key },
      { authorization: `Bearer ${svc.key.key}` },
      { authorization: `Bearer ${TOKEN}x` },
      {},
    ];
    for (const headers of attempts) {
      const response = await fetch(`${svc.url}/metrics`, { headers });
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(body).toMatchObject({ success: false, code: "UNAUTHORIZED" });
      expect(body.error).toContain("DECKHAND_METRICS_TOKEN");
    }
  });

  it("counts sessions, operations by kind and outcome, their latency and the model's tokens and cost", async () => {
    const before = await scrape();
    const id = await svc.start({ serverCache: false });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["bob"],
      description: "type the user name",
      completed: true,
    }));
    const acted = await ok<{ result: { success: boolean } }>(
      await svc.op(
        id,
        "act",
        { input: "type bob into the user name", options: { model: scriptedModelConfig(fx.model) } },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(acted.result.success).toBe(true);
    // A navigation that cannot load fails: counted as an error.
    const failed = await svc.op(id, "navigate", { url: "http://127.0.0.1:1/" });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    // The client has its answer before the session is done with the step (its screenshot is taken
    // after): the session is idle once that is over.
    await eventually(() => svc.service.sessions.get(id)?.pending === 0, 5000, "the session's last step");

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved("deckhand_sessions_started_total")).toBe(1);
    expect(sampleValue(after, "deckhand_sessions", { state: "idle" })).toBe(1);
    expect(sampleValue(after, "deckhand_sessions", { state: "busy" })).toBe(0);
    expect(moved("deckhand_operations_total", { kind: "navigate", outcome: "success" })).toBe(1);
    expect(moved("deckhand_operations_total", { kind: "navigate", outcome: "error" })).toBe(1);
    expect(moved("deckhand_operations_total", { kind: "act", outcome: "success" })).toBe(1);
    expect(moved("deckhand_operation_duration_seconds_count", { kind: "act", outcome: "success" })).toBe(1);
    expect(
      moved("deckhand_operation_duration_seconds_sum", { kind: "act", outcome: "success" }),
    ).toBeGreaterThan(0);
    expect(
      moved("deckhand_operation_duration_seconds_bucket", { kind: "act", outcome: "success", le: "+Inf" }),
    ).toBe(1);
    // The scripted model reports 100 input and 20 output tokens per answer; gpt-4.1-mini's price is known.
    expect(moved("deckhand_model_tokens_total", { direction: "input" })).toBe(100 * fx.model.callCount);
    expect(moved("deckhand_model_tokens_total", { direction: "output" })).toBe(20 * fx.model.callCount);
    expect(moved("deckhand_model_cost_dollars_total")).toBeCloseTo(
      (fx.model.callCount * (100 * 0.4 + 20 * 1.6)) / 1_000_000,
      9,
    );
    // Node's own: memory, open file descriptors, event-loop lag.
    expect(sampleValue(after, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sampleValue(after, "process_open_fds")).toBeGreaterThan(0);
    expect(after.some((sample) => sample.name === "deckhand_event_loop_lag_seconds")).toBe(true);
    // No tenant-chosen value is a label: not the session id, not the model's name, not the URL.
    const text = await (await fetch(listener.url)).text();
    expect(text).not.toContain(id);
    expect(text).not.toContain("gpt-4.1-mini");
    expect(text).not.toContain("form.html");

    // Sessions are read live at each scrape: an ended one is gone.
    await ok(await svc.op(id, "end"));
    expect(sampleValue(await scrape(), "deckhand_sessions", { state: "idle" })).toBe(0);
  }, 90_000);

  it("counts the CDP proxy's bytes each way, as the client sent and received them", async () => {
    const id = await svc.start();
    const client = await rawCdpClient(svc, id, svc.key.key);
    let received = 0;
    client.socket.on("message", (data: Buffer) => {
      received += data.length;
    });
    const before = await scrape();
    // A large answer (the page's text) as well as a small one: the proxy passes large ones on in pieces.
    const [tab] = await client.pages();
    const page = await client.attach(tab!.targetId);
    const big = await client.call<{ result: { value: string } }>(
      "Runtime.evaluate",
      { expression: "'x'.repeat(300000)", returnByValue: true },
      page,
    );
    expect(big.result.value).toHaveLength(300_000);
    const sent = [
      JSON.stringify({ id: 1, method: "Target.getTargets", params: {} }),
      JSON.stringify({
        id: 2,
        method: "Target.attachToTarget",
        params: { targetId: tab!.targetId, flatten: true },
      }),
      JSON.stringify({
        id: 3,
        method: "Runtime.evaluate",
        params: { expression: "'x'.repeat(300000)", returnByValue: true },
        sessionId: page,
      }),
    ];
    const after = await scrape();
    const moved = (direction: string) =>
      sampleValue(after, "deckhand_cdp_bytes_total", { direction }) -
      sampleValue(before, "deckhand_cdp_bytes_total", { direction });
    expect(moved("in")).toBe(sent.reduce((sum, text) => sum + Buffer.byteLength(text), 0));
    expect(moved("out")).toBe(received);
    expect(received).toBeGreaterThan(300_000);
    client.close();
    await ok(await svc.op(id, "end"));
  }, 60_000);

  it("on a port of its own: GET /metrics without a token, nothing else", async () => {
    const response = await fetch(listener.url);
    expect(response.status).toBe(200);
    expect(parseExposition(await response.text()).length).toBeGreaterThan(0);
    expect((await fetch(listener.url.replace("/metrics", "/v1/sessions/start"))).status).toBe(404);
    expect((await fetch(listener.url, { method: "POST" })).status).toBe(404);
  });
});

describe("/readyz", () => {
  it("503 with a reason when the event loop stalled beyond the threshold, ready again after", async () => {
    const svc = await startService({ readyMaxEventLoopLagMs: 1_000 });
    try {
      // Ready once no stall of the busy machine's own is in the window.
      await eventually(async () => (await fetch(`${svc.url}/readyz`)).status === 200, 60_000, "ready");
      expect(await (await fetch(`${svc.url}/readyz`)).json()).toEqual({ status: "ready" });
      // Block this process's event loop (the service's) on purpose, for three times the threshold.
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        // busy
      }
      const stalled = await fetch(`${svc.url}/readyz`);
      expect(stalled.status).toBe(503);
      const body = await stalled.json();
      expect(body.status).toBe("unavailable");
      expect(body.reason).toMatch(/event loop stalled for \d+ ms .*threshold 1000 ms/);
      // The stall leaves the 10 s window: ready again.
      await eventually(async () => (await fetch(`${svc.url}/readyz`)).status === 200, 60_000, "ready again");
    } finally {
      await svc.close();
    }
  }, 150_000);

  // A closed database: compat.test.ts ("readiness").

  it("503 naming the browsers when the pool has no Chromium to start", async () => {
    const svc = await startLiveService({ browsers: { executablePath: "/nonexistent/chromium" } });
    try {
      const response = await fetch(`${svc.url}/readyz`);
      expect(response.status).toBe(503);
      const body = await response.json();
      expect(body).toMatchObject({ status: "unavailable" });
      expect(body.reason).toContain("Chromium");
      expect(body.reason).not.toContain("/nonexistent");
    } finally {
      await svc.close();
    }
  });
});
