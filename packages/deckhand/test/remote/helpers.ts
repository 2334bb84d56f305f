// Shared by the REMOTE client's own tests: one in-process service, fixture site and scripted model
// per file, and REMOTE clients of that service that are all closed with the fixture.

import {
  type FixtureServer,
  type ScriptedModel,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { Deckhand, type DeckhandOptions } from "deckhand";
import { startTestService, type TestService } from "../support/service.ts";

export const MODEL_NAME = "openai/gpt-4.1-mini";
/** Long enough to be registered as a secret; never a real key. */
export const MODEL_KEY = "sk-test-remote-0123456789";

export interface RemoteFixture {
  service: TestService;
  site: FixtureServer;
  model: ScriptedModel;
  /** The options of a quiet REMOTE client of the service, with the scripted model. */
  options(extra?: Partial<DeckhandOptions>): DeckhandOptions;
  /** A REMOTE client, not started; closed with the fixture. */
  client(extra?: Partial<DeckhandOptions>): Deckhand;
  /** A started REMOTE client; closed with the fixture. */
  started(extra?: Partial<DeckhandOptions>): Promise<Deckhand>;
  close(): Promise<void>;
}

export async function remoteFixture(): Promise<RemoteFixture> {
  const [service, site, model] = await Promise.all([
    startTestService(),
    startFixtureServer(),
    startScriptedModel(),
  ]);
  const clients: Deckhand[] = [];
  const options = (extra: Partial<DeckhandOptions> = {}): DeckhandOptions => ({
    env: "REMOTE",
    apiKey: service.apiKey,
    apiUrl: service.url,
    verbose: 0,
    disablePino: true,
    model: { modelName: MODEL_NAME, apiKey: MODEL_KEY, baseURL: model.baseURL },
    // "click increment" is for the scripted model here, not an explicit instruction.
    explicitInstructions: false,
    ...extra,
  });
  const client = (extra?: Partial<DeckhandOptions>) => {
    const dh = new Deckhand(options(extra));
    clients.push(dh);
    return dh;
  };
  return {
    service,
    site,
    model,
    options,
    client,
    started: async (extra) => {
      const dh = client(extra);
      await dh.init();
      return dh;
    },
    close: async () => {
      await Promise.all(clients.map((dh) => dh.close().catch(() => undefined)));
      // The service fails its close when a Chrome of it is left running.
      await Promise.all([service.close(), site.close(), model.close()]);
    },
  };
}

/** Runs `work` with environment variables set (undefined: unset), and puts them back after. */
export async function withEnv<T>(
  vars: Record<string, string | undefined>,
  work: () => T | Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(vars);
  try {
    return await work();
  } finally {
    apply(saved);
  }
}
