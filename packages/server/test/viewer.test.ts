// The session page at sessionUrl, opened in real Chromium (playwright-core) with no header: the
// timeline of a session that did navigate + act + extract + observe, in order, with tokens; its
// screenshots load; the live view shows frames while the session runs; nothing from the page or
// the caller runs as script; it works after the session ended and after a restart; a link of
// another session, an expired or tampered one, shows nothing.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { match } from "@deckhand/testkit";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite-store.ts";
import { LINK_SECRET_NAME, LinkSigner } from "../src/viewer/links.ts";
import {
  type Fixtures,
  idOf,
  type LiveService,
  ok,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

const XSS_SCRIPT = "<script>window.__pwned = 'script'</script>";
const XSS_ONERROR = `<img src=x onerror="window.__pwned = 'onerror'">`;

let dir: string;
let store: SqliteStore;
let svc: LiveService;
let fx: Fixtures;
let viewer: Browser;

interface Started {
  sessionId: string;
  sessionUrl: string;
  debugUrl: string;
  cdpUrl: string;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "deckhand-viewer-"));
  store = new SqliteStore(dir);
  [svc, fx, viewer] = await Promise.all([
    startLiveService({ store }),
    startFixtures(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] }),
  ]);
  fx.site.route("/xss-title.html", (_req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(
      `<!doctype html><title>${XSS_SCRIPT}${XSS_ONERROR}</title><h1>Title attack</h1><button>Go</button>`,
    );
  });
});
afterAll(async () => {
  await viewer?.close();
  await svc?.close();
  await fx?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<Started> {
  return ok<Started>(await svc.call("/v1/sessions/start", { json: { serverCache: false } }));
}

/** A fresh page of the viewing browser that remembers every script that ran and every dialog. */
async function openInBrowser(url: string): Promise<{ page: Page; status: number | undefined }> {
  const context = await viewer.newContext();
  const page = await context.newPage();
  page.on("dialog", (dialog) => {
    throw new Error(`a dialog opened: ${dialog.message()}`);
  });
  const response = await page.goto(url, { waitUntil: "domcontentloaded" });
  return { page, status: response?.status() };
}

async function doFourSteps(id: string): Promise<void> {
  const model = scriptedModelConfig(fx.model);
  await ok(await svc.op(id, "navigate", { url: fx.site.url("form.html") }));
  fx.model.on(match.schemaName("act"), (request) => ({
    elementId: idOf(request.text, /textbox: Username/),
    method: "fill",
    arguments: ["%user%"],
    description: "type the user name",
    completed: true,
  }));
  await ok(
    await svc.op(
      id,
      "act",
      {
        input: "type %user% into the user name",
        options: { model, variables: { user: "viewer-secret-value" } },
      },
      { headers: WITH_MODEL_KEY },
    ),
  );
  fx.model.on(match.schemaName("extract"), { extraction: "a sign-in form" });
  await ok(
    await svc.op(
      id,
      "extract",
      { instruction: "what is this page", options: { model } },
      { headers: WITH_MODEL_KEY },
    ),
  );
  fx.model.on(match.schemaName("observe"), (request) => ({
    elements: [
      {
        elementId: idOf(request.text, /button: Sign in/),
        description: "the sign-in button",
        method: "click",
        arguments: [],
      },
    ],
  }));
  await ok(
    await svc.op(
      id,
      "observe",
      { instruction: "find the sign-in button", options: { model } },
      { headers: WITH_MODEL_KEY },
    ),
  );
}

describe("the session page", () => {
  let session: Started;

  beforeAll(async () => {
    session = await start();
    await doFourSteps(session.sessionId);
  });

  it("shows navigate, act, extract and observe in order, with their tokens, and variable values redacted", async () => {
    const { page, status } = await openInBrowser(session.sessionUrl);
    expect(status).toBe(200);
    const steps = page.locator("li.step");
    expect(await steps.count()).toBe(4);
    expect(await page.locator("li.step .method").allTextContents()).toEqual([
      "navigate",
      "act",
      "extract",
      "observe",
    ]);
    expect(await page.locator("li.step .instruction").allTextContents()).toEqual([
      fx.site.url("form.html"),
      "type %user% into the user name",
      "what is this page",
      "find the sign-in button",
    ]);
    // The model's usage as the scripted model reported it, on each model step, and in the totals.
    const replay = await svc.store.listActions(session.sessionId);
    for (const [i, action] of replay.entries()) {
      const meta = await steps.nth(i).locator(".meta").textContent();
      if (action.tokenUsage?.inputTokens !== undefined) {
        expect(meta).toContain(
          `tokens ${action.tokenUsage.inputTokens} in / ${action.tokenUsage.outputTokens ?? 0} out`,
        );
      } else expect(meta).not.toContain("tokens");
    }
    expect(replay.slice(1).every((a) => (a.tokenUsage?.inputTokens ?? 0) > 0)).toBe(true);
    const total = replay.reduce((sum, a) => sum + (a.tokenUsage?.inputTokens ?? 0), 0);
    expect(await page.locator(".totals").textContent()).toContain(
      `${total.toLocaleString("en-US")} input tokens`,
    );
    expect(await page.content()).not.toContain("viewer-secret-value");
    await page.context().close();
  });

  it("links the run as a Playwright test and a Deckhand script, which download with the page's token", async () => {
    const { page } = await openInBrowser(session.sessionUrl);
    const links = page.locator(".downloads a");
    expect(await links.allTextContents()).toEqual(["a Playwright test", "a Deckhand script"]);
    const href = await links.first().getAttribute("href");
    await page.context().close();
    const response = await fetch(new URL(href!, svc.url));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-disposition")).toContain('filename="recorded.spec.ts"');
    const spec = await response.text();
    // The same script the API answers, for the session's key.
    const api = await svc.call(`/v1/sessions/${session.sessionId}/script?format=playwright-test`);
    expect(await api.text()).toBe(spec);
    expect(spec).toContain(`await page.goto(${JSON.stringify(fx.site.url("form.html"))});`);
    expect(spec).toContain('variable("USER")');
    expect(spec).not.toContain("viewer-secret-value");
    // Without the token: nothing.
    const bare = new URL(href!, svc.url);
    bare.searchParams.delete("token");
    expect((await fetch(bare)).status).toBe(404);
  });

  it("shows each step's screenshot, which loads, enlarged on click", async () => {
    const { page } = await openInBrowser(session.sessionUrl);
    const after = page.locator("li.step figure img[alt^='Viewport after']");
    expect(await after.count()).toBe(4);
    expect(await page.locator("li.step figure img[alt^='Viewport before']").count()).toBe(1); // the act's
    for (let i = 0; i < 4; i++) {
      const img = after.nth(i);
      await img.scrollIntoViewIfNeeded();
      await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle());
      expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
      // The whole picture, not cropped at the sides: the box has the picture's own proportions.
      const shape = await img.evaluate((el) => {
        const image = el as HTMLImageElement;
        const box = image.getBoundingClientRect();
        const border = 2;
        return {
          box: (box.height - border) / (box.width - border),
          picture: image.naturalHeight / image.naturalWidth,
          fit: getComputedStyle(image).objectFit,
        };
      });
      expect(shape.fit).toBe("contain");
      expect(Math.abs(shape.box - shape.picture)).toBeLessThan(0.02);
    }
    const first = after.first();
    const small = await first.boundingBox();
    await first.click();
    const big = await first.boundingBox();
    expect(big!.width).toBeGreaterThan(small!.width * 2);
    await page.context().close();
  });

  it("shows the live page while the session runs", async () => {
    const { page } = await openInBrowser(session.sessionUrl);
    const live = page.locator("img#live-view");
    await page.waitForFunction(
      () => ((document.querySelector("#live-view") as HTMLImageElement | null)?.naturalWidth ?? 0) > 0,
      null,
      // The first frame of the screencast: a bound only a stall reaches (a busy-loop run of the
      // suite took more than 10 s for it; the file's test timeout is 90 s).
      { timeout: 60_000 },
    );
    expect(await live.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
    // No empty band below the picture: the box has the frame's proportions.
    const shape = await live.evaluate((el) => {
      const image = el as HTMLImageElement;
      const box = image.getBoundingClientRect();
      return { box: (box.height - 2) / (box.width - 2), picture: image.naturalHeight / image.naturalWidth };
    });
    expect(Math.abs(shape.box - shape.picture)).toBeLessThan(0.02);
    await page.context().close();
  });

  it("shows the steps done since, on reload of a live session's page", async () => {
    const live = await start();
    await ok(await svc.op(live.sessionId, "navigate", { url: fx.site.url("form.html") }));
    const { page } = await openInBrowser(live.sessionUrl);
    // The page holds the live view's stream open while it is reloaded.
    expect(await page.locator("img#live-view").count()).toBe(1);
    expect(await page.locator("li.step").count()).toBe(1);
    await ok(await svc.op(live.sessionId, "navigate", { url: fx.site.url("index.html") }));
    await page.reload({ waitUntil: "domcontentloaded" });
    expect(await page.locator("li.step .instruction").allTextContents()).toEqual([
      fx.site.url("form.html"),
      fx.site.url("index.html"),
    ]);
    await page.context().close();
    await ok(await svc.op(live.sessionId, "end"));
  });

  it("a link of another session, a tampered or an expired one, shows nothing of any session", async () => {
    const other = await start();
    const token = new URL(session.sessionUrl).searchParams.get("token")!;
    const otherUrl = new URL(other.sessionUrl);
    otherUrl.searchParams.set("token", token);
    const tampered = new URL(session.sessionUrl);
    tampered.searchParams.set("token", `${token.slice(0, -3)}AAA`);
    const expired = new URL(session.sessionUrl);
    expired.searchParams.set(
      "token",
      new LinkSigner(await svc.store.serviceSecret(LINK_SECRET_NAME)).sign(
        { sessionId: session.sessionId, keyId: svc.key.id, purpose: "page", ttlMs: 1000 },
        Date.now() - 5000,
      ),
    );
    const bare = new URL(session.sessionUrl);
    bare.search = "";
    const seq = (await svc.store.listActions(session.sessionId))[0]!.seq;
    const shotOfOther = `${svc.url}/v1/sessions/${other.sessionId}/view/screenshots/${seq}-after.jpg?token=${token}`;
    const debugToken = new URL(session.debugUrl).searchParams.get("token")!;
    const withDebugToken = new URL(session.sessionUrl);
    withDebugToken.searchParams.set("token", debugToken);
    for (const url of [otherUrl, tampered, expired, bare, shotOfOther, withDebugToken].map(String)) {
      const response = await fetch(url);
      const text = await response.text();
      expect(response.status, url).toBe(404);
      expect(text).not.toContain(session.sessionId);
      expect(text).not.toContain("form.html");
    }
    await svc.op(other.sessionId, "end");
  });

  it("works after the session ended (no live view) and after a restart", async () => {
    const ended = await start();
    await ok(await svc.op(ended.sessionId, "navigate", { url: fx.site.url("form.html") }));
    await ok(await svc.op(ended.sessionId, "end"));
    const { page } = await openInBrowser(ended.sessionUrl);
    expect(await page.locator("li.step").count()).toBe(1);
    expect(await page.locator("img#live-view").count()).toBe(0);
    expect(await page.locator(".status").textContent()).toBe("ended");
    await page.context().close();

    // A new service on the same data directory: same links, same steps, same screenshots.
    const again = await startLiveService({
      store: new SqliteStore(dir),
      keys: { key: svc.key, otherKey: svc.otherKey },
    });
    try {
      const link = ended.sessionUrl.replace(svc.url, again.url);
      const reopened = await openInBrowser(link);
      expect(reopened.status).toBe(200);
      const img = reopened.page.locator("img[alt^='Viewport after']").first();
      await reopened.page.waitForFunction(
        (el) => (el as HTMLImageElement).complete,
        await img.elementHandle(),
      );
      expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
      await reopened.page.context().close();
    } finally {
      await again.close();
      await again.store.close();
    }
  });
});

/** Mean absolute difference per channel (0-255) of two JPEGs of one size, decoded by Chromium. */
async function imageDifference(a: Buffer, b: Buffer): Promise<number> {
  const context = await viewer.newContext();
  const page = await context.newPage();
  try {
    return await page.evaluate(
      async ([first, second]) => {
        const pixels = async (src: string) => {
          const image = new Image();
          image.src = src;
          await image.decode();
          const canvas = new OffscreenCanvas(image.naturalWidth, image.naturalHeight);
          const g = canvas.getContext("2d")!;
          g.drawImage(image, 0, 0);
          return g.getImageData(0, 0, canvas.width, canvas.height).data;
        };
        const [x, y] = await Promise.all([pixels(first!), pixels(second!)]);
        if (x.length !== y.length) return 255;
        let sum = 0;
        for (let i = 0; i < x.length; i++) sum += Math.abs(x[i]! - y[i]!);
        return sum / x.length;
      },
      [a, b].map((jpeg) => `data:image/jpeg;base64,${jpeg.toString("base64")}`),
    );
  } finally {
    await context.close();
  }
}

describe("variable values in screenshots", () => {
  it("are hidden in the field they were typed into and in the page's text, then shown again", async () => {
    fx.site.route("/echo.html", (_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        `<!doctype html><title>Echo</title><label>Name <input id="name"></label><p id="hello"></p>` +
          `<script>const field = document.getElementById("name"); field.oninput = () => { ` +
          `document.getElementById("hello").textContent = "Hello " + field.value + "!"; };</script>`,
      );
    });
    const secret = "WWMMWWMMWWMMWWMM";
    const session = await start();
    const id = session.sessionId;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("echo.html") }));
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Name/),
      method: "fill",
      arguments: ["%name%"],
      description: "type the name",
      completed: true,
    }));
    await ok(
      await svc.op(
        id,
        "act",
        {
          input: "type %name% into the name",
          options: { model: scriptedModelConfig(fx.model), variables: { name: secret } },
        },
        { headers: WITH_MODEL_KEY },
      ),
    );
    const live = svc.service.sessions.get(id)!;
    const page = live.dh.context.activePage()!;
    expect(await page.evaluate(() => (document.querySelector("#hello") as HTMLElement).textContent)).toBe(
      `Hello ${secret}!`,
    );
    await svc.op(id, "observe", {}); // a step without variables: the value is still on the page
    await live.run(new AbortController().signal, async () => undefined); // its screenshot is taken

    const actions = await svc.store.listActions(id);
    const shots = (await import("../src/viewer/step-screenshots.ts")).StepScreenshots;
    const capture = new shots(svc.store, svc.service.app.log);
    const masked = (await capture.capture(page, [secret]))!;
    const plain = (await capture.capture(page, []))!;
    expect(await imageDifference(masked, plain)).toBeGreaterThan(0.05); // the mask shows
    for (const action of actions.slice(1)) {
      const stored = (await svc.store.getScreenshot(id, action.seq, "after"))!;
      expect(await imageDifference(stored, masked)).toBeLessThan(await imageDifference(stored, plain));
    }
    // Shown again: the page is as it was.
    expect(
      await page.evaluate(() => (document.querySelector("#name") as HTMLInputElement).style.cssText),
    ).toBe("");
    expect(await page.locator("#name").inputValue()).toBe(secret);
    await svc.op(id, "end");
  });
});

