// Secrets against a real service (real Chromium, the scripted model behind the real OpenAI provider
// code): a provider that echoes the key it was sent, provider keys in model headers, the API key in
// an encoded query name. None may reach a log line, an error body, a stream or the replay.

import { match, ScriptedReply } from "@deckhand/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { redactSecrets, redactUrlKey } from "../../src/redact.ts";
import { LiveSecrets, SecretSet } from "../../src/secrets.ts";
import { type Fixtures, type LiveService, ok, startFixtures, startLiveService } from "../live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
let id: string;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  id = await svc.start({ serverCache: false });
  await ok(await svc.op(id, "navigate", { url: fx.site.url("table.html") }));
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});
beforeEach(() => {
  fx.model.clear();
  fx.model.resetRequests();
});

async function replayText(): Promise<string> {
  const response = await svc.call(`/v1/sessions/${id}/replay`);
  expect(response.status).toBe(200);
  return response.text();
}

/** Every place a secret could end up, as text. */
async function everywhere(...answers: string[]): Promise<string> {
  // Log lines of the request are written when its answer is; give the async destination a moment.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return [...answers, svc.logText(), await replayText()].join("\n");
}

describe("a model provider that echoes the key it was sent", () => {
  const modelKey = "sk-echoed-by-the-provider-0123456789";

  // Two ways a provider (or whatever answers at a caller's baseURL) hands the key back: in an API
  // error, and in an answer that is not what was asked for, which the service's error quotes.
  const echoes = {
    "an API error": (apiKey: string | undefined) =>
      ScriptedReply.httpError(401, `Incorrect API key provided: ${apiKey}. Check your key.`),
    "an unusable answer": (apiKey: string | undefined) =>
      ScriptedReply.content(`I will not answer in JSON. Your key is ${apiKey}, by the way.`),
  };

  const body = () => ({
    instruction: "the best region",
    options: { model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL } },
  });

  it.each(Object.keys(echoes))(
    "in %s: x-model-api-key reaches the provider, but not the error body, the log or the replay",
    async (how) => {
      const echo = echoes[how as keyof typeof echoes];
      fx.model.on(match.schemaName("extract"), (request) => echo(request.apiKey));
      const response = await svc.op(id, "extract", body(), { headers: { "x-model-api-key": modelKey } });
      const text = await response.text();
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(text)).toMatchObject({ success: false, code: expect.any(String) });
      // The attack was real: the provider got the key and sent it back.
      expect(fx.model.requests.at(-1)?.apiKey).toBe(modelKey);
      expect(await everywhere(text)).not.toContain(modelKey);
    },
  );

  it("where the echo is quoted (the unusable answer), it is quoted with the key removed", async () => {
    fx.model.on(match.schemaName("extract"), (request) => echoes["an unusable answer"](request.apiKey));
    const response = await svc.op(id, "extract", body(), {
      headers: { "x-model-api-key": modelKey, "x-stream-response": "true" },
    });
    const text = await response.text();
    const all = await everywhere(text);
    expect(all).toContain("Your key is [redacted]");
    expect(all).not.toContain(modelKey);
  });

  it("nor does the model object's apiKey, echoed the same way", async () => {
    fx.model.on(match.schemaName("extract"), (request) => echoes["an unusable answer"](request.apiKey));
    const inline = "sk-inline-apikey-echoed-9876543210";
    const withKey = body();
    const response = await svc.op(id, "extract", {
      ...withKey,
      options: { model: { ...withKey.options.model, apiKey: inline } },
    });
    const text = await response.text();
    expect(fx.model.requests.at(-1)?.apiKey).toBe(inline);
    const all = await everywhere(text);
    expect(all).toContain("Your key is [redacted]");
    expect(all).not.toContain(inline);
  });
});

