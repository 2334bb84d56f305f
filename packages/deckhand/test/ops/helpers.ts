// Shared by the tests of the AI operations: one browser (LOCAL) or one in-process service
// (REMOTE), one fixture site and one scripted model per test file and mode, the model reached
// through the real OpenAI provider code; and small readers for what the model was shown (ids in
// the outline) and what the page shows (#result, #log).
//
// Every file runs its tests in both modes: `describe.each(MODES)("%s", (mode) => ...)` with
// `opsFixture(mode)`. In REMOTE mode the operations go over HTTP to the service, the page API
// through its CDP proxy; what a test checks (the page, the model's requests, results, errors)
// is the same.

import { existsSync } from "node:fs";
import {
  type FixtureServer,
  match,
  type ScriptedModel,
  type ScriptedRequest,
  type ScriptedResponder,
  type ScriptedRuleOptions,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { Deckhand, type DeckhandOptions, type Page } from "deckhand";
import { expect } from "vitest";
import { startDeckhand } from "../support/browser.ts";
import { startTestService, type TestService } from "../support/service.ts";

export type Mode = "LOCAL" | "REMOTE";
/** The modes every operation test runs in. */
export const MODES: readonly Mode[] = ["LOCAL", "REMOTE"];

export const MODEL_NAME = "openai/gpt-4.1-mini";
/** Long enough to be registered as a secret; never a real key. */
export const API_KEY = "sk-test-ops-0123456789";

export interface OpsFixture {
  mode: Mode;
  dh: Deckhand;
  site: FixtureServer;
  model: ScriptedModel;
  /** REMOTE: the service `dh` works through (undefined in LOCAL mode). */
  service: TestService | undefined;
  close(): Promise<void>;
}

/** The model object every test uses: the scripted server behind the real OpenAI provider. */
export function modelConfig(model: ScriptedModel, modelName = MODEL_NAME) {
  return { modelName, apiKey: API_KEY, baseURL: model.baseURL };
}

/**
 * Options of a REMOTE client of `service` (quiet, like the LOCAL test instances). The server cache
 * is off unless `extra` turns it on: the tests ask the same questions of the same pages again and
 * again, and each expects the model to answer (action-cache.test.ts tests the server cache).
 */
export function remoteOptions(service: TestService, extra: Partial<DeckhandOptions> = {}): DeckhandOptions {
  return {
    env: "REMOTE",
    apiKey: service.apiKey,
    apiUrl: service.url,
    verbose: 0,
    disablePino: true,
    serverCache: false,
    ...extra,
  };
}

/**
 * A started Deckhand in `mode` whose `model` is the scripted server, the fixture site and the model
 * server itself (and in REMOTE mode the service). `extra` options go to the Deckhand (a function
 * gets the model first, for options that need it).
 */
export async function opsFixture(
  mode: Mode,
  extra: Partial<DeckhandOptions> | ((model: ScriptedModel) => Partial<DeckhandOptions>) = {},
): Promise<OpsFixture> {
  const [model, site, service] = await Promise.all([
    startScriptedModel(),
    startFixtureServer(),
    mode === "REMOTE" ? startTestService() : undefined,
  ]);
  // These tests are about the model's part: explicit instructions (explicit.test.ts) are off unless
  // a test turns them on, so "click increment" reaches the scripted model.
  const options = {
    model: modelConfig(model),
    explicitInstructions: false,
    ...(typeof extra === "function" ? extra(model) : extra),
  };
  let dh: Deckhand;
  try {
    if (service) {
      dh = new Deckhand(remoteOptions(service, options));
      await dh.init();
    } else dh = await startDeckhand({}, options);
  } catch (error) {
    await Promise.all([model.close(), site.close(), service?.close()]);
    throw error;
  }
  const launched = dh.context.browser.launched;
  return {
    mode,
    dh,
    site,
    model,
    service,
    close: async () => {
      await dh.close();
      // The service checks that every Chrome it started is gone.
      await Promise.all([site.close(), model.close(), service?.close()]);
      // The browser is gone, and so is its temporary profile.
      if (launched) {
        expect(await waitForNoChrome(launched.userDataDir)).toEqual([]);
        expect(existsSync(launched.userDataDir)).toBe(false);
      }
    },
  };
}

/**
 * A second Deckhand with its own options: in LOCAL mode in a new isolated context of the fixture's
 * browser (no second browser to start), in REMOTE mode a second session of the same service. Close
 * it when done; that disposes of its context (ends its session).
 */
export async function anotherDeckhand(
  fx: OpsFixture,
  options: Partial<DeckhandOptions> = {},
): Promise<Deckhand> {
  const all = {
    verbose: 0 as const,
    disablePino: true,
    model: modelConfig(fx.model),
    explicitInstructions: false,
    ...options,
  };
  if (fx.service) {
    const dh = new Deckhand(remoteOptions(fx.service, all));
    await dh.init();
    return dh;
  }
  const context = await fx.dh.context.browser.newContext();
  const dh = Deckhand.inContext(context, all);
  await dh.init();
  return dh;
}

/**
 * Headers another library needs to connect to `fx.dh.connectURL()`: none to a LOCAL browser, the
 * API key to the service's CDP proxy of a REMOTE session.
 */
export function connectHeaders(fx: OpsFixture): Record<string, string> {
  return fx.service ? { "x-platform-api-key": fx.service.apiKey } : {};
}

/**
 * Opens `path` of the fixture site in the active page (a full URL is used as it is), and shows
 * that tab: a test that opened and closed another tab may have left it in the background.
 */
export async function open(fx: OpsFixture, path: string, dh: Deckhand = fx.dh): Promise<Page> {
  const page = dh.page;
  await page.bringToFront();
  await page.goto(path.includes("://") ? path : fx.site.url(path));
  return page;
}

/**
 * The id the outline in the request's prompt gives the line matching `line` (e.g. "button: Sign
 * in"). The whole conversation is searched: on a retry the outline is in an earlier message.
 */
export function idOf(request: ScriptedRequest, line: string | RegExp): number {
  const pattern =
    typeof line === "string"
      ? new RegExp(`\\[(\\d+)\\] ${line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`)
      : new RegExp(`\\[(\\d+)\\] ${line.source}`);
  const found = pattern.exec(request.text);
  if (!found) throw new Error(`No line ${String(line)} in the outline the model got:\n${request.text}`);
  return Number(found[1]);
}

export interface StepAnswer {
  elementId: number;
  method: string;
  arguments?: string[];
  description?: string;
  completed?: boolean;
}

/** An act answer in the shape the act schema asks for. */
export function step(answer: StepAnswer) {
  return {
    elementId: answer.elementId,
    method: answer.method,
    arguments: answer.arguments ?? [],
    description: answer.description ?? `${answer.method} element ${answer.elementId}`,
    completed: answer.completed ?? true,
  };
}

/** Answers every act request with `respond` (until `model.clear()`). */
export function onAct(
  model: ScriptedModel,
  respond: (request: ScriptedRequest) => object | Promise<object>,
  options?: ScriptedRuleOptions,
) {
  return model.on(match.schemaName("act"), respond as ScriptedResponder, options);
}

/** Answers act requests by clicking (or `method`) the element whose outline line matches `line`. */
export function actOn(model: ScriptedModel, line: string | RegExp, method = "click", args: string[] = []) {
  return onAct(model, (request) =>
    step({
      elementId: idOf(request, line),
      method,
      arguments: args,
      description: `${method} ${String(line)}`,
    }),
  );
}

/** The requests of one operation (act, extract, observe) the model has received so far. */
export function requestsOf(model: ScriptedModel, operation: string): ScriptedRequest[] {
  return model.requests.filter((r) => r.schemaName === operation);
}

/** The text of an element of the main document, straight from the DOM ("" when missing). */
export function textOf(page: Page, selector: string): Promise<string> {
  return page.evaluate((s: string) => document.querySelector(s)?.textContent ?? "", selector);
}

/**
 * Polls `read` until `accept` takes its value or time is up; returns the last value. The default
 * limit is one only a stall reaches (waiting ends as soon as the value is accepted).
 */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
