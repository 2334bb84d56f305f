// Options of the REMOTE client: where the API key and the service's address come from, what it says
// when it has neither a key nor a service to talk to, and the options it cannot honour.

import { createServer, type Server } from "node:http";
import {
  Deckhand,
  type LogLine,
  MissingEnvironmentVariableError,
  ServiceEnvironmentError,
  ServiceError,
  ServiceInitError,
} from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RemoteFixture, remoteFixture, withEnv } from "./helpers.ts";

let fx: RemoteFixture;
beforeAll(async () => {
  fx = await remoteFixture();
});
afterAll(async () => {
  await fx?.close();
});

/** A 127.0.0.1 address nothing listens on (a port that was just free). */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("the API key", () => {
  it("comes from PLATFORM_API_KEY when `apiKey` is not given", async () => {
    await withEnv({ PLATFORM_API_KEY: fx.service.apiKey }, async () => {
      const dh = await fx.started({ apiKey: undefined });
      expect(dh.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it("comes from `apiKey` before PLATFORM_API_KEY", async () => {
    await withEnv({ PLATFORM_API_KEY: "dh_not_a_key_of_this_service_000" }, async () => {
      const dh = await fx.started({ apiKey: fx.service.apiKey });
      expect(dh.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it("missing from both, makes the constructor throw MissingEnvironmentVariableError", async () => {
    await withEnv({ PLATFORM_API_KEY: undefined }, () => {
      const error = (() => {
        try {
          fx.client({ apiKey: undefined });
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(MissingEnvironmentVariableError);
      expect((error as MissingEnvironmentVariableError).variable).toBe("PLATFORM_API_KEY");
      expect((error as Error).message).toContain("pass `apiKey` or set PLATFORM_API_KEY");
    });
  });

  it("unknown to the service, is refused at init() with its UNAUTHORIZED answer", async () => {
    const running = fx.service.service.sessions.size;
    const dh = fx.client({ apiKey: "dh_not_a_key_of_this_service_000" });
    const error = await dh.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: "UNAUTHORIZED", status: 401 });
    // Nothing was started for it.
    expect(fx.service.service.sessions.size).toBe(running);
  });
});

describe("the service's address", () => {
  it("comes from PLATFORM_API_URL when `apiUrl` is not given", async () => {
    await withEnv({ PLATFORM_API_URL: fx.service.url }, async () => {
      const dh = await fx.started({ apiUrl: undefined });
      expect(dh.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it("comes from `apiUrl` before PLATFORM_API_URL", async () => {
    await withEnv({ PLATFORM_API_URL: await deadAddress() }, async () => {
      const dh = await fx.started({ apiUrl: fx.service.url });
      expect(dh.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it("is http://127.0.0.1:3000 when neither is given", async (ctx) => {
    const seen: { method?: string; url?: string; key?: string | string[] }[] = [];
    const server: Server = createServer((request, response) => {
      seen.push({ method: request.method, url: request.url, key: request.headers["x-platform-api-key"] });
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ success: false, error: "not this time", code: "UNAUTHORIZED" }));
    });
    const listening = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(3000, "127.0.0.1", () => resolve(true));
    });
    // Someone else's service may be using the port on this machine; then this cannot be checked here.
    if (!listening) ctx.skip("127.0.0.1:3000 is in use");
    try {
      await withEnv({ PLATFORM_API_URL: undefined }, async () => {
        const dh = fx.client({ apiUrl: undefined, apiKey: "dh_key_for_the_default_address" });
        await expect(dh.init()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      });
      expect(seen).toEqual([
        { method: "POST", url: "/v1/sessions/start", key: "dh_key_for_the_default_address" },
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("with no service there, makes init() fail with ServiceInitError naming the address and what to do", async () => {
    const address = await deadAddress();
    const dh = fx.client({ apiUrl: address });
    const error = await dh.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceInitError);
    expect((error as Error).message).toContain(`The Deckhand service at ${address} could not be reached`);
    expect((error as Error).message).toContain("Set apiUrl or PLATFORM_API_URL");
  });
});

describe("options of the client's own process", () => {
  it("refuses an llmClient with ServiceEnvironmentError: the service calls the model", () => {
    const llmClient = { modelName: "house/model", generate: async () => ({ data: {} }) };
    const error = (() => {
      try {
        fx.client({ llmClient: llmClient as never });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ServiceEnvironmentError);
    expect((error as ServiceEnvironmentError).option).toBe("llmClient");
  });

  it("warns that cacheDir and logInferenceToFile have no effect (the service caches and calls the model)", () => {
    const lines: LogLine[] = [];
    new Deckhand(
      fx.options({ cacheDir: "/nonexistent/cache", logInferenceToFile: true, logger: (l) => lines.push(l) }),
    );
    const warnings = lines.filter((l) => l.level === 0).map((l) => l.message);
    expect(warnings).toEqual([
      expect.stringContaining("cacheDir has no effect"),
      expect.stringContaining("logInferenceToFile has no effect"),
    ]);
  });
});
