// The server cache: hits cost no model call, act hits are checked against the page and replayed,
// a changed page is a miss, and entries never cross from one project to another.

import type { ServerResponse } from "node:http";
import { match } from "@deckhand/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  eventually,
  type Fixtures,
  idOf,
  type LiveService,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;
let model: ReturnType<typeof scriptedModelConfig>;

const sessions: string[] = [];
async function session(key?: string): Promise<string> {
  const id = await svc.start({}, key ? { key } : {});
  sessions.push(id);
  return id;
}

/** The session most tests use (each asks its own questions, so their cache entries stay apart). */
let shared: string;

beforeAll(async () => {
  [svc, fx] = await Promise.all([startLiveService(), startFixtures()]);
  model = scriptedModelConfig(fx.model);
  shared = await session();
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});
beforeEach(() => {
  fx.model.clear();
  fx.model.resetRequests();
});

afterAll(async () => {
  for (const id of sessions) await svc.op(id, "end").catch(() => undefined);
});

type Extracted = { result: Record<string, unknown>; cacheStatus?: string };

function extractCall(
  id: string,
  instruction: string,
  init: { key?: string; headers?: Record<string, string> } = {},
  options = {},
) {
  return svc.op(
    id,
    "extract",
    { instruction, options: { model, ...options } },
    {
      ...init,
      headers: { ...WITH_MODEL_KEY, ...init.headers },
    },
  );
}

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(`<!doctype html><html lang="en"><head><title>Shop</title></head><body>${body}</body></html>`);
}

describe("extract", () => {
  it("answers MISS, then HIT without a model call, in the result and the header", async () => {
    const id = shared;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    fx.model.on(match.schemaName("extract"), { extraction: "three fruits" });

    const first = await extractCall(id, "how many fruits");
    expect(first.headers.get("x-platform-cache-status")).toBe("MISS");
    // Beside the result, not in it: the result is exactly what was extracted.
    const firstData = await ok<Extracted>(first);
    expect(firstData.result).toEqual({ extraction: "three fruits" });
    expect(firstData.cacheStatus).toBe("MISS");
    expect(fx.model.callCount).toBe(1);

    const second = await extractCall(id, "how many fruits");
    expect(second.headers.get("x-platform-cache-status")).toBe("HIT");
    expect(await ok<Extracted>(second)).toMatchObject({
      result: { extraction: "three fruits" },
      cacheStatus: "HIT",
    });
    expect(fx.model.callCount).toBe(1);

    // The replay shows the hit cost nothing.
    const replay = await ok<{
      pages: { actions: { method: string; tokenUsage?: Record<string, number> }[] }[];
    }>(await svc.call(`/v1/sessions/${id}/replay`));
    const usages = replay.pages
      .flatMap((p) => p.actions)
      .filter((a) => a.method === "extract")
      .map((a) => a.tokenUsage);
    expect(usages[0]).toMatchObject({ inputTokens: 100, outputTokens: 20 });
    expect(usages[1]).toEqual({ inputTokens: 0, outputTokens: 0, timeMs: 0, cost: 0 });
  });

  it("is off for a call with x-platform-cache-bypass or serverCache: false, and for a session started without it", async () => {
    const id = shared;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    fx.model.on(match.schemaName("extract"), { extraction: "lists" });
    await ok(await extractCall(id, "what kind of page"));
    expect(fx.model.callCount).toBe(1);

    const bypassed = await extractCall(id, "what kind of page", {
      headers: { "x-platform-cache-bypass": "true" },
    });
    expect(bypassed.headers.get("x-platform-cache-status")).toBeNull();
    expect((await ok<Extracted>(bypassed)).result).toEqual({ extraction: "lists" });
    const off = await extractCall(id, "what kind of page", {}, { serverCache: false });
    expect((await ok<Extracted>(off)).result).toEqual({ extraction: "lists" });
    expect(fx.model.callCount).toBe(3);

    const without = await svc.start({ serverCache: false });
    sessions.push(without);
    await ok(await svc.op(without, "navigate", { url: fx.site.url("list.html") }));
    const plain = await extractCall(without, "what kind of page");
    expect(plain.headers.get("x-platform-cache-status")).toBeNull();
    expect((await ok<Extracted>(plain)).result).toEqual({ extraction: "lists" });
    expect(fx.model.callCount).toBe(4);
  });

  it("never serves one project's entries to another", async () => {
    const mine = shared;
    const theirs = await session(svc.otherKey.key);
    for (const [id, key] of [
      [mine, svc.key.key],
      [theirs, svc.otherKey.key],
    ] as const) {
      await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }, { key }));
    }
    fx.model.on(match.schemaName("extract"), { extraction: "a secret summary" });
    await ok(await extractCall(mine, "summarise the lists"));
    expect((await ok<Extracted>(await extractCall(mine, "summarise the lists"))).cacheStatus).toBe("HIT");
    expect(fx.model.callCount).toBe(1);

    // The same question on the same page from the other project: computed again, for them.
    const other = await extractCall(theirs, "summarise the lists", { key: svc.otherKey.key });
    expect((await ok<Extracted>(other)).cacheStatus).toBe("MISS");
    expect(fx.model.callCount).toBe(2);
    const again = await extractCall(theirs, "summarise the lists", { key: svc.otherKey.key });
    expect((await ok<Extracted>(again)).cacheStatus).toBe("HIT");
    expect(fx.model.callCount).toBe(2);
  });

  it("keys on the schema and the page URL", async () => {
    const id = shared;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("list.html") }));
    fx.model.on(match.schemaName("extract"), (request) =>
      request.schema?.properties && "n" in (request.schema.properties as object)
        ? { n: 3 }
        : { extraction: "x" },
    );
    const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
    const call = () =>
      svc.op(
        id,
        "extract",
        { instruction: "count", schema, options: { model } },
        { headers: WITH_MODEL_KEY },
      );
    // The caller's schema object is answered as it is, cacheStatus beside it.
    expect(await ok(await call())).toMatchObject({ result: { n: 3 }, cacheStatus: "MISS" });
    const hit = await ok<Extracted>(await call());
    expect(hit.result).toEqual({ n: 3 });
    expect(hit.cacheStatus).toBe("HIT");
    expect((await ok<Extracted>(await extractCall(id, "count"))).cacheStatus).toBe("MISS");
    await ok(await svc.op(id, "navigate", { url: fx.site.url("table.html") }));
    expect(await ok(await call())).toMatchObject({ cacheStatus: "MISS" });
    expect(fx.model.callCount).toBe(3);
  });
});

