// The project dashboard (/dashboard), opened in real Chromium (playwright-core): sign-in with the
// key in a form, with the keyboard alone; the project's live and ended sessions with their steps,
// pages, tokens, cost, cache hits and why they ended, each linking to its session page; totals per
// day; the key's details (never the key). Pictures at 1280 and 390 pixels, no console error, no
// script. Then the attacks: another project's session id, project A's cookie on B's session, a
// forged and a tampered cookie, a revoked key's cookie, a cross-site POST without the CSRF token.
//
// DECKHAND_TEST_SCREENSHOTS=<dir> keeps the pictures there (to look at); otherwise they go to a
// temporary directory that is removed.

import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { match } from "@deckhand/testkit";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { CSRF_COOKIE, DASHBOARD_SECRET_NAME, SIGNED_IN_COOKIE } from "../src/dashboard/routes.ts";
import { createLogger } from "../src/logger.ts";
import { startService } from "./helpers.ts";
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

let svc: LiveService;
let fx: Fixtures;
let browser: Browser;
let shots: string;
const keepShots = process.env.DECKHAND_TEST_SCREENSHOTS;

/** Sessions made for the page: one live, one ended (with a cache hit), one of another project. */
let liveId: string;
let endedId: string;
let theirsId: string;

beforeAll(async () => {
  shots = keepShots ?? mkdtempSync(path.join(tmpdir(), "deckhand-dash-"));
  mkdirSync(shots, { recursive: true });
  [svc, fx, browser] = await Promise.all([
    startLiveService(),
    startFixtures(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] }),
  ]);
  const model = scriptedModelConfig(fx.model);
  fx.model.on(match.schemaName("act"), (request) => ({
    elementId: idOf(request.text, /textbox: Username/),
    method: "fill",
    arguments: ["dashboard user"],
    description: "type the user name",
    completed: true,
  }));
  fx.model.on(match.schemaName("extract"), { extraction: "a sign-in form" });

  // Ended: navigate, act, the same act again (a server cache hit), extract, then ended by the client.
  endedId = await svc.start();
  await ok(await svc.op(endedId, "navigate", { url: fx.site.url("form.html") }));
  for (let i = 0; i < 2; i++)
    await ok(
      await svc.op(
        endedId,
        "act",
        { input: "type the user name", options: { model } },
        { headers: WITH_MODEL_KEY },
      ),
    );
  await ok(
    await svc.op(
      endedId,
      "extract",
      { instruction: "what is this", options: { model } },
      { headers: WITH_MODEL_KEY },
    ),
  );
  await ok(await svc.op(endedId, "end"));
  // Live: two pages.
  liveId = await svc.start();
  await ok(await svc.op(liveId, "navigate", { url: fx.site.url("form.html") }));
  await ok(await svc.op(liveId, "navigate", { url: fx.site.url("index.html") }));
  // Another project's, with a step.
  theirsId = await svc.start({}, { key: svc.otherKey.key });
  await ok(await svc.op(theirsId, "navigate", { url: fx.site.url("index.html") }, { key: svc.otherKey.key }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await fx?.close();
  if (shots && !keepShots) rmSync(shots, { recursive: true, force: true });
});

/** A browser context of its own at `width`, remembering console errors and every URL it asked for. */
async function open(
  width = 1280,
): Promise<{ context: BrowserContext; page: Page; errors: string[]; requested: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  const requested: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("request", (request) => requested.push(request.url()));
  return { context, page, errors, requested };
}

/** Signs in through the form, by the keyboard alone: Tab to the field, type, Enter. */
async function signInByKeyboard(page: Page, key: string): Promise<void> {
  await typeKeyByKeyboard(page, key);
  await Promise.all([page.waitForURL(`${svc.url}/dashboard`), page.keyboard.press("Enter")]);
}

/** Opens the dashboard (which sends to the sign-in form), Tabs to the key field and types `key`. */
async function typeKeyByKeyboard(page: Page, key: string): Promise<void> {
  await page.goto(`${svc.url}/dashboard`, { waitUntil: "load" });
  expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  // Tab from the top of the page until the key field has the focus.
  for (let i = 0; i < 5; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(() => document.activeElement?.id === "key")) break;
  }
  expect(await page.evaluate(() => document.activeElement?.id)).toBe("key");
  await page.keyboard.type(key);
}

/** The Cookie header a browser context would send to the dashboard. */
async function cookieHeader(context: BrowserContext): Promise<string> {
  const cookies = await context.cookies(`${svc.url}/dashboard`);
  return cookies.map((c) => `${c.name}=${c.value}`).join("; ");
}