describe("provider keys in options.model.headers", () => {
  const headers = {
    "x-api-key": "sk-ant-header-secret-1111111111",
    "x-goog-api-key": "AIza-header-secret-2222222222",
    "x-tenant-token": "tenant-header-secret-3333333333",
  };

  it("reach the provider, and are never stored or logged: the replay keeps their names only", async () => {
    fx.model.on(match.schemaName("extract"), { extraction: "East" });
    const response = await svc.op(
      id,
      "extract",
      {
        instruction: "the best region",
        options: { model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL, headers } },
      },
      { headers: { "x-model-api-key": "sk-model-key-for-headers-test" } },
    );
    await ok(response);
    const seen = fx.model.requests.at(-1)!.headers;
    for (const [name, value] of Object.entries(headers)) expect(seen[name]).toBe(value);

    const all = await everywhere();
    for (const value of Object.values(headers)) expect(all).not.toContain(value);
    const replay = JSON.parse(await replayText());
    const extract = replay.data.pages
      .flatMap((page: { actions: { method: string; parameters: Record<string, unknown> }[] }) => page.actions)
      .filter((action: { method: string }) => action.method === "extract")
      .at(-1);
    expect(extract.parameters.options.model).toEqual({
      modelName: "openai/gpt-4.1-mini",
      baseURL: fx.model.baseURL,
      headers: { "x-api-key": "[redacted]", "x-goog-api-key": "[redacted]", "x-tenant-token": "[redacted]" },
    });
  });

  it("a header value the provider echoes is removed like a key", async () => {
    fx.model.on(match.schemaName("extract"), (request) =>
      ScriptedReply.content(`Header x-tenant-token=${request.headers["x-tenant-token"]} is not allowed.`),
    );
    const response = await svc.op(
      id,
      "extract",
      {
        instruction: "the best region",
        options: {
          model: {
            modelName: "openai/gpt-4.1-mini",
            baseURL: fx.model.baseURL,
            headers,
            apiKey: "sk-x-0000000000",
          },
        },
      },
      { headers: { "x-stream-response": "true" } },
    );
    const text = await response.text();
    const all = await everywhere(text);
    expect(all).toContain("Header x-tenant-token=[redacted] is not allowed");
    expect(all).not.toContain(headers["x-tenant-token"]);
  });
});

describe("the API key in the query, under another spelling of its name", () => {
  it.each([
    ["apiKe%79", true],
    ["%61%70%69%4b%65%79", true],
    ["APIKEY", false],
    ["api_key", false],
  ])("?%s=<key> is never logged (authenticates: %s)", async (name, authenticates) => {
    const response = await fetch(`${svc.url}/v1/sessions/${id}/cdp?${name}=${svc.key.key}&other=x`);
    // 426: authenticated, and told to upgrade; 401: that name is not the key's.
    expect(response.status).toBe(authenticates ? 426 : 401);
    expect(await response.json()).toMatchObject({ success: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const log = svc.logText();
    expect(log).toContain(`/v1/sessions/${id}/cdp?${name}=[redacted]&other=[redacted]`);
    expect(log).not.toContain(svc.key.key);
  });
});

describe("the rules (unit)", () => {
  it("removes long values wherever they appear, short ones only as words of their own, and not one or two characters", () => {
    const secrets = new SecretSet();
    secrets.add("u");
    secrets.add(0);
    secrets.add("1234");
    secrets.add("hunter2-is-long");
    expect(secrets.redact("user u typed 1234 (not 12345) and hunter2-is-longer at 127.0.0.1")).toBe(
      "user u typed [redacted] (not 12345) and [redacted]er at 127.0.0.1",
    );
    // A value with JSON-escaped characters is found in a log line too.
    secrets.add('quote"back\\slash-secret');
    expect(secrets.redact(JSON.stringify({ msg: 'echo quote"back\\slash-secret' }))).toBe(
      JSON.stringify({ msg: "echo [redacted]" }),
    );
  });

  it("keeps a released key for the linger, then forgets it", async () => {
    const live = new LiveSecrets(50);
    const release = live.hold(["sk-live-0123456789"]);
    expect(live.redact("got sk-live-0123456789")).toBe("got [redacted]");
    release();
    expect(live.redact("late: sk-live-0123456789")).toBe("late: [redacted]");
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(live.redact("later: sk-live-0123456789")).toBe("later: sk-live-0123456789");
  });

  it("keeps of a model configuration its name, provider, address and header names only", () => {
    expect(
      redactSecrets({
        options: {
          model: {
            modelName: "openai/gpt-4.1-mini",
            provider: "openai",
            baseURL: "https://user:pw@llm.example/v1?key=abc",
            apiKey: "sk-1",
            headers: { "x-api-key": "k" },
            accessKeyId: "AKIA-secret",
            temperature: 0.2,
            providerOptions: { region: "eu-west-1", retries: 2 },
          },
        },
        browser: { cdpUrl: "wss://browsers.example/devtools?token=cdp-secret" },
      }),
    ).toEqual({
      options: {
        model: {
          modelName: "openai/gpt-4.1-mini",
          provider: "openai",
          baseURL: "https://user:[redacted]@llm.example/v1?key=[redacted]",
          apiKey: "[redacted]",
          headers: { "x-api-key": "[redacted]" },
          accessKeyId: "[redacted]",
          temperature: 0.2,
          providerOptions: { region: "[redacted]", retries: 2 },
        },
      },
      browser: { cdpUrl: "wss://browsers.example/devtools?token=[redacted]" },
    });
    expect(redactUrlKey("/v1/sessions/a/cdp?apiKe%79=k1&APIKEY=k2&x")).toBe(
      "/v1/sessions/a/cdp?apiKe%79=[redacted]&APIKEY=[redacted]&x",
    );
  });
});
