// Requests as clients of the reference service send them (its TypeScript client, its generated SDKs
// in other languages, its own tests), against the real service with real browsers: each one used to
// fail, and now does what the client meant.

import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { match, ScriptedReply, type ScriptedRequest } from "@deckhand/testkit";
import { findChrome, launchChrome } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cdpCall,
  type Fixtures,
  idOf,
  type LiveService,
  MODEL_KEY,
  ok,
  parseEvents,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;

beforeAll(async () => {
  fx = await startFixtures();
  // The operator runs its browsers with --no-sandbox (as in a container), so a client that sends it
  // asks for nothing new.
  svc = await startLiveService({ browsers: { args: ["--no-sandbox"] } });
});

afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

/** A fetch with only the headers given (no x-platform-api-key added). */
function raw(
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
) {
  return fetch(`${svc.url}${pathname}`, {
    method: init.method ?? (init.json !== undefined ? "POST" : "GET"),
    headers: { ...(init.json !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
}

async function expectError(response: Response, status: number, code: string, text: string): Promise<void> {
  const body = await response.text();
  expect(response.status, body).toBe(status);
  const parsed = JSON.parse(body);
  expect(parsed.code).toBe(code);
  expect(parsed.error).toContain(text);
}

/**
 * Scripts an agent that says "done" at once, and the agent's own check of that "done" against the
 * page to agree. Returns the test for the agent's requests and what removes both rules.
 */
function agentSaysDone(): { isAgent: (r: ScriptedRequest) => boolean; remove: () => void } {
  const isAgent = (r: ScriptedRequest) => r.tools.some((t) => t.name === "done");
  const agentRule = fx.model.on(isAgent, () =>
    ScriptedReply.toolCalls({ name: "done", arguments: { reasoning: "nothing to do", taskComplete: true } }),
  );
  const verifyRule = fx.model.on(match.schemaProperty("goalReached"), {
    goalReached: true,
    evidence: "shown",
  });
  return {
    isAgent,
    remove: () => {
      agentRule.remove();
      verifyRule.remove();
    },
  };
}

describe("bare legacy model names", () => {
  it("starts a session with modelName gpt-4.1-nano, read as openai/gpt-4.1-nano, with a deprecation warning", async () => {
    const id = await svc.start({ modelName: "gpt-4.1-nano" });
    expect(svc.service.sessions.get(id)!.defaults.modelName).toBe("openai/gpt-4.1-nano");
    expect(svc.logText()).toContain(
      '\\"gpt-4.1-nano\\" has no provider; it is read as \\"openai/gpt-4.1-nano\\"',
    );
    await ok(await svc.op(id, "end"));
  });

  it("maps claude-3-7-sonnet-latest to anthropic", async () => {
    const id = await svc.start({ modelName: "claude-3-7-sonnet-latest" });
    expect(svc.service.sessions.get(id)!.defaults.modelName).toBe("anthropic/claude-3-7-sonnet-latest");
    await ok(await svc.op(id, "end"));
  });

  it("says how a client gives the model's key: the x-model-api-key header or the model object, not a variable", async () => {
    const id = await svc.start({ explicitInstructions: false });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const response = await svc.op(id, "act", {
      input: "click the increment button",
      options: { model: "anthropic/claude-sonnet-4-5" },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe("MISSING_LLM_CONFIGURATION");
    expect(body.error).toContain("No API key for anthropic/claude-sonnet-4-5.");
    expect(body.error).toContain("`x-model-api-key` header");
    expect(body.error).not.toMatch(/environment|ANTHROPIC_API_KEY|llmClient/);
    // The advice the message ends with, for a client that words it in its own terms.
    expect(body.error.endsWith(body.details.howToFix)).toBe(true);
    await ok(await svc.op(id, "end"));
  });

  it("runs act with options.model as a bare name, reaching the model under its own id", async () => {
    // The model path: "click the increment button" would otherwise be done without a model.
    const id = await svc.start({ explicitInstructions: false });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /button: Increment/),
      method: "click",
      arguments: [],
      description: "the Increment button",
      completed: true,
    }));
    const before = fx.model.callCount;
    const response = await svc.op(
      id,
      "act",
      {
        input: "click the increment button",
        options: { model: { modelName: "gpt-4.1-mini", baseURL: fx.model.baseURL } },
      },
      { headers: { ...WITH_MODEL_KEY, "x-stream-response": "true" } },
    );
    const events = parseEvents(await response.text());
    expect(events.at(-1)?.data).toMatchObject({ status: "finished", result: { success: true } });
    // The warning reaches a streaming client as a log line.
    expect(events.map((e) => e.data.message)).toContainEqual(
      expect.objectContaining({
        category: "deprecation",
        message: expect.stringContaining("openai/gpt-4.1-mini"),
      }),
    );
    expect(fx.model.callCount).toBe(before + 1);
    expect(fx.model.lastRequest?.model).toBe("gpt-4.1-mini");
    expect(await svc.service.sessions.get(id)!.dh.page.locator("#count").textContent()).toBe("1");
    await ok(await svc.op(id, "end"));
  });

  it("runs agentExecute with agentConfig.model as a bare name, and refuses an unknown one naming the field", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const { isAgent, remove } = agentSaysDone();
    try {
      const answer = await ok<{ result: { success: boolean; completed: boolean } }>(
        await svc.op(
          id,
          "agentExecute",
          {
            agentConfig: { model: { modelName: "gpt-4.1-mini", baseURL: fx.model.baseURL } },
            executeOptions: { instruction: "say done", maxSteps: 3 },
          },
          { headers: WITH_MODEL_KEY },
        ),
      );
      expect(answer.result).toMatchObject({ success: true, completed: true });
      expect(fx.model.requests.filter(isAgent).at(-1)?.model).toBe("gpt-4.1-mini");
      expect(svc.logText()).toContain("body field `agentConfig.model.modelName`");
    } finally {
      remove();
    }
    await expectError(
      await svc.op(id, "agentExecute", {
        agentConfig: { model: "mystery-model-7" },
        executeOptions: { instruction: "say done" },
      }),
      400,
      "INVALID_MODEL_FORMAT",
      "`agentConfig.model`",
    );
    await ok(await svc.op(id, "end"));
  });

  it("lets agentConfig.mode win over the deprecated cua: true, as the reference does", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const { isAgent, remove } = agentSaysDone();
    try {
      // The scripted model is no computer-use model: in cua mode this would be a 422.
      const answer = await ok<{ result: { success: boolean; completed: boolean } }>(
        await svc.op(
          id,
          "agentExecute",
          {
            agentConfig: {
              cua: true,
              mode: "dom",
              model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL },
            },
            executeOptions: { instruction: "say done", maxSteps: 3 },
          },
          { headers: WITH_MODEL_KEY },
        ),
      );
      expect(answer.result).toMatchObject({ success: true, completed: true });
      // The DOM agent's own tools were offered to the model.
      expect(fx.model.requests.filter(isAgent)).not.toHaveLength(0);
    } finally {
      remove();
    }
    await ok(await svc.op(id, "end"));
  });

  it("still refuses a bare name of no known family, saying what is expected", async () => {
    await expectError(
      await svc.call("/v1/sessions/start", { json: { modelName: "mystery-model-7" } }),
      400,
      "INVALID_MODEL_FORMAT",
      '"provider/model"',
    );
    expect(svc.service.sessions.size).toBe(0);
  });
});

