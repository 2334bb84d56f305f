// The agent over the service (REMOTE): the per-project server cache replays a run with no model
// call (and another project, with its own key, never gets it), shouldCache's cacheEntry, what
// cannot cross the wire is a clear error before any request, and a client that hangs up stops
// the run on the service.

import { ServiceCancelledError, ServiceInvalidArgumentError } from "deckhand";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RemoteFixture, remoteFixture } from "../remote/helpers.ts";
import { actByRules, agentRequests, call, scriptAgent, verifyWith } from "./helpers.ts";

const PASSWORD = "correct-horse-42";

describe("agent on the service (REMOTE)", () => {
  let fx: RemoteFixture;
  beforeAll(async () => {
    fx = await remoteFixture();
  }, 60_000);
  afterAll(() => fx?.close());
  beforeEach(() => {
    fx.model.clear();
    fx.model.resetRequests();
  });

  const script = () => {
    actByRules(fx.model, [
      { when: /%user%/, line: /textbox: Username/, method: "fill", args: ["%user%"] },
      { when: /%password%/, line: /textbox: Password/, method: "fill", args: ["%password%"] },
      { when: /Sign in/i, line: "button: Sign in", method: "click" },
    ]);
    verifyWith(fx.model, (r) => r.text.includes("heading: Welcome, %user%"));
    scriptAgent(fx.model, [
      [call("act", { action: "type %user% into the Username field" })],
      [call("act", { action: "type %password% into the Password field" })],
      [call("act", { action: "click the Sign in button" })],
      [call("done", { reasoning: "Signed in", taskComplete: true })],
    ]);
  };
  const signIn = { instruction: "Sign in", variables: { user: "erin", password: PASSWORD } };

  it("replays a project's stored run from the server cache with no model call; another project does not get it", async () => {
    const key = await fx.service.createKey();
    const first = await fx.started({ apiKey: key, serverCache: true });
    await first.page.goto(fx.site.url("agent/login.html"));
    script();
    const miss = await first.agent().execute(signIn);
    expect(miss.success).toBe(true);
    expect(miss.metadata?.cacheHit).toBeUndefined();
    expect(first.page.url()).toContain("account.html?user=erin");
    await first.close();

    // The same project, a new session: served from the cache.
    const second = await fx.started({ apiKey: key, serverCache: true });
    await second.page.goto(fx.site.url("agent/login.html"));
    const calls = fx.model.callCount;
    const hit = await second.agent().execute(signIn);
    expect(fx.model.callCount).toBe(calls);
    expect(hit).toMatchObject({ success: true, message: "Signed in", metadata: { cacheHit: true } });
    expect(hit.usage?.input_tokens).toBe(0);
    expect(second.page.url()).toContain("account.html?user=erin");
    await second.close();

    // Another project asks the very same thing: its own run, with the model.
    const other = await fx.started({ apiKey: await fx.service.createKey(), serverCache: true });
    await other.page.goto(fx.site.url("agent/login.html"));
    fx.model.clear();
    fx.model.resetRequests();
    script();
    const theirs = await other.agent().execute(signIn);
    expect(theirs.metadata?.cacheHit).toBeUndefined();
    expect(agentRequests(fx.model).length).toBe(4);
    await other.close();
  }, 90_000);

  it("shouldCache answers with a cacheEntry; the stream's finished event carries it", async () => {
    const dh = await fx.started({ serverCache: false });
    await dh.page.goto(fx.site.url("agent/login.html"));
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [[call("done", { reasoning: "nothing to do", taskComplete: true })]]);
    const response = await fetch(`${fx.service.url}/v1/sessions/${dh.sessionId}/agentExecute`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-platform-api-key": fx.service.apiKey,
        "x-model-api-key": "sk-test-remote-0123456789",
        "x-stream-response": "true",
      },
      body: JSON.stringify({
        agentConfig: { model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL } },
        executeOptions: { instruction: "Look", maxSteps: 3 },
        shouldCache: true,
      }),
    });
    const text = await response.text();
    expect(text).toContain("agent step 1: done");
    const finished = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; data: Record<string, unknown> })
      .find((e) => e.type === "system" && (e.data as { status?: string }).status === "finished");
    expect(finished).toBeDefined();
    const data = finished!.data as { result: unknown; cacheEntry: unknown };
    expect(data.result).toMatchObject({ success: true, message: "nothing to do" });
    expect(data.cacheEntry).toMatchObject({ cacheStatus: "MISS", instruction: "Look" });
  });

  it("goto on the service obeys its URL rule: file: and the browser's pages are refused, the page stays", async () => {
    const dh = await fx.started({ serverCache: false });
    await dh.page.goto(fx.site.url("agent/login.html"));
    scriptAgent(fx.model, [
      [call("goto", { url: "file:///etc/passwd" })],
      [call("goto", { url: "view-source:file:///etc/passwd" })],
      [call("done", { reasoning: "Neither page may be opened", taskComplete: false })],
    ]);
    const result = await dh.agent().execute({ instruction: "Show me the server's /etc/passwd", maxSteps: 5 });
    const gotos = result.actions.filter((a) => a.type === "goto");
    expect(gotos.map((a) => a.success)).toEqual([false, false]);
    expect(JSON.stringify(gotos[0]?.result)).toContain(
      "The agent cannot open this URL: file: URLs cannot be opened in the agent's page",
    );
    expect(JSON.stringify(gotos[1]?.result)).toContain(
      "view-source: URLs cannot be opened in the agent's page",
    );
    expect(agentRequests(fx.model)[1]?.text).toContain("file: URLs cannot be opened in the agent's page");
    // The session's page never left the site.
    expect(dh.page.url()).toBe(fx.site.url("agent/login.html"));
    expect(await dh.page.evaluate(() => document.body.innerText)).not.toContain("root:");
    await dh.close();
  });

  it("what lives in this process is a clear error before any request", async () => {
    const dh = await fx.started();
    const calls = fx.model.callCount;
    const cases = [
      () => dh.agent({ tools: { x: { description: "x", inputSchema: z.object({}) } as never } }).execute("x"),
      () => dh.agent({ integrations: ["http://127.0.0.1:1/mcp"] }).execute("x"),
      () => dh.agent().execute({ instruction: "x", callbacks: { onStepFinish: () => undefined } }),
      () => dh.agent().execute({ instruction: "x", output: z.object({ a: z.string() }) }),
    ];
    for (const run of cases) {
      const error = await run().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceInvalidArgumentError);
      expect((error as Error).message).toMatch(/REMOTE mode cannot use .*Run the agent in LOCAL mode/);
    }
    expect(fx.model.callCount).toBe(calls);
  });

  it("a client that hangs up stops the run on the service", async () => {
    const dh = await fx.started();
    await dh.page.goto(fx.site.url("agent/login.html"));
    const turns = Array.from({ length: 10 }, () => [call("wait", { timeMs: 400 })]);
    scriptAgent(fx.model, turns);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 600);
    await expect(
      dh.agent().execute({ instruction: "Wait a lot", signal: controller.signal, maxSteps: 10 }),
    ).rejects.toBeInstanceOf(ServiceCancelledError);
    const asked = agentRequests(fx.model).length;
    await new Promise((r) => setTimeout(r, 1_500));
    // No further model turns after the hang-up (at most the one in flight).
    expect(agentRequests(fx.model).length).toBeLessThanOrEqual(asked + 1);
    expect(asked).toBeLessThan(10);
    // The session is free again.
    fx.model.clear();
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [[call("done", { reasoning: "ok", taskComplete: true })]]);
    expect((await dh.agent().execute("Again")).success).toBe(true);
  });
});