describe("extract on a page whose content changes under the same URL", () => {
  it("is a MISS with the new content once what it reads changed, a HIT while it did not", async () => {
    let stock = 3;
    let banner = "Spring sale";
    const unroute = fx.site.route("/stock.html", (_req, res) =>
      html(res, `<p id="banner">${banner}</p><p id="stock">In stock: ${stock} apples</p>`),
    );
    try {
      const id = shared;
      // The model answers from the outline it was shown.
      fx.model.on(match.schemaName("extract"), (request) => ({
        extraction: /In stock: (\d+) apples/.exec(request.text)?.[1] ?? "none",
      }));
      const count = async (options = {}) => {
        const data = await ok<Extracted>(await extractCall(id, "how many apples are in stock", {}, options));
        return { ...data.result, cacheStatus: data.cacheStatus };
      };
      const reload = async () => ok(await svc.op(id, "navigate", { url: fx.site.url("stock.html") }));

      await reload();
      expect(await count()).toEqual({ extraction: "3", cacheStatus: "MISS" });
      await reload();
      expect(await count()).toEqual({ extraction: "3", cacheStatus: "HIT" });
      expect(fx.model.callCount).toBe(1);

      stock = 7;
      await reload();
      expect(await count()).toEqual({ extraction: "7", cacheStatus: "MISS" });
      expect(await count()).toEqual({ extraction: "7", cacheStatus: "HIT" });
      expect(fx.model.callCount).toBe(2);

      // With a selector, only the part it reads counts: a change elsewhere is still a HIT.
      expect(await count({ selector: "#stock" })).toEqual({ extraction: "7", cacheStatus: "MISS" });
      banner = "Summer sale";
      await reload();
      expect(await count({ selector: "#stock" })).toEqual({ extraction: "7", cacheStatus: "HIT" });
      expect(await count()).toEqual({ extraction: "7", cacheStatus: "MISS" });
      expect(fx.model.callCount).toBe(4);
    } finally {
      unroute();
    }
  });
});

