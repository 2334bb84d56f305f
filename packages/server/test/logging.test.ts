import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, defaultLogFormat } from "../src/logger.ts";
import { redactSecrets } from "../src/redact.ts";
import type { SessionHandlers } from "../src/routes/handlers.ts";
import { startService, type TestService } from "./helpers.ts";

describe("logging", () => {
  let service: TestService;
  const handlers: Partial<SessionHandlers> = {
    async sessionAct(context) {
      context.request.log.info({ options: context.body.options }, "act options");
      throw new Error("boom");
    },
  };

  beforeAll(async () => {
    service = await startService({ handlers });
  });
  afterAll(() => service.close());

  it("writes the real status code of every answered request in the access log", async () => {
    const session = await service.session();
    const ok = await service.call(`/v1/sessions/${session.id}/replay`, { method: "GET" });
    const unauthorized = await service.call("/v1/sessions/start", {
      method: "POST",
      headers: { "x-platform-api-key": "wrong-key" },
      json: {},
    });
    expect(unauthorized.status).toBe(401);
    const completed = service.logs().filter((line) => line.msg === "request completed") as {
      res?: { statusCode: unknown };
    }[];
    const codes = completed.map((line) => line.res?.statusCode);
    expect(codes).not.toContain(null);
    expect(codes).toContain(ok.status);
    expect(codes).toContain(401);
  });

  it("writes one line per request: its method, path, status and time; a viewer's static assets at debug", async () => {
    const session = await service.session();
    const before = service.logs().length;
    const replay = await service.call(`/v1/sessions/${session.id}/replay`, { method: "GET" });
    expect(replay.status).toBe(200);
    const asset = await fetch(`${service.url}/devtools-frontend/inspector.html`);
    await asset.arrayBuffer();
    const thumbnail = await fetch(`${service.url}/v1/sessions/${session.id}/view/screenshots/1.jpg?token=x`);
    await thumbnail.arrayBuffer();
    const lines = service.logs().slice(before) as {
      msg: string;
      level: number;
      reqId?: string;
      req?: { method: string; url: string };
      res?: { statusCode: number };
      responseTime?: number;
    }[];
    // Fastify's "incoming request" line is gone: one line, when the answer is complete.
    expect(lines.filter((line) => line.msg === "incoming request")).toEqual([]);
    const completed = lines.filter((line) => line.msg === "request completed");
    const replayLines = completed.filter((line) => line.req?.url === `/v1/sessions/${session.id}/replay`);
    expect(replayLines).toHaveLength(1);
    expect(replayLines[0]).toMatchObject({ level: 30, req: { method: "GET" }, res: { statusCode: 200 } });
    expect(replayLines[0]!.responseTime).toBeGreaterThanOrEqual(0);
    const assetLines = completed.filter(
      (line) =>
        line.req?.url.startsWith("/devtools-frontend/") || line.req?.url.includes("/view/screenshots/"),
    );
    expect(assetLines).toHaveLength(2);
    for (const line of assetLines) expect(line.level).toBe(20);
    // One line per request: no request id appears twice.
    const ids = completed.map((line) => line.reqId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("prints readable lines with pino's pretty printer, with the same redaction", async () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    const logger = createLogger({ format: "pretty", destination: out as unknown as never });
    logger.info(
      { options: { model: { modelName: "openai/gpt-4.1-mini", apiKey: "sk-pretty-secret-6" } } },
      "act options",
    );
    logger.info(
      {
        req: { method: "GET", url: "/v1/sessions/abc/replay" },
        res: { statusCode: 200 },
        responseTime: 12.4,
      },
      "request completed",
    );
    logger.flush();
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/INFO.*act options/);
    expect(lines[0]).toContain("[redacted]");
    expect(lines[1]).toMatch(/INFO.*GET \/v1\/sessions\/abc\/replay 200 12 ms/);
    expect(text).not.toContain("sk-pretty-secret-6");
    expect(() => JSON.parse(lines[1]!)).toThrow();
    // Readable on a terminal, JSON anywhere else.
    expect(defaultLogFormat({ isTTY: true })).toBe("pretty");
    expect(defaultLogFormat({ isTTY: false })).toBe("json");
  });

  it("never writes API keys, authorization headers, model keys or variable values", async () => {
    const session = await service.session();
    const response = await service.call(`/v1/sessions/${session.id}/act`, {
      method: "POST",
      headers: {
        authorization: "Bearer bearer-secret-1",
        "x-model-api-key": "sk-model-secret-2",
        "x-language": "typescript",
      },
      json: {
        input: "log in as %user% with %password%",
        options: {
          variables: {
            user: "alice-secret-3",
            password: { value: "hunter2-secret-4", description: "the password" },
          },
          model: { modelName: "openai/gpt-4.1-mini", apiKey: "sk-inline-secret-5" },
        },
      },
    });
    expect(response.status).toBe(500);
    const text = service.logText();
    for (const secret of [
      service.key.key,
      "bearer-secret-1",
      "sk-model-secret-2",
      "alice-secret-3",
      "hunter2-secret-4",
      "sk-inline-secret-5",
    ]) {
      expect(text).not.toContain(secret);
    }
    // What is left is still useful: variable names, descriptions, the model, the client language.
    const failed = service.logs().find((line) => line.msg === "request failed") as { body: unknown };
    expect(failed.body).toEqual({
      input: "log in as %user% with %password%",
      options: {
        variables: { user: "[redacted]", password: { value: "[redacted]", description: "the password" } },
        model: { modelName: "openai/gpt-4.1-mini", apiKey: "[redacted]" },
      },
    });
    expect(text).toContain('"x-language":"typescript"');
    expect(text).toContain('"msg":"act options"');
  });

  it("redacts secrets at any depth of plain objects and leaves other values alone", () => {
    const input = {
      a: [{ deep: { apiKey: "k", "x-platform-api-key": "p", Authorization: "b", keep: 1 } }],
      variables: { v: 1, w: true },
      empty: { apiKey: "" },
      date: new Date(0),
    };
    expect(redactSecrets(input)).toEqual({
      a: [
        {
          deep: {
            apiKey: "[redacted]",
            "x-platform-api-key": "[redacted]",
            Authorization: "[redacted]",
            keep: 1,
          },
        },
      ],
      variables: { v: "[redacted]", w: "[redacted]" },
      empty: { apiKey: "" },
      date: new Date(0),
    });
    expect(input.a[0]?.deep.apiKey).toBe("k");
  });
});
