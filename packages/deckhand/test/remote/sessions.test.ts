// A REMOTE client's session on the service: init() starts one (or resumes `sessionId`), the
// start's options reach it, close() ends it unless keepAlive, and its operations work on the page
// the client means, which need not be the service's idea of the active page.

import { randomUUID } from "node:crypto";
import { match } from "@deckhand/testkit";
import { BrowserbaseSessionNotFoundError, type Deckhand, RemoteSessionNotFoundError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RemoteFixture, remoteFixture } from "./helpers.ts";

let fx: RemoteFixture;
beforeAll(async () => {
  fx = await remoteFixture();
});
afterAll(async () => {
  await fx?.close();
});
afterEach(() => {
  fx.model.clear();
});

/** What init() or an operation rejected with. */
function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => new Error("expected a failure"),
    (error: unknown) => error,
  );
}

describe("init()", () => {
  it("starts a session on the service, whose page the client drives through the CDP proxy", async () => {
    const dh = await fx.started();
    const live = fx.service.service.sessions.get(dh.sessionId!);
    expect(live).toBeDefined();
    await dh.page.goto(fx.site.url("form.html"));
    await dh.page.locator("#username").fill("through the proxy");
    // The service's own instance of the session sees what the client did.
    expect(live!.dh.page.url()).toBe(fx.site.url("form.html"));
    expect(await live!.dh.page.locator("#username").inputValue()).toBe("through the proxy");
    expect(dh.connectURL()).toBe(`${fx.service.url.replace("http:", "ws:")}/v1/sessions/${dh.sessionId}/cdp`);
  });

  it("sets the session id, the session URL (its page) and the debug URL (its debugger), signed links", async () => {
    const dh = fx.client();
    expect([dh.sessionId, dh.sessionUrl, dh.debugUrl]).toEqual([undefined, undefined, undefined]);
    await dh.init();
    const id = dh.sessionId!;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(dh.sessionUrl).toMatch(
      new RegExp(`^${fx.service.url}/v1/sessions/${id}/view\\?token=[\\w-]+\\.[\\w-]+$`),
    );
    expect(dh.debugUrl).toMatch(
      new RegExp(`^${fx.service.url}/v1/sessions/${id}/debug\\?token=[\\w-]+\\.[\\w-]+$`),
    );
    expect([dh.browserbaseSessionID, dh.browserbaseSessionURL, dh.browserbaseDebugURL]).toEqual([
      dh.sessionId,
      dh.sessionUrl,
      dh.debugUrl,
    ]);
    // The session URL opens the session's page with no key.
    const response = await fetch(dh.sessionUrl!);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain(`Session ${id}`);
  });

  it.each([
    ["sessionId", (id: string) => ({ sessionId: id })],
    ["browserbaseSessionID", (id: string) => ({ browserbaseSessionID: id })],
  ])("resumes the session named by %s, with its page as it was", async (_, resume) => {
    const first = await fx.started({ keepAlive: true });
    await first.page.goto(fx.site.url("form.html"));
    await first.page.locator("#username").fill("left here");
    const second = await fx.started(resume(first.sessionId!));
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.page.url()).toBe(fx.site.url("form.html"));
    expect(await second.page.locator("#username").inputValue()).toBe("left here");
    await second.close();
    await first.close();
  });

  it("fails with BrowserbaseSessionNotFoundError (RemoteSessionNotFoundError) for an unknown sessionId", async () => {
    const id = randomUUID();
    const error = await failure(fx.client({ sessionId: id }).init());
    expect(error).toBeInstanceOf(BrowserbaseSessionNotFoundError);
    expect(error).toBeInstanceOf(RemoteSessionNotFoundError);
    expect((error as BrowserbaseSessionNotFoundError).sessionId).toBe(id);
  });

  it("fails the same way for a session of another API key, which goes on untouched", async () => {
    const owner = await fx.started();
    await owner.page.goto(fx.site.url("index.html"));
    const error = await failure(
      fx.client({ apiKey: fx.service.otherApiKey, sessionId: owner.sessionId! }).init(),
    );
    expect(error).toBeInstanceOf(BrowserbaseSessionNotFoundError);
    expect((error as BrowserbaseSessionNotFoundError).sessionId).toBe(owner.sessionId);
    expect(await owner.page.title()).toBe("Deckhand fixture");
    expect(fx.service.service.sessions.get(owner.sessionId!)).toBeDefined();
  });

  it("passes sessionCreateParams to the service: the page has the viewport asked for", async () => {
    const dh = await fx.started({
      sessionCreateParams: { browserSettings: { viewport: { width: 801, height: 599 } } },
    });
    await dh.page.goto(fx.site.url("index.html"));
    expect(await dh.page.evaluate(() => [innerWidth, innerHeight])).toEqual([801, 599]);
  });
});