describe("browser.launchOptions as the reference's clients send them", () => {
  it("accepts what the operator's browsers already are: their executable, their args, headless", async () => {
    const chrome = findChrome();
    expect(chrome).toBeDefined();
    const id = await svc.start({
      browser: {
        type: "local",
        launchOptions: {
          executablePath: chrome,
          args: ["--no-sandbox"],
          headless: true,
          ignoreDefaultArgs: false,
        },
      },
    });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    await ok(await svc.op(id, "end"));
  });

  it("refuses, naming the field, what would change the shared browser process", async () => {
    const chrome = findChrome()!;
    const pwned = path.join(tmpdir(), `deckhand-compat-pwned-${randomUUID()}`);
    const cases: [Record<string, unknown>, string][] = [
      [{ executablePath: "/bin/sh" }, "executablePath"],
      [{ args: ["--no-sandbox", "--disable-web-security"] }, "args"],
      [{ args: ["--remote-debugging-port=9222"] }, "args"],
      [{ args: ["--no-sandbox", `--renderer-cmd-prefix=touch ${pwned}`] }, "args"],
      [{ executablePath: `${chrome}/../../../bin/sh` }, "executablePath"],
      [{ headless: false }, "headless"],
      [{ ignoreDefaultArgs: true }, "ignoreDefaultArgs"],
      [{ userDataDir: "/tmp/profile" }, "userDataDir"],
    ];
    for (const [launchOptions, field] of cases) {
      await expectError(
        await svc.call("/v1/sessions/start", { json: { browser: { type: "local", launchOptions } } }),
        400,
        "INVALID_REQUEST",
        `\`browser.launchOptions.${field}\``,
      );
    }
    expect(svc.service.sessions.size).toBe(0);
    // Nothing of the attempt ran.
    expect(existsSync(pwned)).toBe(false);
  });
});