describe("variable values in an iframe's fields", () => {
  it("are hidden in screenshots too, in an iframe of another site (out of process)", async () => {
    const secret = "QQXXQQXXQQXXQQXX";
    fx.site.route("/secret-frame.html", (_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        `<!doctype html><title>Frame</title><label>Card <input id="card" size="30" ` +
          `style="font:32px monospace" value="${secret}"></label>`,
      );
    });
    fx.site.route("/framed.html", (_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        `<!doctype html><title>Framed</title><h1>Checkout</h1>` +
          `<iframe src="${fx.site.crossUrl("secret-frame.html")}" width="700" height="200"></iframe>`,
      );
    });
    const session = await start();
    const id = session.sessionId;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("framed.html") }));
    const live = svc.service.sessions.get(id)!;
    const page = live.dh.context.activePage()!;
    const frame = page.frames().find((f) => f.url.includes("secret-frame.html"))!;
    expect(await frame.evaluate(() => (document.querySelector("#card") as HTMLInputElement).value)).toBe(
      secret,
    );
    const shots = (await import("../src/viewer/step-screenshots.ts")).StepScreenshots;
    const capture = new shots(svc.store, svc.service.app.log);
    const masked = (await capture.capture(page, [secret]))!;
    const plain = (await capture.capture(page, []))!;
    // The value is only in the iframe: a picture with it hidden differs from one without.
    expect(await imageDifference(masked, plain)).toBeGreaterThan(0.05);
    // Shown again afterwards.
    expect(
      await frame.evaluate(() => (document.querySelector("#card") as HTMLInputElement).style.cssText),
    ).toBe("font: 32px monospace;");
    await svc.op(id, "end");
  });
});

