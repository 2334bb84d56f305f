// SIGTERM to a real deckhand-server process with a streamed operation in flight (a model that
// takes its time): the client gets the stream's final `error` event (SHUTTING_DOWN) and a properly
// ended stream, a JSON request in flight gets a 503 in the service's shape, and the process exits
// cleanly with no browser left behind.

import crypto from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { match, waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fixtures, parseEvents, startFixtures } from "./live-helpers.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

describe("SIGTERM with operations in flight", () => {
  const apiKey = `operator-key-${crypto.randomBytes(12).toString("hex")}`;
  const marker = `--deckhand-test-run=${crypto.randomBytes(6).toString("hex")}`;
  let dir: string;
  let fx: Fixtures;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "deckhand-shutdown-"));
    fx = await startFixtures();
    server = await startServerProcess(["--data-dir", dir, "--shutdown-grace", "1"], {
      marker,
      env: { DECKHAND_API_KEYS: apiKey },
    });
  }, 60_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null)
      server.child.kill("SIGKILL");
    await server?.exited;
    await fx?.close();
    rmSync(dir, { recursive: true, force: true });
    server?.removeTmp();
    expect(await waitForNoChrome(marker)).toEqual([]);
  });

  const call = (pathname: string, json: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server!.url}${pathname}`, {
      method: "POST",
      headers: { "x-platform-api-key": apiKey, "content-type": "application/json", ...headers },
      body: JSON.stringify(json),
    });

  it("sends the stream's final error event, answers JSON 503, ends the streams, then exits", async () => {
    const started = await call("/v1/sessions/start", {});
    expect(started.status).toBe(200);
    const id = (await started.json()).data.sessionId as string;
    expect((await call(`/v1/sessions/${id}/navigate`, { url: fx.site.url("table.html") })).status).toBe(200);

    // The model takes far longer than the shutdown grace.
    fx.model.on(match.schemaName("extract"), { extraction: "too late" }, { latencyMs: 60_000 });
    const body = {
      instruction: "the best region",
      options: { model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL } },
    };
    const headers = { "x-model-api-key": "sk-shutdown-test-0123456789" };
    const streamed = call(`/v1/sessions/${id}/extract`, body, { ...headers, "x-stream-response": "true" });
    const stream = await streamed;
    expect(stream.status).toBe(200);
    const text = stream.text();
    // Wait until the operation really runs (the model has the request), then stop the service.
    const deadline = Date.now() + 20_000;
    while (fx.model.requests.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(fx.model.requests).toHaveLength(1);
    // A JSON request for the same session, waiting its turn behind the stream.
    const queued = call(`/v1/sessions/${id}/extract`, body, headers);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const stoppedAt = Date.now();
    server!.child.kill("SIGTERM");
    const json = await queued;
    expect(json.status).toBe(503);
    expect(await json.json()).toEqual({
      success: false,
      error: expect.stringContaining("shutting down"),
      message: expect.stringContaining("shutting down"),
      code: "SHUTTING_DOWN",
    });
    const events = parseEvents(await text);
    expect(events.map((event) => event.data.status)).toEqual(["starting", "connected", "running", "error"]);
    expect(events.at(-1)!.data).toMatchObject({
      status: "error",
      code: "SHUTTING_DOWN",
      error: expect.stringContaining("shutting down"),
    });
    expect(await server!.exited).toBe(0);
    // The grace (1 s) and the closing of the browser, not the model's 60 s.
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    expect(await waitForNoChrome(marker)).toEqual([]);
    expect(server!.leftovers()).toEqual([]);
  }, 60_000);
});
