// Signed session links (sessionUrl, debugUrl, cdpUrl): opened with no header and no API key in
// the URL, good for one session and one purpose, until they expire or their key is revoked. Every
// attack below (a tampered token, one of another session, another purpose, an expired one, one of
// a revoked key) answers 404 and shows nothing of any session.

import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LINK_SECRET_NAME, LinkSigner } from "../../src/viewer/links.ts";
import { type Fixtures, type LiveService, ok, startFixtures, startLiveService } from "../live-helpers.ts";

let svc: LiveService;
let fx: Fixtures;

interface Started {
  sessionId: string;
  cdpUrl: string;
  debugUrl: string;
  sessionUrl: string;
}

async function start(key = svc.key.key): Promise<Started> {
  return ok<Started>(await svc.call("/v1/sessions/start", { json: {}, key }));
}

/** The HTTP status a WebSocket upgrade is answered with (101 when it opened). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    ws.once("error", (error) => {
      if (!String(error.message).includes("Unexpected server response")) reject(error);
    });
  });
}

function withToken(url: string, token: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("token", token);
  return parsed.toString();
}

function tokenOf(url: string): string {
  return new URL(url).searchParams.get("token")!;
}

beforeAll(async () => {
  [svc, fx] = await Promise.all([
    startLiveService({ maxSessions: 6, maxSessionsPerProject: 4 }),
    startFixtures(),
  ]);
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

describe("cdpUrl", () => {
  it("works as it is with Playwright's connectOverCDP: no header, no API key, the session's own page", async () => {
    const { sessionId, cdpUrl } = await start();
    await ok(await svc.op(sessionId, "navigate", { url: fx.site.url("/") }));
    const title = await (await svc.service.sessions.get(sessionId)!.dh.context.activePage()!).title();
    expect(cdpUrl).not.toContain(svc.key.key);
    expect(new URL(cdpUrl).searchParams.has("apiKey")).toBe(false);

    const browser = await chromium.connectOverCDP(cdpUrl);
    try {
      const pages = browser.contexts().flatMap((context) => context.pages());
      expect(pages.map((page) => page.url())).toEqual([fx.site.url("/")]);
      expect(await pages[0]!.title()).toBe(title);
      expect(await pages[0]!.evaluate(() => location.href)).toBe(fx.site.url("/"));
    } finally {
      await browser.close();
    }
    await svc.op(sessionId, "end");
  });

  it("a tampered, foreign, mis-purposed or expired token is a 404, and so is none at all without a key", async () => {
    const a = await start();
    const b = await start();
    const other = await start(svc.otherKey.key);
    const token = tokenOf(a.cdpUrl);
    const [payload, mac] = token.split(".") as [string, string];
    const flipped = `${mac.slice(0, -2)}${mac.at(-2) === "A" ? "B" : "A"}${mac.at(-1)}`;
    // The claims of session a, rewritten to name session b, keeping a's signature.
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const forged = `${Buffer.from(JSON.stringify({ ...claims, s: b.sessionId })).toString("base64url")}.${mac}`;
    const secret = await svc.store.serviceSecret(LINK_SECRET_NAME);
    const expired = new LinkSigner(secret).sign(
      { sessionId: a.sessionId, keyId: svc.key.id, purpose: "cdp", ttlMs: 60_000 },
      Date.now() - 120_000,
    );

    expect(await upgradeStatus(a.cdpUrl)).toBe(101);
    expect(await upgradeStatus(withToken(a.cdpUrl, `${payload}.${flipped}`))).toBe(404);
    expect(await upgradeStatus(withToken(b.cdpUrl, token))).toBe(404); // a's token on b
    expect(await upgradeStatus(withToken(other.cdpUrl, token))).toBe(404); // on another project's
    expect(await upgradeStatus(withToken(b.cdpUrl, forged))).toBe(404);
    expect(await upgradeStatus(withToken(a.cdpUrl, tokenOf(a.sessionUrl)))).toBe(404); // page token
    expect(await upgradeStatus(withToken(a.cdpUrl, tokenOf(a.debugUrl)))).toBe(404); // debug token
    expect(await upgradeStatus(withToken(a.cdpUrl, expired))).toBe(404);
    expect(await upgradeStatus(withToken(a.cdpUrl, ""))).toBe(404);
    expect(await upgradeStatus(withToken(a.cdpUrl, "x".repeat(5000)))).toBe(404);
    const bare = new URL(a.cdpUrl);
    bare.search = "";
    expect(await upgradeStatus(bare.toString())).toBe(401);
    for (const s of [a, b, other])
      await svc.op(s.sessionId, "end", {}, s === other ? { key: svc.otherKey.key } : {});
  });

  it("stops working when the key that made it is revoked", async () => {
    const key = await svc.store.createKey({ name: "short-lived" });
    const { sessionId, cdpUrl } = await start(key.key);
    expect(await upgradeStatus(cdpUrl)).toBe(101);
    await svc.store.revokeKey(key.id);
    expect(await upgradeStatus(cdpUrl)).toBe(404);
    await svc.service.sessions.end(sessionId, "ended by the client");
  });
});
