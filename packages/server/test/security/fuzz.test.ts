// Property-based fuzzing of every endpoint's body, path and headers against a real in-process
// service (real Chromium, the scripted model, the fixture site): whatever arrives, the answer comes
// in time, is never a 500, and every error has the service's shape `{ success: false, error, code }`
// (a stream: events, the last `finished` or `error`). Bounded in runs and in time.

import { match } from "@deckhand/testkit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Fixtures,
  type LiveService,
  parseEvents,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
/** A session that stays up for the operation endpoints. */
let id: string;

beforeAll(async () => {
  console.info(`fuzz: seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`);
  [svc, fx] = await Promise.all([
    startLiveService({ operationTimeoutMs: 4000, maxSessions: 4, bodyLimit: 64 * 1024 }),
    startFixtures(),
  ]);
  id = await svc.start({ serverCache: false, domSettleTimeoutMs: 200 });
  // The model answers whatever it is asked with something of the usual shape (or not, then 502).
  fx.model.on(match.schemaName("extract"), (request) =>
    request.schema?.properties && "name" in (request.schema.properties as object)
      ? { name: "x" }
      : { extraction: "x" },
  );
  fx.model.on(match.schemaName("observe"), { elements: [] });
  fx.model.on(match.schemaName("act"), {
    elementId: 1,
    method: "click",
    arguments: [],
    description: "x",
    completed: true,
  });
  const response = await svc.op(id, "navigate", { url: fx.site.url("form.html") });
  expect(response.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

/** What no request may get. */
const FORBIDDEN_STATUSES = new Set([500]);
/** Longest any one answer may take: operations time out at 4 s, the rest is margin for a busy machine. */
const ANSWER_WITHIN_MS = 20_000;

const failures: string[] = [];
/** How often each endpoint answered each status: the runs must reach past validation too. */
const statuses = new Map<string, Map<number, number>>();

function count(pathname: string, status: number): void {
  const endpoint = pathname.split("/").slice(4).join("/").split("?")[0] || pathname.split("?")[0]!;
  const seen = statuses.get(endpoint) ?? new Map<number, number>();
  seen.set(status, (seen.get(status) ?? 0) + 1);
  statuses.set(endpoint, seen);
}

/** Sends one request and checks the answer; resolves to a description of what broke, if anything. */
async function check(
  method: "GET" | "POST",
  pathname: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<void> {
  const what = `${method} ${pathname} ${JSON.stringify(headers)} ${body?.slice(0, 300) ?? ""}`;
  let response: Response;
  try {
    response = await fetch(`${svc.url}${pathname}`, {
      method,
      headers: { "x-platform-api-key": svc.key.key, ...headers },
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
  } catch (error) {
    throw new Error(`no answer (${(error as Error).message}) to ${what}`);
  }
  const text = await response.text();
  count(pathname, response.status);
  if (FORBIDDEN_STATUSES.has(response.status)) throw new Error(`${response.status} ${text} for ${what}`);
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const events = parseEvents(text);
    const last = events.at(-1)!;
    if (last.type !== "system" || !["finished", "error"].includes(last.data.status))
      throw new Error(`stream ended without finished/error: ${text.slice(-300)} for ${what}`);
    if (
      last.data.status === "error" &&
      (typeof last.data.error !== "string" || typeof last.data.code !== "string")
    )
      throw new Error(`error event without error/code: ${JSON.stringify(last)} for ${what}`);
    if (last.data.code === "INTERNAL")
      throw new Error(`internal error event ${JSON.stringify(last)} for ${what}`);
    return;
  }
  // An exported script is text (SessionScript): a script a runner can read, never a stack trace.
  if (response.status === 200 && response.headers.get("content-type")?.startsWith("text/plain")) {
    if (!/\/script(\?|$)/.test(pathname) || !text.startsWith("// Recorded by Deckhand"))
      throw new Error(`200 text that is not a script: ${text.slice(0, 300)} for ${what}`);
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${response.status} body is not JSON: ${text.slice(0, 300)} for ${what}`);
  }
  if (response.status === 200 || response.status === 101) {
    if ((parsed as { success?: unknown }).success !== true)
      throw new Error(`200 without success: ${text} for ${what}`);
    return;
  }
  const error = parsed as { success?: unknown; error?: unknown; code?: unknown };
  if (
    error.success !== false ||
    typeof error.error !== "string" ||
    !error.error ||
    typeof error.code !== "string"
  )
    throw new Error(`${response.status} not in the error shape: ${text.slice(0, 300)} for ${what}`);
}

// ---------- arbitraries ----------
// Mostly valid input with something wrong in it, so that the runs reach past validation into the
// operations (the model, the browser); the rest anything at all.

const anyJson = fc.jsonValue({ maxDepth: 4 });
/** Values of every JSON type, weighted towards the troublesome ones. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  anyJson,
  fc.constantFrom(
    0,
    -1,
    2 ** 31,
    2 ** 53,
    1e308,
    -0.5,
    "",
    " ",
    "%",
    "\u0000",
    "__proto__",
    null,
    true,
    [],
    {},
  ),
  fc.string({ maxLength: 40 }),
  fc.double(),
);
/** Rarely there, and then anything. */
const rarely: fc.Arbitrary<unknown> = fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, oddValue);
/** Usually `valid`, sometimes anything. */
const mostly = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: oddValue });
const headerValue = fc
  .string({ unit: "grapheme-ascii", maxLength: 40 })
  .map((s) => s.replace(/[^\x20-\x7e]/g, ""));
const fuzzHeaders = fc.record(
  {
    "x-stream-response": fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("true", "false") },
      { weight: 1, arbitrary: fc.oneof(fc.constantFrom("TRUE", "1", ""), headerValue) },
    ),
    "x-model-api-key": fc.oneof({ weight: 4, arbitrary: fc.constant("sk-fuzz-0123456789") }, headerValue),
    "x-platform-cache-bypass": fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("true", "false") },
      headerValue,
    ),
    "x-language": headerValue,
    "x-sdk-version": headerValue,
    "content-type": fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8") },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/json; charset=latin1",
        ),
      },
    ),
  },
  { requiredKeys: ["content-type"] },
);

function modelArb(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(validOptions().model) },
    fc.constantFrom("openai/gpt-4.1-mini", "nonsense", "a/", "/b", ""),
    fc.record(
      { modelName: oddValue, baseURL: fc.constant(fx.model.baseURL), headers: oddValue, apiKey: oddValue },
      { requiredKeys: [] },
    ),
    oddValue,
  );
}

/** Headers of a well-formed request. */
const validHeaders = { "content-type": "application/json" as const, "x-model-api-key": "sk-fuzz-0123456789" };
/** The options of a well-formed operation request: the scripted model, the service's own timeout. */
const validOptions = () => ({ model: { modelName: "openai/gpt-4.1-mini", baseURL: fx.model.baseURL } });

function optionsArb(): fc.Arbitrary<unknown> {
  return mostly(
    fc.record(
      {
        model: modelArb(),
        timeout: mostly(fc.integer({ min: 1, max: 3000 })),
        variables: mostly(
          fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), oddValue), { maxKeys: 4 }),
        ),
        selector: mostly(fc.constantFrom("#username", "//form", "//*[", "iframe >> x", "body")),
        ignoreSelectors: mostly(fc.array(fc.constantFrom("#username", "nav", "//*["), { maxLength: 3 })),
        screenshot: mostly(fc.boolean()),
        serverCache: mostly(fc.boolean()),
        waitUntil: mostly(fc.constantFrom("load", "domcontentloaded", "networkidle")),
        referer: mostly(fc.constant(fx.site.url("index.html"))),
      },
      { requiredKeys: [] },
    ),
  );
}

function bodyArb(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  return fc.oneof(
    // Mostly shaped like the endpoint's body.
    { weight: 6, arbitrary: fc.record(fields, { requiredKeys: [] }).map((b) => JSON.stringify(b)) },
    anyJson.map((v) => JSON.stringify(v)),
    // Not JSON at all, or JSON with a trap in it.
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      '{"__proto__":{"x":1}}',
      '{"options":{"constructor":{"prototype":{}}}}',
      `${"[".repeat(500)}${"]".repeat(500)}`,
      '{"input":"x"',
      "",
      "null",
      '"str"',
    ),
  );
}

function pathId(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(id) },
    fc.uuid(),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc.constantFrom("%", "%zz", "..", "a".repeat(150), "%2F", "%00"),
  );
}

/** Runs per endpoint; FUZZ_RUNS=<n> for a longer hunt (and FUZZ_TIME_MS for its time per endpoint). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 80);
/** Each run's seed is printed; FUZZ_SEED=<seed> replays one. */
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_MS ?? 7000);

/**
 * Runs `send` on generated values. `examples` go first, whatever the time limit: a well-formed
 * request per operation, so that reaching the operation itself (an answer of 200) does not hang on
 * the random runs alone, which a busy machine cuts short (CI once got 44 runs of act in the time
 * limit, none of them both valid and given time enough).
 */
async function fuzz<T extends unknown[]>(
  arbs: { [K in keyof T]: fc.Arbitrary<T[K]> },
  send: (...values: T) => Promise<void>,
  examples: NoInfer<T>[] = [],
  runs = RUNS,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(...(arbs as unknown as [fc.Arbitrary<unknown>]), async (...values: unknown[]) => {
      try {
        await send(...(values as T));
      } catch (error) {
        failures.push((error as Error).message);
        throw error;
      }
    }),
    {
      numRuns: runs,
      seed: SEED,
      endOnFailure: true,
      examples: examples as unknown as [unknown][],
      plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS)],
    },
  );
}

describe("fuzzing every endpoint", () => {
  it("POST /v1/sessions/start", async () => {
    const viewport = fc.record({
      width: fc.integer({ min: 1, max: 5000 }),
      height: fc.integer({ min: 1, max: 5000 }),
    });
    const body = bodyArb({
      modelName: mostly(fc.constantFrom("openai/gpt-4.1-mini", "x")),
      domSettleTimeoutMs: mostly(fc.integer({ min: 0, max: 500 })),
      verbose: mostly(fc.constantFrom(0, 1, 2)),
      actTimeoutMs: mostly(fc.integer({ min: 1, max: 5000 })),
      sessionCreateParams: mostly(
        fc.record(
          {
            timeout: mostly(fc.integer({ min: 1, max: 600 })),
            keepAlive: mostly(fc.boolean()),
            userMetadata: mostly(fc.dictionary(fc.string({ maxLength: 5 }), anyJson, { maxKeys: 3 })),
            browserSettings: mostly(fc.record({ viewport: mostly(viewport) })),
          },
          { requiredKeys: [] },
        ),
      ),
      sessionId: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, fc.uuid(), oddValue),
      browser: mostly(
        fc.record(
          {
            type: fc.constantFrom("local", "remote"),
            launchOptions: mostly(
              fc.record(
                { headless: fc.boolean(), args: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }) },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
      ),
    });
    const valid = JSON.stringify({ modelName: "openai/gpt-4.1-mini", domSettleTimeoutMs: 100 });
    await fuzz(
      [body, fuzzHeaders],
      async (b, h) => {
        await check("POST", "/v1/sessions/start", b, h);
        // Started sessions are ended again, so that capacity is left for the rest.
        for (const active of await svc.store.listActiveSessions()) {
          if (active.id !== id) await svc.op(active.id, "end");
        }
      },
      [[valid, validHeaders]],
    );
  }, 60_000);

  it("POST /v1/sessions/{id}/act", async () => {
    const input = fc.oneof(
      fc.constantFrom("click the sign in button", "type %user% into the username"),
      fc.record(
        {
          selector: mostly(fc.constantFrom("#username", "//input[1]", "//nothing", "//*[")),
          description: mostly(fc.constant("the field")),
          method: mostly(fc.constantFrom("click", "fill", "type", "press", "selectOption", "hover", "dance")),
          arguments: mostly(fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 })),
        },
        { requiredKeys: ["selector", "description", "method", "arguments"] },
      ),
      oddValue,
    );
    const body = bodyArb({ input, options: optionsArb(), frameId: rarely, streamResponse: rarely });
    const valid = JSON.stringify({ input: "click the sign in button", options: validOptions() });
    await fuzz([pathId(), body, fuzzHeaders], (sid, b, h) => check("POST", `/v1/sessions/${sid}/act`, b, h), [
      [id, valid, validHeaders],
    ]);
  }, 60_000);

  it("POST /v1/sessions/{id}/extract", async () => {
    const schema = fc.oneof(
      { weight: 3, arbitrary: fc.constant({ type: "object", properties: { name: { type: "string" } } }) },
      fc.record(
        {
          type: mostly(fc.constantFrom("object", "string", "array")),
          properties: mostly(
            fc.dictionary(fc.string({ maxLength: 5 }), fc.constant({ type: "string" }), { maxKeys: 3 }),
          ),
          items: oddValue,
          enum: mostly(fc.array(fc.string({ maxLength: 4 }), { maxLength: 5 })),
          $ref: mostly(fc.constantFrom("#", "#/definitions/x", "http://x/y")),
        },
        { requiredKeys: [] },
      ),
      oddValue,
    );
    const body = bodyArb({
      instruction: mostly(fc.constantFrom("the username field", "")),
      schema: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, schema),
      options: optionsArb(),
      frameId: rarely,
      streamResponse: rarely,
    });
    const valid = JSON.stringify({ instruction: "the username field", options: validOptions() });
    await fuzz(
      [pathId(), body, fuzzHeaders],
      (sid, b, h) => check("POST", `/v1/sessions/${sid}/extract`, b, h),
      [[id, valid, validHeaders]],
    );
  }, 60_000);

  it("POST /v1/sessions/{id}/observe", async () => {
    const body = bodyArb({
      instruction: mostly(fc.constantFrom("the buttons", "")),
      options: optionsArb(),
      frameId: rarely,
      streamResponse: rarely,
    });
    const valid = JSON.stringify({ instruction: "the buttons", options: validOptions() });
    await fuzz(
      [pathId(), body, fuzzHeaders],
      (sid, b, h) => check("POST", `/v1/sessions/${sid}/observe`, b, h),
      [[id, valid, validHeaders]],
    );
  }, 60_000);

  it("POST /v1/sessions/{id}/navigate", async () => {
    const url = fc.oneof(
      { weight: 3, arbitrary: fc.constant(fx.site.url("form.html")) },
      fc.constantFrom(
        "about:blank",
        "data:text/html,<p>x</p>",
        "file:///etc/passwd",
        "chrome://version",
        "javascript:1",
      ),
      fc.webPath().map((path) => `${new URL(fx.site.url("")).origin}${path}`),
      oddValue,
    );
    const body = bodyArb({ url, options: optionsArb(), frameId: rarely, streamResponse: rarely });
    const valid = JSON.stringify({ url: fx.site.url("form.html") });
    await fuzz(
      [pathId(), body, fuzzHeaders],
      (sid, b, h) => check("POST", `/v1/sessions/${sid}/navigate`, b, h),
      [[id, valid, validHeaders]],
    );
  }, 60_000);

  it("POST /v1/sessions/{id}/agentExecute and /end", async () => {
    const body = bodyArb({
      agentConfig: mostly(
        fc.record({ model: modelArb(), mode: mostly(fc.constantFrom("dom", "cua")) }, { requiredKeys: [] }),
      ),
      executeOptions: mostly(
        fc.record(
          {
            instruction: mostly(fc.constant("log in")),
            maxSteps: mostly(fc.integer({ min: 1, max: 5 })),
            toolTimeout: mostly(fc.integer({ min: 1, max: 5000 })),
            variables: rarely,
          },
          { requiredKeys: [] },
        ),
      ),
    });
    await fuzz([pathId(), body, fuzzHeaders], (sid, b, h) =>
      check("POST", `/v1/sessions/${sid}/agentExecute`, b, h),
    );
    // /end of anything but the fuzzed session (ending that one would leave nothing to fuzz).
    const otherId = pathId().filter((sid) => sid !== id);
    await fuzz([otherId, fc.option(bodyArb({}), { nil: undefined }), fuzzHeaders], (sid, b, h) =>
      check("POST", `/v1/sessions/${sid}/end`, b, h),
    );
  }, 60_000);

  it("GET /v1/sessions/{id}/replay, /script and /cdp (without an upgrade), and paths that lead nowhere", async () => {
    const route = fc.constantFrom("replay", "script", "cdp", "act", "", "nowhere");
    const query = fc.oneof(
      fc.constant(""),
      headerValue.map((v) => `?apiKey=${encodeURIComponent(v)}`),
      headerValue.map((v) => `?format=${encodeURIComponent(v)}`),
      fc.constantFrom(
        "?apiKe%79=x",
        "?%zz=1",
        "?apiKey=a&apiKey=b",
        "?a=%",
        "?format=deckhand",
        "?format=playwright-test&assertExtracts=true",
        "?format=deckhand&format=playwright-test",
      ),
    );
    await fuzz([pathId(), route, query, fuzzHeaders], (sid, r, q, h) =>
      check("GET", `/v1/sessions/${sid}/${r}${q}`, undefined, h),
    );
  }, 60_000);

  it("found nothing, and reached the operations themselves (answers of 200) on every one", () => {
    const table = Object.fromEntries(
      [...statuses].map(([endpoint, seen]) => [endpoint, Object.fromEntries(seen)]),
    );
    console.info(`fuzz: statuses per endpoint ${JSON.stringify(table)}`);
    expect(failures).toEqual([]);
    for (const endpoint of ["/v1/sessions/start", "act", "extract", "observe", "navigate"]) {
      expect(statuses.get(endpoint)?.get(200) ?? 0, `${endpoint}: ${JSON.stringify(table)}`).toBeGreaterThan(
        0,
      );
    }
  });
});