describe("what the page shows is never run", () => {
  it("runs no <script> or onerror= from an instruction, a page title or a URL, and shows them as text", async () => {
    const session = await start();
    const id = session.sessionId;
    const model = scriptedModelConfig(fx.model);
    await ok(
      await svc.op(id, "navigate", {
        url: `${fx.site.url("xss-title.html")}?q=${encodeURIComponent(XSS_ONERROR)}`,
      }),
    );
    fx.model.on(match.schemaName("extract"), (request) => ({
      extraction: `the title is ${request.text.includes("Title attack") ? XSS_SCRIPT + XSS_ONERROR : "?"}`,
    }));
    await ok(
      await svc.op(
        id,
        "extract",
        { instruction: `${XSS_SCRIPT} the title ${XSS_ONERROR}`, options: { model } },
        { headers: WITH_MODEL_KEY },
      ),
    );
    fx.model.on(match.schemaName("act"), () => ({
      elementId: 99_999,
      method: "click",
      arguments: [],
      description: XSS_ONERROR,
      completed: true,
    }));
    await svc.op(
      id,
      "act",
      { input: `click ${XSS_SCRIPT}${XSS_ONERROR}`, options: { model } },
      { headers: WITH_MODEL_KEY },
    );
    const title = await svc.service.sessions.get(id)!.dh.context.activePage()!.title();
    expect(title).toContain("<script>");

    const { page } = await openInBrowser(session.sessionUrl);
    // The page has no script of its own: an injected one has run by DOMContentLoaded, an image's
    // onerror once every image but the live view (a stream that never completes) is complete.
    await page.waitForFunction(() =>
      [...document.images].filter((image) => image.id !== "live-view").every((image) => image.complete),
    );
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.locator("script").count()).toBe(0);
    expect(await page.locator("main img:not(figure img):not(#live-view)").count()).toBe(0);
    expect(await page.locator("li.step .instruction").nth(1).textContent()).toBe(
      `${XSS_SCRIPT} the title ${XSS_ONERROR}`,
    );
    expect(await page.locator("body").textContent()).toContain(XSS_ONERROR);
    // The failed act stands out with its error.
    expect(await page.locator("li.step.failed").count()).toBeGreaterThanOrEqual(1);
    const csp = (await fetch(session.sessionUrl)).headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("default-src 'none'");
    await page.context().close();
    await svc.op(id, "end");
  });
});

