// The action cache: a successful act is stored under instruction + URL + variable names and
// replayed without the model once its element is checked; a stale entry falls back to the model
// and is refreshed; entries outlive the instance.
//
// LOCAL: `cacheDir`, one file per entry (a corrupt one is ignored with a warning). REMOTE: the
// server cache (`cacheDir` means nothing there: the service keeps entries in its store, per
// project), which says HIT or MISS in the result's `cacheStatus`.

import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ActionCacheStore,
  type ActResult,
  type CacheEntry,
  Deckhand,
  type LogLine,
  ServiceEnvironmentError,
} from "deckhand";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  anotherDeckhand,
  idOf,
  MODES,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  step,
  textOf,
} from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  /** LOCAL: the cache directory. */
  let cacheDir: string;
  /**
   * REMOTE: the key of the project whose cache the tests use, one for the file: a project of its
   * own per test would launch a browser per test. The cache keys entries by URL, so each test opens
   * its pages at URLs of its own (`unique`) and finds nothing stored for them.
   */
  let projectKey: string;
  /** The running test's number, in its pages' URLs. */
  let testNo = 0;
  /** `path` (of the fixture site) at a URL no other test opens. */
  const unique = (path: string) => `${path}${path.includes("?") ? "&" : "?"}test=${testNo}`;
  /** The instance under test, with the cache on, and nothing cached when the test starts. */
  let dh: Deckhand;
  const warnings: LogLine[] = [];

  /** An instance that shares the cache of the one under test (the same cacheDir, or project). */
  function cachingDeckhand(): Promise<Deckhand> {
    const logger = (line: LogLine) => line.level === 0 && warnings.push(line);
    return mode === "LOCAL"
      ? anotherDeckhand(fx, { cacheDir, logger })
      : anotherDeckhand(fx, { apiKey: projectKey, serverCache: true, logger });
  }

  /** Whether an act was served from the cache: LOCAL says so in its message, REMOTE in cacheStatus. */
  function servedFromCache(result: ActResult): boolean {
    return mode === "LOCAL" ? result.message.includes("action cache") : result.cacheStatus === "HIT";
  }

  beforeAll(async () => {
    fx = await opsFixture(mode);
    if (mode === "LOCAL") cacheDir = await mkdtemp(join(tmpdir(), "deckhand-cache-"));
    else projectKey = await fx.service!.createKey();
  });
  afterAll(async () => {
    await fx?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    // Entries live on disk only, so emptying the directory is enough; the project's are for others' URLs.
    testNo++;
    if (mode === "LOCAL") for (const file of await readdir(cacheDir)) await rm(join(cacheDir, file));
    warnings.length = 0;
    dh = await cachingDeckhand();
  });
  afterEach(async () => {
    await dh?.close();
    fx.model.clear();
  });

  /** LOCAL: the entries in the cache directory. */
  async function entries(): Promise<
    { file: string; entry: { steps: { selector: string; arguments: string[] }[] } }[]
  > {
    const files = (await readdir(cacheDir)).filter((f) => f.endsWith(".json"));
    return Promise.all(
      files.map(async (file) => ({ file, entry: JSON.parse(await readFile(join(cacheDir, file), "utf8")) })),
    );
  }

  /** A page whose markup the test can change between loads (same URL, different page). */
  function routedPage(initial: string): { url: string; set(body: string): void } {
    let body = initial;
    const path = `/cache-${Math.random().toString(36).slice(2)}.html`;
    fx.site.route(path, (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(`<!doctype html><html lang="en"><head><title>Cache</title></head><body>${body}
      <p id="result"></p>
      <script>for (const b of document.querySelectorAll("button")) b.addEventListener("click", () => {
        document.getElementById("result").textContent += b.textContent + ";";
      });</script></body></html>`);
    });
    return { url: fx.site.url(path), set: (next) => (body = next) };
  }

  const clickIncrement = () =>
    onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }));

  it("stores a successful act and replays an identical one without the model", async () => {
    const page = await open(fx, unique("index.html"), dh);
    clickIncrement();
    const calls = fx.model.callCount;
    const first = await dh.act("click increment");
    expect(first.success).toBe(true);
    expect(servedFromCache(first)).toBe(false);
    expect(fx.model.callCount).toBe(calls + 1);
    if (mode === "LOCAL") expect(await entries()).toHaveLength(1);
    else expect(first.cacheStatus).toBe("MISS");

    const replayed = await dh.act("click increment");
    expect(replayed.success).toBe(true);
    expect(servedFromCache(replayed)).toBe(true);
    expect(replayed.actions?.[0]?.selector).toBe("/html[1]/body[1]/button[1]");
    expect(fx.model.callCount).toBe(calls + 1);
    expect(await textOf(page, "#count")).toBe("2");
  });

  it("keys entries by instruction and URL", async () => {
    await open(fx, unique("index.html"), dh);
    clickIncrement();
    await dh.act("click increment");
    const calls = fx.model.callCount;
    await dh.act("press the increment button");
    await open(fx, unique("index.html?second"), dh);
    await dh.act("click increment");
    expect(fx.model.callCount).toBe(calls + 2);
    if (mode === "LOCAL") expect(await entries()).toHaveLength(3);
  });

  it("keys entries by variable names, not values: another value replays the entry", async () => {
    const page = await open(fx, unique("form.html"), dh);
    onAct(fx.model, (request) =>
      step({ elementId: idOf(request, "textbox: Username"), method: "fill", arguments: ["%user%"] }),
    );
    await dh.act("enter %user% as the user name", { variables: { user: "first-value-3321" } });
    const calls = fx.model.callCount;
    await dh.act("enter %user% as the user name", { variables: { user: "second-value-9917" } });
    expect(fx.model.callCount).toBe(calls);
    expect(await page.locator("#username").inputValue()).toBe("second-value-9917");
    // Other names are another entry.
    onAct(fx.model, (request) =>
      step({ elementId: idOf(request, "textbox: Username"), method: "fill", arguments: ["%login%"] }),
    );
    await dh.act("enter %user% as the user name", { variables: { login: "third-value-1200" } });
    expect(fx.model.callCount).toBe(calls + 1);
    // Nothing stored holds a value: no entry file, nothing the service wrote to disk.
    const stored = mode === "LOCAL" ? JSON.stringify(await entries()) : await fx.service!.storedText();
    expect(stored).toContain("%user%");
    expect(stored).not.toMatch(/first-value|second-value|third-value/);
  });

  it("does not store an act that failed", async () => {
    await open(fx, unique("index.html"), dh);
    onAct(fx.model, () => step({ elementId: -1, method: "click", description: "no such thing" }));
    expect((await dh.act("click the checkout button")).success).toBe(false);
    if (mode === "LOCAL") expect(await entries()).toHaveLength(0);
    // Asked again, the model is asked again.
    const calls = fx.model.callCount;
    const again = await dh.act("click the checkout button");
    expect(servedFromCache(again)).toBe(false);
    expect(fx.model.callCount).toBe(calls + 1);
  });

  it("falls back to the model when the stored element is no longer what it was, and refreshes the entry", async () => {
    const site = routedPage(`<button>Add one</button>`);
    const page = await open(fx, site.url, dh);
    onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Add one"), method: "click" }));
    await dh.act("press the add button");
    if (mode === "LOCAL")
      expect((await entries())[0]!.entry.steps[0]!.selector).toBe("/html[1]/body[1]/button[1]");

    // The stored XPath now leads to another button.
    site.set(`<button>Delete all</button><button>Add one</button>`);
    await open(fx, site.url, dh);
    const calls = fx.model.callCount;
    const fresh = await dh.act("press the add button");
    expect(fresh.success).toBe(true);
    expect(servedFromCache(fresh)).toBe(false);
    expect(fx.model.callCount).toBe(calls + 1);
    expect(await textOf(page, "#result")).toBe("Add one;");
    if (mode === "LOCAL") {
      const [refreshed] = await entries();
      expect(refreshed!.entry.steps[0]!.selector).toBe("/html[1]/body[1]/button[2]");
    }

    // And the refreshed entry replays.
    await open(fx, site.url, dh);
    const replayed = await dh.act("press the add button");
    expect(servedFromCache(replayed)).toBe(true);
    expect(replayed.actions?.[0]?.selector).toBe("/html[1]/body[1]/button[2]");
    expect(fx.model.callCount).toBe(calls + 1);
    expect(await textOf(page, "#result")).toBe("Add one;");
  });

  it("stores the selector self-heal found", async () => {
    const site = routedPage(`<div id="panel"></div><button id="go">Go</button>`);
    const page = await open(fx, site.url, dh);
    let moved = false;
    onAct(fx.model, async (request) => {
      const answer = step({ elementId: idOf(request, "button: Go"), method: "click" });
      if (!moved) {
        moved = true;
        // After the model answered, the page re-renders the button inside the panel.
        await page.evaluate(() => {
          const old = document.getElementById("go")!;
          const fresh = old.cloneNode(true);
          fresh.addEventListener("click", () => {
            document.getElementById("result")!.textContent += "moved Go;";
          });
          old.remove();
          document.getElementById("panel")!.append(fresh);
        });
      }
      return answer;
    });
    const result = await dh.act("click go");
    expect(result.message).toContain("Self-healed");
    if (mode === "LOCAL") {
      const [stored] = await entries();
      expect(stored!.entry.steps[0]!.selector).toBe("/html[1]/body[1]/div[1]/button[1]");
    }
    // The same act on the page as it is now is served from the entry: the moved button.
    const calls = fx.model.callCount;
    const replayed = await dh.act("click go");
    expect(servedFromCache(replayed)).toBe(true);
    expect(replayed.actions?.[0]?.selector).toBe("/html[1]/body[1]/div[1]/button[1]");
    expect(fx.model.callCount).toBe(calls);
    expect(await textOf(page, "#result")).toBe("moved Go;moved Go;");
  });

  it("keeps entries across instances: a new Deckhand on the same cache replays without the model", async () => {
    const first = await cachingDeckhand();
    try {
      await open(fx, unique("index.html"), first);
      clickIncrement();
      await first.act("click increment");
    } finally {
      await first.close();
    }

    const second = await cachingDeckhand();
    try {
      const page = await open(fx, unique("index.html"), second);
      const calls = fx.model.callCount;
      const replayed = await second.act("click increment");
      expect(replayed.success).toBe(true);
      expect(servedFromCache(replayed)).toBe(true);
      expect(fx.model.callCount).toBe(calls);
      expect(await textOf(page, "#count")).toBe("1");
    } finally {
      await second.close();
    }
  });

  it.runIf(mode === "REMOTE")("never serves one project's entries to another", async () => {
    await open(fx, unique("index.html"), dh);
    clickIncrement();
    await dh.act("click increment");
    const stranger = await anotherDeckhand(fx, { apiKey: fx.service!.otherApiKey, serverCache: true });
    try {
      const page = await open(fx, unique("index.html"), stranger);
      const calls = fx.model.callCount;
      const result = await stranger.act("click increment");
      expect(result.cacheStatus).toBe("MISS");
      expect(fx.model.callCount).toBe(calls + 1);
      expect(await textOf(page, "#count")).toBe("1");
    } finally {
      await stranger.close();
    }
  });

  // LOCAL only: the server cache lives in the service's store, not in files a client could corrupt
  // (the service's own tests cover a store that fails).
  describe.skipIf(mode === "REMOTE")("a corrupt entry", () => {
    it.each([
      ["that is not JSON", () => "{not json"],
      ["of an unknown version", (e: Record<string, unknown>) => JSON.stringify({ ...e, version: 99 })],
      [
        "with a step of an unknown method",
        (e: Record<string, unknown>) =>
          JSON.stringify({ ...e, steps: [{ ...(e.steps as object[])[0], method: "teleport" }] }),
      ],
      [
        "with a step that has no arguments or selector",
        (e: Record<string, unknown>) => JSON.stringify({ ...e, steps: [{ method: "click" }] }),
      ],
    ])("%s is ignored with a warning, and the model is asked", async (_, corrupt) => {
      const page = await open(fx, "index.html", dh);
      clickIncrement();
      await dh.act("click increment");
      const [stored] = await entries();
      await writeFile(
        join(cacheDir, stored!.file),
        corrupt(stored!.entry as unknown as Record<string, unknown>),
      );

      const calls = fx.model.callCount;
      expect((await dh.act("click increment")).success).toBe(true);
      expect(fx.model.callCount).toBe(calls + 1);
      expect(await textOf(page, "#count")).toBe("2");
      expect(warnings.map((w) => w.category)).toContain("cache");
      // The entry is rewritten from the fresh answer.
      expect((await entries())[0]!.entry.steps[0]!.selector).toBe("/html[1]/body[1]/button[1]");
    });
  });
  // LOCAL only: `actionCache` puts the entries in a store of the caller's (REMOTE refuses it: the
  // service keeps its own, per project).
  describe.skipIf(mode === "REMOTE")("a store of the caller's (actionCache)", () => {
    /** A store in memory that counts what it is asked, and can be made to fail. */
    function memoryStore() {
      const entries = new Map<string, unknown>();
      const store = {
        entries,
        gets: 0,
        puts: 0,
        failing: false,
        label: "the test's memory store",
        async get(key: string) {
          store.gets++;
          if (store.failing) throw new Error("the store is down");
          return entries.get(key);
        },
        async put(key: string, entry: CacheEntry) {
          store.puts++;
          if (store.failing) throw new Error("the store is down");
          entries.set(key, structuredClone(entry));
        },
      } satisfies ActionCacheStore & Record<string, unknown>;
      return store;
    }

    it("keeps the entries, and an identical act is replayed from it without the model", async () => {
      const store = memoryStore();
      const own = await anotherDeckhand(fx, { actionCache: store });
      try {
        const page = await open(fx, "index.html", own);
        clickIncrement();
        const calls = fx.model.callCount;
        expect((await own.act("click increment")).success).toBe(true);
        expect(store.entries.size).toBe(1);
        const [entry] = [...store.entries.values()] as CacheEntry[];
        expect(entry!.steps[0]).toMatchObject({ selector: "/html[1]/body[1]/button[1]", method: "click" });
        expect(entry!.url).toBe(fx.site.url("index.html"));

        const replayed = await own.act("click increment");
        expect(replayed.success).toBe(true);
        expect(replayed.message).toContain("action cache");
        expect(fx.model.callCount).toBe(calls + 1);
        expect(await textOf(page, "#count")).toBe("2");
        // Nothing went to the directory cache of the other instance.
        expect(await entries()).toHaveLength(0);
      } finally {
        await own.close();
      }
    });

    it("that fails is a warning naming the store: the model is asked and the act succeeds", async () => {
      const store = memoryStore();
      store.failing = true;
      const seen: LogLine[] = [];
      const own = await anotherDeckhand(fx, {
        actionCache: store,
        logger: (line) => line.level === 0 && seen.push(line),
      });
      try {
        const page = await open(fx, "index.html", own);
        clickIncrement();
        expect((await own.act("click increment")).success).toBe(true);
        expect(await textOf(page, "#count")).toBe("1");
        expect(store.gets).toBe(1);
        expect(store.puts).toBe(1);
        const messages = seen.filter((w) => w.category === "cache").map((w) => w.message);
        expect(messages.some((m) => m.includes("the store is down") && m.includes("memory store"))).toBe(
          true,
        );
      } finally {
        await own.close();
      }
    });

    it("whose entry is not an entry is ignored with a warning, and the model is asked", async () => {
      const store = memoryStore();
      const own = await anotherDeckhand(fx, {
        actionCache: store,
        logger: (l) => l.level === 0 && warnings.push(l),
      });
      try {
        await open(fx, "index.html", own);
        clickIncrement();
        await own.act("click increment");
        const [key] = [...store.entries.keys()];
        store.entries.set(key!, { something: "else" });
        const calls = fx.model.callCount;
        expect((await own.act("click increment")).success).toBe(true);
        expect(fx.model.callCount).toBe(calls + 1);
        expect(warnings.map((w) => w.message).join("\n")).toMatch(/ignoring the unreadable cache entry/);
        expect((store.entries.get(key!) as CacheEntry).version).toBe(1);
      } finally {
        await own.close();
      }
    });

    it("is refused with cacheDir as well, and with anything that is not a store", () => {
      expect(() => new Deckhand({ env: "LOCAL", cacheDir, actionCache: memoryStore() })).toThrow(
        ServiceEnvironmentError,
      );
      expect(() => new Deckhand({ env: "LOCAL", cacheDir, actionCache: memoryStore() })).toThrow(
        /actionCache.*cacheDir/s,
      );
      expect(() => new Deckhand({ env: "LOCAL", actionCache: { get() {} } as never })).toThrow(
        /actionCache.*get\(key\) and put\(key, entry\)/s,
      );
      expect(() => new Deckhand({ env: "REMOTE", apiKey: "dh-test", actionCache: memoryStore() })).toThrow(
        /actionCache.*REMOTE/s,
      );
    });
  });
});