describe("start body forms", () => {
  it('takes verbose as "0", "1" or "2", and refuses "3"', async () => {
    for (const verbose of ["0", "1", "2"]) {
      const id = await svc.start({ verbose });
      expect(svc.service.sessions.get(id)!.dh.options.verbose).toBe(Number(verbose));
      await ok(await svc.op(id, "end"));
    }
    await expectError(
      await svc.call("/v1/sessions/start", { json: { verbose: "3" } }),
      400,
      "INVALID_REQUEST",
      "`verbose`",
    );
  });

  it('takes browser.type "browserbase" (a browser of the service\'s) and fields of the reference it does not use', async () => {
    const id = await svc.start({
      browser: { type: "browserbase" },
      waitForCaptchaSolves: false,
      debugDom: true,
    });
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    await ok(await svc.op(id, "end"));
  });

  it("takes a browser.cdpUrl where nothing answers yet, says so at first use, and attaches once it answers", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const response = await svc.call("/v1/sessions/start", {
      json: {
        browser: {
          type: "local",
          cdpUrl: `http://127.0.0.1:${port}`,
          launchOptions: { connectTimeoutMs: 2000 },
        },
      },
    });
    expect(response.status).toBe(200);
    const started = (await response.json()).data as { sessionId: string; cdpUrl: string; available: boolean };
    expect(started.available).toBe(true);
    // The service's own CDP proxy, where the session's allow-list holds, not the caller's address.
    expect(started.cdpUrl).toMatch(
      new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/v1/sessions/${started.sessionId}/cdp\\?token=`),
    );
    expect(svc.service.sessions.get(started.sessionId)).toBeUndefined();
    // First use, still nothing there: a clear error naming the field, and the session waits.
    await expectError(
      await svc.op(started.sessionId, "navigate", { url: fx.site.url("index.html") }),
      502,
      "CDP_URL_UNREACHABLE",
      "browser.cdpUrl",
    );
    const own = await launchChrome({ headless: true, port, args: ["--no-first-run"] });
    try {
      // The browser's own word that its DevTools endpoint answers.
      expect((await fetch(`http://127.0.0.1:${port}/json/version`)).status).toBe(200);
      await ok(await svc.op(started.sessionId, "navigate", { url: fx.site.url("index.html") }));
      const { targetInfos } = await cdpCall<{ targetInfos: { url: string }[] }>(
        own.wsEndpoint!,
        "Target.getTargets",
      );
      expect(targetInfos.map((t) => t.url)).toContain(fx.site.url("index.html"));
      await ok(await svc.op(started.sessionId, "end"));
    } finally {
      await own.kill();
    }
  });

  it("still refuses at once a browser.cdpUrl that is not a DevTools address", async () => {
    await expectError(
      await svc.call("/v1/sessions/start", {
        json: { browser: { type: "local", cdpUrl: "ftp://127.0.0.1:9/" } },
      }),
      400,
      "INVALID_REQUEST",
      "`browser.cdpUrl`",
    );
  });
});

describe("act with an Action as the reference's clients build it", () => {
  it("clicks when method and arguments are left out, and ignores backendNodeId", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const page = svc.service.sessions.get(id)!.dh.page;
    const result = await ok<{ result: { success: boolean; actions: unknown[] } }>(
      await svc.op(id, "act", { input: { selector: "//button[@id='increment']", description: "Increment" } }),
    );
    expect(result.result.success).toBe(true);
    expect(result.result.actions).toEqual([expect.objectContaining({ method: "click", arguments: [] })]);
    expect(await page.locator("#count").textContent()).toBe("1");
    await ok(
      await svc.op(id, "act", {
        input: { selector: "//button[@id='increment']", description: "Increment", backendNodeId: 42 },
      }),
    );
    expect(await page.locator("#count").textContent()).toBe("2");
    await ok(await svc.op(id, "end"));
  });
});

describe("POST /end", () => {
  it("refuses a body that says something (400, the session stays), and ends with none or {}", async () => {
    const id = await svc.start();
    await expectError(await svc.op(id, "end", { force: true }), 400, "INVALID_REQUEST", "takes no body");
    expect(svc.service.sessions.get(id)).toBeDefined();
    await ok(await svc.op(id, "end", {}));
    expect(svc.service.sessions.get(id)).toBeUndefined();

    const second = await svc.start();
    await ok(
      await raw(`/v1/sessions/${second}/end`, {
        method: "POST",
        headers: { "x-platform-api-key": svc.key.key },
      }),
    );
  });
});