describe("the dashboard in a browser", () => {
  for (const width of [1280, 390]) {
    it(`signs in with the key and shows the project's live and ended sessions, at ${width} pixels`, async () => {
      const { context, page, errors, requested } = await open(width);
      await page.goto(`${svc.url}/dashboard/sign-in`, { waitUntil: "load" });
      await page.screenshot({ path: path.join(shots, `sign-in-${width}.png`), fullPage: true });
      await signInByKeyboard(page, svc.key.key);

      // The key's details, never the key.
      const facts = (await page.getByLabel("Signed in with").textContent()) ?? "";
      expect(facts).toContain(svc.key.id);
      expect(facts).toContain(svc.key.projectId);
      expect(facts).toContain("first");
      expect(await page.content()).not.toContain(svc.key.key);

      const live = page.getByRole("table", { name: "Live sessions" });
      const recent = page.getByRole("table", { name: "Recent sessions" });
      const liveRow = live.locator("tbody tr").filter({ has: page.locator(`a[title="${liveId}"]`) });
      const endedRow = recent.locator("tbody tr").filter({ has: page.locator(`a[title="${endedId}"]`) });
      expect(await liveRow.count()).toBe(1);
      expect(await endedRow.count()).toBe(1);
      const cell = async (row: typeof liveRow, label: string) =>
        (await row.locator(`td[data-label="${label}"]`).textContent())?.trim();
      expect(await cell(liveRow, "Status")).toBe("live");
      expect(await cell(liveRow, "Pages")).toBe("2");
      expect(await cell(liveRow, "Steps")).toBe("2");
      expect(await cell(endedRow, "Status")).toBe("ended");
      expect(await cell(endedRow, "Steps")).toBe("4");
      expect(await cell(endedRow, "Cache hits")).toBe("1");
      expect(await cell(endedRow, "Ended because")).toBe("ended by the client");
      // Tokens as the replay recorded them.
      const actions = await svc.store.listActions(endedId);
      const input = actions.reduce((sum, a) => sum + (a.tokenUsage?.inputTokens ?? 0), 0);
      expect(input).toBeGreaterThan(0);
      expect(await cell(endedRow, "Tokens in / out")).toMatch(
        new RegExp(`^${input.toLocaleString("en-US")} / `),
      );
      // Nothing of the other project.
      expect(await page.content()).not.toContain(theirsId);
      // Totals per day: today, with the project's sessions and steps.
      const today = new Date().toISOString().slice(0, 10);
      const day = page.getByRole("table", { name: "Totals per day" }).locator("tbody tr").first();
      expect(await cell(day, "Day")).toBe(today);
      expect(Number(await cell(day, "Steps"))).toBeGreaterThanOrEqual(6);

      // Readable: nothing wider than the window (no sideways scrolling on a phone).
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const file = path.join(shots, `dashboard-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(5_000);

      // A session's link opens its session page.
      await Promise.all([
        page.waitForURL((url) => url.pathname === `/v1/sessions/${endedId}/view`),
        endedRow.locator("td.id a").click(),
      ]);
      expect(await page.locator("li.step").count()).toBe(4);

      expect(errors).toEqual([]);
      expect(requested.every((url) => url.startsWith(svc.url))).toBe(true);
      await context.close();
    });
  }

  it("the front page links to it, and it runs no script and allows forms to itself only", async () => {
    const { context, page, errors } = await open();
    await page.goto(`${svc.url}/`, { waitUntil: "load" });
    await page.screenshot({ path: path.join(shots, "front-1280.png"), fullPage: true });
    await Promise.all([
      page.waitForURL(`${svc.url}/dashboard/sign-in`),
      page.getByRole("link", { name: "Project dashboard" }).click(),
    ]);
    const csp = (await fetch(`${svc.url}/dashboard/sign-in`)).headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(await page.locator("script").count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("keeps an HttpOnly, SameSite=Strict cookie scoped to /dashboard that holds no key; keyboard use; sign-out ends it", async () => {
    const { context, page } = await open();
    await signInByKeyboard(page, svc.key.key);
    const cookies = await context.cookies(`${svc.url}/dashboard`);
    const signedIn = cookies.find((c) => c.name === SIGNED_IN_COOKIE)!;
    expect(signedIn).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard" });
    // The secret is everything after the id: base64url, so it may itself hold "_".
    expect(signedIn.value).not.toContain(svc.key.key.split("_").slice(2).join("_"));
    expect(cookies.find((c) => c.name === CSRF_COOKIE)).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    // Not sent anywhere else on the service.
    expect(await context.cookies(`${svc.url}/v1/sessions/start`)).toEqual([]);

    // The keyboard alone: Tab reaches the sign-out button, then the live session's link, shown
    // focused; Enter opens its session page.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Sign out");
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => ({
      title: document.activeElement?.getAttribute("title"),
      outline: getComputedStyle(document.activeElement as Element).outlineStyle,
    }));
    expect(focused).toEqual({ title: liveId, outline: "solid" });
    await Promise.all([
      page.waitForURL((url) => url.pathname === `/v1/sessions/${liveId}/view`, {
        waitUntil: "domcontentloaded",
      }),
      page.keyboard.press("Enter"),
    ]);
    await page.goto(`${svc.url}/dashboard`, { waitUntil: "load" });
    // Sign out by keyboard: the button is in the header.
    await page.keyboard.press("Tab");
    await Promise.all([page.waitForURL(`${svc.url}/dashboard/sign-in`), page.keyboard.press("Enter")]);
    expect(
      (await context.cookies(`${svc.url}/dashboard`)).find((c) => c.name === SIGNED_IN_COOKIE),
    ).toBeUndefined();
    await page.goto(`${svc.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await context.close();
  });

  it("refuses a key that is not valid, and says so in the form", async () => {
    const { context, page, errors } = await open(390);
    await typeKeyByKeyboard(page, "dh_0000000000000000_nottherealkeynottherealkeynottherealkey00000");
    const answer = page.waitForResponse(
      (r) => r.url() === `${svc.url}/dashboard/sign-in` && r.request().method() === "POST",
    );
    await page.keyboard.press("Enter");
    expect((await answer).status()).toBe(401);
    await page.waitForLoadState("load");
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    expect(await page.getByRole("alert").textContent()).toContain("not valid");
    await page.screenshot({ path: path.join(shots, "sign-in-refused-390.png"), fullPage: true });
    expect(
      (await context.cookies(`${svc.url}/dashboard`)).find((c) => c.name === SIGNED_IN_COOKIE),
    ).toBeUndefined();
    // The 401 answer is a page, not a console error of its own making.
    expect(errors.filter((e) => !e.includes("401"))).toEqual([]);
    await context.close();
  });
});

describe("secrets of the sign-in", () => {
  it("neither a key typed into the form (good or bad) nor the cookies reach the service's log", async () => {
    const wrong = "dh_1111111111111111_thisisnotakeythisisnotakeythisisnotakey0000";
    const { context, page } = await open();
    await typeKeyByKeyboard(page, wrong);
    const refused = page.waitForResponse(
      (r) => r.url() === `${svc.url}/dashboard/sign-in` && r.request().method() === "POST",
    );
    await page.keyboard.press("Enter");
    expect((await refused).status()).toBe(401);
    await page.getByRole("alert").waitFor(); // the answer's page is shown
    await signInByKeyboard(page, svc.key.key);
    const cookies = await context.cookies(`${svc.url}/dashboard`);
    expect(cookies.length).toBe(2);
    const log = svc.logText();
    expect(log).toContain("dashboard sign-in");
    for (const secret of [svc.key.key, wrong, ...cookies.map((c) => decodeURIComponent(c.value))])
      expect(log).not.toContain(secret);
    await context.close();
  });
});

/** Signs in at `url` with `key` as a browser would (form, CSRF cookie and token); the Cookie header after. */
async function signInOver(url: string, key: string): Promise<string> {
  const jar = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const value = pair!.slice(at + 1);
      if (value) jar.set(pair!.slice(0, at), value);
      else jar.delete(pair!.slice(0, at));
    }
    return [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  };
  const form = await fetch(`${url}/dashboard/sign-in`);
  const cookie = remember(form);
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signIn = await fetch(`${url}/dashboard/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ key, _csrf: token }),
  });
  expect(signIn.status).toBe(303);
  return remember(signIn);
}

describe("an operator key (DECKHAND_API_KEYS)", () => {
  it("signs in too, shows what it is, and stops working once the key is no longer configured", async () => {
    const operatorKey = "operator-key-for-the-dashboard-test-0123456789";
    const first = await startService({ operatorKeys: [operatorKey] });
    try {
      const operatorCookie = await signInOver(first.url, operatorKey);
      const storedCookie = await signInOver(first.url, first.key.key);
      const page = await (
        await fetch(`${first.url}/dashboard`, { headers: { cookie: operatorCookie } })
      ).text();
      expect(page).toContain("operator key");
      expect(page).toContain("DECKHAND_API_KEYS");
      expect(page).not.toContain(operatorKey);
      // The same store (so the same cookie secret), the operator key no longer configured.
      const second = await createApp({ store: first.store, logger: createLogger({ level: "silent" }) });
      try {
        await second.listen({ host: "127.0.0.1", port: 0 });
        const address = second.server.address();
        const secondUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
        // A stored key's cookie made by the first service works there...
        expect((await fetch(`${secondUrl}/dashboard`, { headers: { cookie: storedCookie } })).status).toBe(
          200,
        );
        // ...the operator key's does not.
        const again = await fetch(`${secondUrl}/dashboard`, {
          headers: { cookie: operatorCookie },
          redirect: "manual",
        });
        expect(again.headers.get("location")).toBe("/dashboard/sign-in");
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});

describe("nothing of another project", () => {
  /** A signed-in browser context of `key`, and its cookie header. */
  async function signedIn(key: string): Promise<{ context: BrowserContext; page: Page; cookie: string }> {
    const { context, page } = await open();
    await signInByKeyboard(page, key);
    return { context, page, cookie: await cookieHeader(context) };
  }

  it("another project's session id in a dashboard URL answers 404, as an unknown one does", async () => {
    const { context, cookie } = await signedIn(svc.key.key);
    for (const id of [theirsId, "00000000-0000-4000-8000-000000000000"]) {
      const answer = await fetch(`${svc.url}/dashboard/sessions/${id}`, {
        headers: { cookie },
        redirect: "manual",
      });
      expect(answer.status, id).toBe(404);
      const text = await answer.text();
      expect(text).not.toContain("token=");
    }
    // Its own: a redirect to its session page with a signed link.
    const mine = await fetch(`${svc.url}/dashboard/sessions/${liveId}`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(mine.status).toBe(303);
    expect(mine.headers.get("location")).toMatch(new RegExp(`^/v1/sessions/${liveId}/view\\?token=`));
    await context.close();
  });

  it("project A's cookie on project B's session is 404; B's cookie lists only B's sessions", async () => {
    const a = await signedIn(svc.key.key);
    const b = await signedIn(svc.otherKey.key);
    const aOnB = await fetch(`${svc.url}/dashboard/sessions/${theirsId}`, {
      headers: { cookie: a.cookie },
      redirect: "manual",
    });
    expect(aOnB.status).toBe(404);
    const bOnA = await fetch(`${svc.url}/dashboard/sessions/${endedId}`, {
      headers: { cookie: b.cookie },
      redirect: "manual",
    });
    expect(bOnA.status).toBe(404);
    const page = await (await fetch(`${svc.url}/dashboard`, { headers: { cookie: b.cookie } })).text();
    expect(page).toContain(theirsId);
    expect(page).not.toContain(liveId);
    expect(page).not.toContain(endedId);
    await a.context.close();
    await b.context.close();
  });

  it("a forged or tampered cookie is no sign-in", async () => {
    const { context } = await signedIn(svc.key.key);
    const signedInCookie = (await context.cookies(`${svc.url}/dashboard`)).find(
      (c) => c.name === SIGNED_IN_COOKIE,
    )!;
    const [payload, mac] = decodeURIComponent(signedInCookie.value).split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as {
      k: string;
      p: string;
      e: number;
    };
    const asB = Buffer.from(
      JSON.stringify({ ...claims, k: svc.otherKey.id, p: svc.otherKey.projectId }),
    ).toString("base64url");
    // B's claims under A's signature; B's claims signed with a secret that is not the service's; the
    // right claims with a broken signature; the claims with no signature.
    const wrongSecret = createHmac("sha256", "not the service secret")
      .update(asB)
      .digest("base64")
      .replace(/=+$/, "");
    const forgeries = [`${asB}.${mac}`, `${asB}.${wrongSecret}`, `${payload}.${mac.slice(0, -2)}AA`, payload];
    for (const forged of forgeries) {
      const cookie = `${SIGNED_IN_COOKIE}=${encodeURIComponent(forged)}`;
      const home = await fetch(`${svc.url}/dashboard`, { headers: { cookie }, redirect: "manual" });
      expect(home.status, forged).toBe(303);
      expect(home.headers.get("location")).toBe("/dashboard/sign-in");
      const theirs = await fetch(`${svc.url}/dashboard/sessions/${theirsId}`, {
        headers: { cookie },
        redirect: "manual",
      });
      expect(theirs.headers.get("location")).toBe("/dashboard/sign-in");
    }
    // The secret is the store's own, not something a tenant can guess: a cookie signed with it works.
    const secret = await svc.store.serviceSecret(DASHBOARD_SECRET_NAME);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    await context.close();
  });

  it("a revoked key's cookie stops working at the next request", async () => {
    const key = await svc.store.createKey({ name: "to revoke", projectId: svc.key.projectId });
    const { context, page, cookie } = await signedIn(key.key);
    expect(await page.getByRole("table", { name: "Live sessions" }).count()).toBe(1);
    expect(await svc.store.revokeKey(key.id)).toBe(true);
    const home = await fetch(`${svc.url}/dashboard`, { headers: { cookie }, redirect: "manual" });
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe("/dashboard/sign-in");
    const link = await fetch(`${svc.url}/dashboard/sessions/${liveId}`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(link.headers.get("location")).toBe("/dashboard/sign-in");
    await page.reload();
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await context.close();
  });

  it("a cross-site form cannot sign out (SameSite=Strict and the CSRF token), nor can a POST without the token", async () => {
    const { context, page, cookie } = await signedIn(svc.key.key);
    // An attacker's page on another site (localhost is not the site of 127.0.0.1) posts a form to
    // the sign-out, and one to the sign-in with the attacker's own key (login CSRF).
    fx.site.route("/attack.html", (request, response) => {
      const target = new URL(request.url ?? "/", "http://x").searchParams.get("target")!;
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(
        `<!doctype html><form id="f" method="post" action="${target}"><input name="key" value="${svc.otherKey.key}"></form>` +
          `<script>document.getElementById("f").submit()</script>`,
      );
    });
    for (const target of ["sign-out", "sign-in"]) {
      const answer = page.waitForResponse((r) => r.url() === `${svc.url}/dashboard/${target}`);
      await page.goto(
        fx.site.crossUrl(`attack.html?target=${encodeURIComponent(`${svc.url}/dashboard/${target}`)}`),
      );
      expect((await answer).status(), target).toBe(403);
    }
    // Still signed in, as A.
    await page.goto(`${svc.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await page.content()).toContain(svc.key.projectId);

    // With the cookies (as a same-site page would send them) but no token, or a token of another
    // key's page: refused.
    const post = (body: Record<string, string>, cookies = cookie) =>
      fetch(`${svc.url}/dashboard/sign-out`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: cookies, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body),
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ _csrf: "forged-token" })).status).toBe(403);
    const b = await signedIn(svc.otherKey.key);
    const bToken = await b.page.locator("input[name=_csrf]").first().inputValue();
    expect((await post({ _csrf: bToken })).status).toBe(403);
    // A's own token: signed out.
    const aToken = await page.locator("input[name=_csrf]").first().inputValue();
    const out = await post({ _csrf: aToken });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/dashboard/sign-in");
    await b.context.close();
    await context.close();
  });
});