describe("close()", () => {
  it("ends the session: it cannot be resumed, and its replay stays readable", async () => {
    const dh = await fx.started();
    const id = dh.sessionId!;
    await dh.page.goto(fx.site.url("index.html"));
    await dh.extract();
    await dh.close();
    expect(fx.service.service.sessions.get(id)).toBeUndefined();
    expect(await failure(fx.client({ sessionId: id }).init())).toBeInstanceOf(
      BrowserbaseSessionNotFoundError,
    );
    const replay = await fx.service.replay(id);
    expect(replay.pages.flatMap((p) => p.actions.map((a) => a.method))).toEqual(["extract"]);
  });

  it.each([
    ["keepAlive", { keepAlive: true }],
    ["sessionCreateParams.keepAlive", { sessionCreateParams: { keepAlive: true } }],
  ])(
    "with %s, only disconnects: a new client resumes the session by id and finds the same page",
    async (_, keep) => {
      const first = await fx.started(keep);
      const id = first.sessionId!;
      await first.page.goto(fx.site.url("index.html"));
      await first.page.locator("#increment").click();
      await first.close();
      expect(fx.service.service.sessions.get(id)).toBeDefined();

      const second = await fx.started({ sessionId: id });
      expect(second.page.url()).toBe(fx.site.url("index.html"));
      expect(await second.page.locator("#count").textContent()).toBe("1");
      await second.close();
      expect(fx.service.service.sessions.get(id)).toBeUndefined();
    },
  );
});

describe("the session's record", () => {
  it("names the client's language (x-language) as the replay's clientLanguage", async () => {
    const dh = await fx.started();
    expect((await fx.service.replay(dh.sessionId!)).clientLanguage).toBe("typescript");
  });
});

describe("the page an operation works on", () => {
  let dh: Deckhand;
  beforeAll(async () => {
    dh = await fx.started();
  });

  it("is the client's active page even when the service's active page is another (frameId)", async () => {
    const mine = dh.page;
    await mine.goto(fx.site.url("index.html"));
    // A tab the service opens becomes its active page; the client's stays where it was.
    const live = fx.service.service.sessions.get(dh.sessionId!)!;
    const theirs = await live.dh.context.newPage(fx.site.url("form.html"));
    expect(live.dh.page).toBe(theirs);
    expect(dh.page).toBe(mine);

    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: Number(/\[(\d+)\] button: Increment/.exec(request.text)?.[1] ?? -1),
      method: "click",
      arguments: [],
      description: "click Increment",
      completed: true,
    }));
    expect((await dh.act("click the increment button")).success).toBe(true);
    expect(await mine.locator("#count").textContent()).toBe("1");
    expect(fx.model.lastRequest?.lastUserText).toContain("button: Increment");
    expect(fx.model.lastRequest?.lastUserText).not.toContain("textbox: Username");
    await theirs.close();
  });

  it("is the `page` option's, sent as its frame id", async () => {
    const first = dh.page;
    await first.goto(fx.site.url("table.html"));
    const second = await dh.context.newPage(fx.site.url("index.html"));
    try {
      expect(dh.page).toBe(second);
      expect((await dh.extract({ page: first })).pageText).toContain("Quarterly sales");
      expect((await dh.extract()).pageText).toContain("button: Increment");
    } finally {
      await second.close();
    }
  });
});
