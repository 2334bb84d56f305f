// SIGTERM to a real deckhand-server process with a streamed operation in flight (a model that
// takes its time): the client gets the stream's final `error` event (SHUTTING_DOWN) and a properly
// ended stream, a JSON request in flight gets a 503 in the service's shape, and the process exits
// cleanly with no browser left behind.

import crypto from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { match, waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fixtures, parseEvents, startFixtures } from "./live-helpers.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

/**
 * Whether the server has read everything a client sent on the loopback connection from
 * `clientPort` to `serverPort`: the kernel's entry for the server's end of it (/proc/net/tcp) holds
 * no unread bytes. Before the server process accepted and read the connection, its bytes wait
 * there, and a SIGTERM then would close the listening socket under it (a reset, not a 503).
 */
function serverHasRead(serverPort: number, clientPort: number): boolean {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
  const local = `0100007F:${hex(serverPort)}`;
  const remote = `0100007F:${hex(clientPort)}`;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== local || fields[2] !== remote) continue;
    const rxQueue = Number.parseInt(fields[4]!.split(":")[1]!, 16);
    return rxQueue === 0;
  }
  return false;
}

/** A POST whose answer comes later; `sent` resolves with the client's port once the whole request is written. */
function postInFlight(
  url: string,
  headers: Record<string, string>,
  body: string,
): { sent: Promise<number>; answer: Promise<{ status: number; body: string }> } {
  let sent!: (port: number) => void;
  const written = new Promise<number>((resolve) => (sent = resolve));
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers, agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: text }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body, () => sent(request.socket!.localPort!));
  });
  return { sent: written, answer };
}

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
    // (Only a stall reaches the minute.)
    const deadline = Date.now() + 60_000;
    while (fx.model.requests.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(fx.model.requests).toHaveLength(1);
    // A JSON request for the same session, waiting its turn behind the stream: the service is
    // stopped once it has read it (not after a number of milliseconds, which a busy machine outlasts).
    const serverPort = Number(new URL(server!.url).port);
    const queued = postInFlight(
      `${server!.url}/v1/sessions/${id}/extract`,
      { "x-platform-api-key": apiKey, "content-type": "application/json", ...headers },
      JSON.stringify(body),
    );
    const clientPort = await queued.sent;
    while (!serverHasRead(serverPort, clientPort)) await new Promise((r) => setTimeout(r, 20));

    const stoppedAt = Date.now();
    server!.child.kill("SIGTERM");
    const json = await queued.answer;
    expect(json.status).toBe(503);
    expect(JSON.parse(json.body)).toEqual({
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
    // The grace (1 s) and the closing of the browser, not the model's 60 s (a loaded machine takes
    // seconds for the browser; only a stall takes 45).
    expect(Date.now() - stoppedAt).toBeLessThan(45_000);
    expect(await waitForNoChrome(marker)).toEqual([]);
    expect(server!.leftovers()).toEqual([]);
  }, 180_000);
});