const databaseUrl = process.env.DECKHAND_TEST_DATABASE_URL;

describe.runIf(databaseUrl)("on PostgreSQL", () => {
  it("keeps the screenshots in the database and serves the page after a restart", async () => {
    const crypto = await import("node:crypto");
    const pg = (await import("pg")).default;
    const { PostgresStore } = await import("../src/store/postgres-store.ts");
    const schema = `viewer_${crypto.randomBytes(6).toString("hex")}`;
    const pgStore = await PostgresStore.open({ url: databaseUrl!, schema });
    const first = await startLiveService({ store: pgStore });
    try {
      const started = await ok<Started>(await first.call("/v1/sessions/start", { json: {} }));
      await ok(await first.op(started.sessionId, "navigate", { url: fx.site.url("form.html") }));
      await ok(await first.op(started.sessionId, "end"));
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT kind, length(data) AS n FROM "${schema}".replay_screenshots WHERE session_id = $1`,
          [started.sessionId],
        );
        expect(rows).toEqual([{ kind: "after", n: expect.any(Number) }]);
        expect(rows[0].n).toBeGreaterThan(1000);
      } finally {
        await client.end();
      }
      await first.close();
      const again = await startLiveService({
        store: await PostgresStore.open({ url: databaseUrl!, schema }),
        keys: { key: first.key, otherKey: first.otherKey },
      });
      try {
        const { page, status } = await openInBrowser(started.sessionUrl.replace(first.url, again.url));
        expect(status).toBe(200);
        const img = page.locator("img[alt^='Viewport after']").first();
        await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle());
        expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
        await page.context().close();
      } finally {
        await again.close();
        await again.store.close();
      }
    } finally {
      await pgStore.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
    }
  });
});