describe("act", () => {
  it("replays a HIT on the page without the model, with this call's variable values", async () => {
    const id = shared;
    const dh = svc.service.sessions.get(id)!.dh;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Username/),
      method: "fill",
      arguments: ["%user%"],
      description: "type the user name",
      completed: true,
    }));
    const act = (user: string) =>
      svc.op(
        id,
        "act",
        { input: "type the user name", options: { model, variables: { user } } },
        { headers: WITH_MODEL_KEY },
      );
    const miss = await act("alice");
    expect(miss.headers.get("x-platform-cache-status")).toBe("MISS");
    expect(await dh.page.locator("#username").inputValue()).toBe("alice");
    expect(fx.model.callCount).toBe(1);

    await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
    const hit = await act("bob");
    expect(hit.headers.get("x-platform-cache-status")).toBe("HIT");
    const { result } = await ok<{ result: Record<string, unknown> }>(hit);
    expect(result).toMatchObject({
      success: true,
      cacheStatus: "HIT",
      actionDescription: "type the user name",
      actions: [{ method: "fill", arguments: ["%user%"], description: "type the user name" }],
    });
    // Really typed, with this call's value, and no model call.
    expect(await dh.page.locator("#username").inputValue()).toBe("bob");
    expect(fx.model.callCount).toBe(1);
  });

  it("answers MISS and asks the model when the cached element is no longer what it was", async () => {
    let version = 1;
    const clicks: string[] = [];
    const unroute = fx.site.route("/shop.html", (_req, res) =>
      html(
        res,
        version === 1
          ? `<button onclick="fetch('/clicked?add')">Add to cart</button>`
          : `<button onclick="fetch('/clicked?delete')">Delete account</button><button onclick="fetch('/clicked?add')">Add to cart</button>`,
      ),
    );
    const unrouteClicks = fx.site.route("/clicked", (req, res) => {
      clicks.push(new URL(req.url!, "http://x").search.slice(1));
      res.writeHead(204).end();
    });
    try {
      const id = shared;
      fx.model.on(match.schemaName("act"), (request) => ({
        elementId: idOf(request.text, /button: Add to cart/),
        method: "click",
        arguments: [],
        description: "click Add to cart",
        completed: true,
      }));
      const act = () =>
        svc.op(id, "act", { input: "add it to the cart", options: { model } }, { headers: WITH_MODEL_KEY });

      await ok(await svc.op(id, "navigate", { url: fx.site.url("shop.html") }));
      expect((await act()).headers.get("x-platform-cache-status")).toBe("MISS");
      await ok(await svc.op(id, "navigate", { url: fx.site.url("shop.html") }));
      expect((await act()).headers.get("x-platform-cache-status")).toBe("HIT");
      expect(fx.model.callCount).toBe(1);

      // Same URL, but the cached XPath now leads to another button.
      version = 2;
      await ok(await svc.op(id, "navigate", { url: fx.site.url("shop.html") }));
      const changed = await act();
      expect(changed.headers.get("x-platform-cache-status")).toBe("MISS");
      expect((await ok<{ result: { success: boolean } }>(changed)).result.success).toBe(true);
      expect(fx.model.callCount).toBe(2);
      // Each act clicked once; the page reports its click with a request of its own, which may
      // arrive after the act's answer: wait for the three, then check which buttons they were.
      await eventually(() => clicks.length >= 3, 5000, "the page's three click reports");
      expect(clicks).toEqual(["add", "add", "add"]);
    } finally {
      unroute();
      unrouteClicks();
    }
  });
});

describe("observe", () => {
  it("answers a HIT while the cached elements are on the page, and asks again when they are gone", async () => {
    let withButton = true;
    const unroute = fx.site.route("/panel.html", (_req, res) =>
      html(res, withButton ? `<button id="go">Go</button>` : `<p>Nothing to press</p><a href="/">Home</a>`),
    );
    try {
      const id = shared;
      await ok(await svc.op(id, "navigate", { url: fx.site.url("panel.html") }));
      fx.model.on(match.schemaName("observe"), (request) => {
        const button = /\[(\d+)\] button: Go/.exec(request.text);
        const link = /\[(\d+)\] link: Home/.exec(request.text);
        return { elements: [{ elementId: Number((button ?? link)![1]), description: "the thing to press" }] };
      });
      const observe = () =>
        svc.op(
          id,
          "observe",
          { instruction: "what can I press", options: { model } },
          { headers: WITH_MODEL_KEY },
        );
      expect((await observe()).headers.get("x-platform-cache-status")).toBe("MISS");
      const hit = await observe();
      expect(hit.headers.get("x-platform-cache-status")).toBe("HIT");
      expect((await ok<{ result: { description: string }[] }>(hit)).result[0]!.description).toBe(
        "the thing to press",
      );
      expect(fx.model.callCount).toBe(1);

      withButton = false;
      await ok(await svc.op(id, "navigate", { url: fx.site.url("panel.html") }));
      expect((await observe()).headers.get("x-platform-cache-status")).toBe("MISS");
      expect(fx.model.callCount).toBe(2);
    } finally {
      unroute();
    }
  });
});
