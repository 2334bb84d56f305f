// The server cache as a REMOTE client uses it: on by default (`serverCache`), an answer served
// again says HIT and costs no model call, and `serverCache: false` (on a call, or on the instance)
// goes to the model. Act's cache in both modes is in test/ops/action-cache.test.ts.

import { match, type ScriptedRequest } from "@deckhand/testkit";
import type { Deckhand } from "deckhand";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RemoteFixture, remoteFixture } from "./helpers.ts";

let fx: RemoteFixture;
beforeAll(async () => {
  fx = await remoteFixture();
});
afterAll(async () => {
  await fx?.close();
});

/** The id of the outline line `line` in a request's prompt. */
function idIn(request: ScriptedRequest, line: string): number {
  const found = new RegExp(`\\[(\\d+)\\] ${line}`).exec(request.text);
  if (!found) throw new Error(`no ${line} in the outline:\n${request.text}`);
  return Number(found[1]);
}

/**
 * A session of the file's own project, with the server cache on by default, on a page no test
 * asked about before: the cache keys entries by URL, so a query of its own gives each test an
 * empty cache, with the project's browser kept from test to test (a project of its own per test
 * would launch one each time).
 */
let dh: Deckhand;
let projectKey: string;
let pages = 0;
/** The counter page at a URL of its own. */
const freshPage = () => fx.site.url(`index.html?test=${++pages}`);
beforeAll(async () => {
  projectKey = await fx.service.createKey();
});
beforeEach(async () => {
  dh = await fx.started({ apiKey: projectKey });
  await dh.page.goto(freshPage());
  fx.model.on(match.schemaName("act"), (request) => ({
    elementId: idIn(request, "button: Increment"),
    method: "click",
    arguments: [],
    description: "click Increment",
    completed: true,
  }));
  fx.model.on(match.schemaName("extract"), { count: 0 });
  fx.model.on(match.schemaName("observe"), (request) => ({
    elements: [{ elementId: idIn(request, "button: Increment"), description: "the Increment button" }],
  }));
});
afterEach(async () => {
  await dh.close();
  fx.model.clear();
});

const countSchema = z.object({ count: z.number() });

describe("on by default", () => {
  it("serves a repeated extract without the model: MISS, then HIT", async () => {
    const calls = fx.model.callCount;
    expect(await dh.extract("the count", countSchema)).toEqual({ count: 0, cacheStatus: "MISS" });
    expect(await dh.extract("the count", countSchema)).toEqual({ count: 0, cacheStatus: "HIT" });
    expect(fx.model.callCount).toBe(calls + 1);
  });

  it("serves a repeated observe without the model", async () => {
    const calls = fx.model.callCount;
    const first = await dh.observe("find the increment button");
    const second = await dh.observe("find the increment button");
    expect(second).toEqual(first);
    expect(first.map((a) => a.description)).toEqual(["the Increment button"]);
    expect(fx.model.callCount).toBe(calls + 1);
  });

  it("replays a repeated act on the page without the model: MISS, then HIT", async () => {
    const calls = fx.model.callCount;
    expect((await dh.act("click increment")).cacheStatus).toBe("MISS");
    const again = await dh.act("click increment");
    expect(again).toMatchObject({ success: true, cacheStatus: "HIT" });
    expect(fx.model.callCount).toBe(calls + 1);
    expect(await dh.page.locator("#count").textContent()).toBe("2");
  });

  it("keeps the page text (extract with no instruction) out of the cache", async () => {
    const first = await dh.extract();
    await dh.page.locator("#increment").click();
    const second = await dh.extract();
    expect(Object.keys(second)).toEqual(["pageText"]);
    expect(second.pageText).not.toBe(first.pageText);
  });
});

describe("serverCache: false", () => {
  it("on a call, asks the model, and the answer carries no cacheStatus", async () => {
    await dh.act("click increment");
    const calls = fx.model.callCount;
    const bypassed = await dh.act("click increment", { serverCache: false });
    expect(bypassed.success).toBe(true);
    expect(bypassed).not.toHaveProperty("cacheStatus");
    expect(fx.model.callCount).toBe(calls + 1);
    expect(await dh.extract("the count", countSchema, { serverCache: false })).toEqual({ count: 0 });
    expect(fx.model.callCount).toBe(calls + 2);
  });

  it("on the instance, asks the model every time, unless a call turns the cache on", async () => {
    const uncached = await fx.started({ apiKey: projectKey, serverCache: false });
    try {
      await uncached.page.goto(freshPage());
      const calls = fx.model.callCount;
      expect(await uncached.extract("the count", countSchema)).toEqual({ count: 0 });
      expect(await uncached.extract("the count", countSchema)).toEqual({ count: 0 });
      expect(fx.model.callCount).toBe(calls + 2);
      expect(await uncached.extract("the count", countSchema, { serverCache: true })).toEqual({
        count: 0,
        cacheStatus: "MISS",
      });
      expect(await uncached.extract("the count", countSchema, { serverCache: true })).toEqual({
        count: 0,
        cacheStatus: "HIT",
      });
      expect(fx.model.callCount).toBe(calls + 3);
    } finally {
      await uncached.close();
    }
  });
});