describe("the reference's header names", () => {
  it("authenticates with x-bb-api-key (and x-bb-project-id beside it)", async () => {
    const response = await raw("/v1/sessions/start", {
      json: {},
      headers: { "x-bb-api-key": svc.key.key, "x-bb-project-id": "any-project" },
    });
    const { sessionId } = await ok<{ sessionId: string }>(response);
    const navigated = await raw(`/v1/sessions/${sessionId}/navigate`, {
      json: { url: fx.site.url("index.html") },
      headers: { "x-bb-api-key": svc.key.key },
    });
    expect(navigated.status).toBe(200);
    await ok(await svc.op(sessionId, "end"));
  });

  it("opens the session's CDP WebSocket with x-bb-api-key, and not with another project's key", async () => {
    const id = await svc.start();
    const url = `${svc.url.replace("http:", "ws:")}/v1/sessions/${id}/cdp`;
    const version = await cdpCall<{ product: string }>(
      url,
      "Browser.getVersion",
      {},
      { "x-bb-api-key": svc.key.key },
    );
    expect(version.product).toMatch(/Chrome/);
    await expect(
      cdpCall(url, "Browser.getVersion", {}, { "x-bb-api-key": svc.otherKey.key }),
    ).rejects.toThrow();
    await ok(await svc.op(id, "end"));
  });

  it("refuses a wrong key under the alias as under the spec's name, and never logs it", async () => {
    const wrong = `dh_${randomUUID().replaceAll("-", "")}`;
    const response = await raw("/v1/sessions/start", { json: {}, headers: { "x-bb-api-key": wrong } });
    await expectError(response, 401, "UNAUTHORIZED", "Invalid or revoked API key");
    // Two different keys under the two names: which one was meant cannot be told.
    const both = await raw("/v1/sessions/start", {
      json: {},
      headers: { "x-bb-api-key": wrong, "x-platform-api-key": svc.key.key },
    });
    await expectError(both, 400, "INVALID_REQUEST", "x-bb-api-key");
    expect(svc.logText()).not.toContain(wrong);
    expect(svc.logText()).not.toContain(svc.key.key);
  });

  it("skips the server cache with browserbase-cache-bypass and answers browserbase-cache-status", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    fx.model.on(match.schemaName("extract"), { extraction: "fruits" });
    const model = scriptedModelConfig(fx.model);
    const extract = (headers: Record<string, string> = {}) =>
      svc.op(
        id,
        "extract",
        { instruction: "what is listed", options: { model } },
        {
          headers: { "x-model-api-key": MODEL_KEY, ...headers },
        },
      );
    const first = await extract();
    expect(first.headers.get("browserbase-cache-status")).toBe("MISS");
    expect(await ok(first)).toMatchObject({ result: { extraction: "fruits" }, cacheStatus: "MISS" });
    const calls = fx.model.callCount;
    const bypassed = await extract({ "browserbase-cache-bypass": "true" });
    expect(bypassed.headers.get("browserbase-cache-status")).toBeNull();
    expect(await ok(bypassed)).not.toHaveProperty("cacheStatus");
    expect(fx.model.callCount).toBe(calls + 1);
    await ok(await svc.op(id, "end"));
  });
});

describe("health probes", () => {
  it("answer without a key and say nothing but their status", async () => {
    for (const [path, status] of [
      ["/healthz", "ok"],
      ["/readyz", "ready"],
    ] as const) {
      const response = await raw(path);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status });
      expect(response.headers.get("x-powered-by")).toBeNull();
      expect(response.headers.get("server")).toBeNull();
    }
  });
});

describe("a streamed operation's final event", () => {
  it("carries the actionId beside the result", async () => {
    const id = await svc.start();
    await ok(await svc.op(id, "navigate", { url: fx.site.url("index.html") }));
    const response = await svc.op(id, "extract", {}, { headers: { "x-stream-response": "true" } });
    const last = parseEvents(await response.text()).at(-1)!;
    expect(last.data.status).toBe("finished");
    expect(last.data.actionId).toEqual(expect.any(String));
    await ok(await svc.op(id, "end"));
  });
});

describe("readiness", () => {
  it("is 503 once the database no longer answers, with the status and the part that cannot serve, nothing more", async () => {
    const { startService } = await import("./helpers.ts");
    const service = await startService();
    try {
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
      await service.store.close();
      const response = await fetch(`${service.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        status: "unavailable",
        reason: "the database does not answer",
      });
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    } finally {
      await service.close().catch(() => undefined);
    }
  });
});