const databaseUrl = process.env.DECKHAND_TEST_DATABASE_URL;

describe.runIf(databaseUrl)("on PostgreSQL", () => {
  it("signs in and lists the project's sessions with their totals", async () => {
    const crypto = await import("node:crypto");
    const pg = (await import("pg")).default;
    const { PostgresStore } = await import("../src/store/postgres-store.ts");
    const schema = `dashboard_${crypto.randomBytes(6).toString("hex")}`;
    const pgStore = await PostgresStore.open({ url: databaseUrl!, schema });
    const service = await startLiveService({ store: pgStore });
    try {
      const id = await service.start();
      await ok(await service.op(id, "navigate", { url: fx.site.url("form.html") }));
      await ok(await service.op(id, "end"));
      const theirs = await service.start({}, { key: service.otherKey.key });
      const { context, page } = await open();
      await page.goto(`${service.url}/dashboard/sign-in`);
      await page.locator("#key").fill(service.key.key);
      await Promise.all([page.waitForURL(`${service.url}/dashboard`), page.locator("#key").press("Enter")]);
      const row = page
        .getByRole("table", { name: "Recent sessions" })
        .locator("tbody tr")
        .filter({ has: page.locator(`a[title="${id}"]`) });
      expect((await row.locator('td[data-label="Steps"]').textContent())?.trim()).toBe("1");
      expect((await row.locator('td[data-label="Ended because"]').textContent())?.trim()).toBe(
        "ended by the client",
      );
      expect(await page.content()).not.toContain(theirs);
      await context.close();
      await service.op(theirs, "end", {}, { key: service.otherKey.key });
    } finally {
      await service.close();
      await pgStore.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
    }
  });
});
