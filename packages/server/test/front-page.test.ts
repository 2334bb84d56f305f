// GET / as a person opens it in real Chromium (playwright-core): what the service is, its version
// and health, links to the API reference (Swagger UI, served by the service itself: every request
// the page makes stays on the service) and the OpenAPI document; readable at 1280 and 390 pixels,
// usable with the keyboard alone, no console error, no script on the front page. A JSON client
// asking GET / with accept: application/json gets the same facts as JSON.

import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, type TestService } from "./helpers.ts";

const VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

let service: TestService;
let browser: Browser;
let shots: string;

beforeAll(async () => {
  shots = mkdtempSync(path.join(tmpdir(), "deckhand-front-"));
  [service, browser] = await Promise.all([
    startService(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
  if (shots) rmSync(shots, { recursive: true, force: true });
});

/** A page of its own, at `width` pixels, that remembers console errors and every URL it asked for. */
async function open(
  url: string,
  width = 1280,
): Promise<{ page: Page; errors: string[]; requested: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  const requested: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("request", (request) => requested.push(request.url()));
  await page.goto(url, { waitUntil: "load" });
  return { page, errors, requested };
}

describe("the front page", () => {
  it("answers a JSON client with the same facts as JSON", async () => {
    const response = await fetch(`${service.url}/`, { headers: { accept: "application/json" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      service: "deckhand",
      version: VERSION,
      apiVersion: "3.1.0",
      health: "ok",
      links: {
        apiReference: "/docs",
        openapi: "/v1/openapi.json",
        dashboard: "/dashboard",
        healthz: "/healthz",
        readyz: "/readyz",
      },
    });
  });

  for (const width of [1280, 390]) {
    it(`says what the service is, its version and health, at ${width} pixels, with no script and no error`, async () => {
      const { page, errors, requested } = await open(`${service.url}/`, width);
      const response = await page.request.get(`${service.url}/`, { headers: { accept: "text/html" } });
      expect(response.headers()["content-security-policy"]).toContain("script-src 'none'");
      expect(await page.title()).toBe("Deckhand service");
      const facts = page.getByLabel("Service status");
      const text = await facts.textContent();
      expect(text).toContain(`Version${VERSION}`);
      expect(text).toContain("Healthok");
      expect(await page.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/docs");
      expect(await page.getByRole("link", { name: "OpenAPI document" }).getAttribute("href")).toBe(
        "/v1/openapi.json",
      );
      expect(await page.getByRole("link", { name: "Project dashboard" }).getAttribute("href")).toBe(
        "/dashboard",
      );
      expect(await page.locator("#quick-start").textContent()).toBe("Quick start");
      // Nothing wider than the window: no sideways scrolling on a phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const file = path.join(shots, `front-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(5_000);
      expect(errors).toEqual([]);
      expect(requested.every((url) => url.startsWith(service.url))).toBe(true);
      await page.context().close();
    });
  }

  it("can be used with the keyboard alone: Tab reaches the API reference, Enter opens it", async () => {
    const { page, errors } = await open(`${service.url}/`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("API reference");
    // The focused link is shown as such.
    expect(
      await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle),
    ).not.toBe("none");
    await Promise.all([page.waitForURL(`${service.url}/docs**`), page.keyboard.press("Enter")]);
    await page.locator(".opblock").first().waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

describe("the API reference at /docs", () => {
  it("renders the OpenAPI document with Swagger UI from the service's own files, no CDN, no error", async () => {
    const { page, errors, requested } = await open(`${service.url}/docs`);
    await page.locator(".opblock").first().waitFor();
    const operations = await page.locator(".opblock-summary-path").allTextContents();
    expect(operations.map((text) => text.replace(/\u200b/g, ""))).toContain("/v1/sessions/start");
    expect(await page.locator(".info .title").textContent()).toContain("Deckhand API");
    // Every file, and the document, came from this service.
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
    const answer = await page.request.get(`${service.url}/docs/`);
    expect(answer.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
