// The LOCAL report (`report: dir`): close() writes one self-contained HTML file with every operation
// (navigation, act, extract, observe, a failure) and its screenshots embedded; it opens offline in
// Chromium, its pictures load, and a variable's value is in neither its text nor its pictures' place.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { match, startFixtureServer, startScriptedModel } from "@deckhand/testkit";
import { captureStepScreenshot, Deckhand } from "deckhand";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDeckhand, testOptions } from "../support/browser.ts";

const SECRET = "report-secret-value-42";

let dir: string;
let site: Awaited<ReturnType<typeof startFixtureServer>>;
let model: Awaited<ReturnType<typeof startScriptedModel>>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "deckhand-report-"));
  [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
});
afterAll(async () => {
  await Promise.all([site?.close(), model?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function idOf(text: string, line: RegExp): number {
  const found = new RegExp(`\\[(\\d+)\\] ${line.source}`).exec(text);
  if (!found) throw new Error(`no ${line} in the outline`);
  return Number(found[1]);
}

describe("report option", () => {
  it("writes a self-contained HTML report at close() that opens offline with its screenshots", async () => {
    const modelOption = {
      modelName: "openai/gpt-4.1-mini",
      apiKey: "sk-test-report-0123456789",
      baseURL: model.baseURL,
    };
    const dh = new Deckhand(testOptions({}, { report: dir, model: modelOption }));
    await dh.init();
    try {
      await dh.context.activePage()!.goto(site.url("form.html"));
      model.on(match.schemaName("act"), (request) => ({
        elementId: idOf(request.text, /textbox: Username/),
        method: "fill",
        arguments: ["%user%"],
        description: "type the user name",
        completed: true,
      }));
      await dh.act("type %user% into the user name", { variables: { user: SECRET } });
      model.on(match.schemaName("extract"), { extraction: "a sign-in form" });
      await dh.extract("what is this page");
      model.on(match.schemaName("observe"), { elements: [] });
      await dh.observe("find the sign-in button");
      model.on(match.schemaName("act"), {
        elementId: 99_999,
        method: "click",
        arguments: [],
        description: "x",
        completed: true,
      });
      await dh.act("click the missing button").catch(() => undefined);
    } finally {
      await dh.close();
    }

    const files = readdirSync(dir).filter((name) => name.endsWith(".html"));
    expect(files).toHaveLength(1);
    const file = path.join(dir, files[0]!);
    const html = readFileSync(file, "utf8");
    expect(html).not.toContain(SECRET);
    expect(html).toContain("Content-Security-Policy");

    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
    try {
      const context = await browser.newContext({ offline: true });
      const page = await context.newPage();
      const fetched: string[] = [];
      page.on("request", (request) => fetched.push(request.url()));
      await page.goto(pathToFileURL(file).href);
      expect(await page.locator("li.step .method").allTextContents()).toEqual([
        "navigate",
        "act",
        "extract",
        "observe",
        "act",
      ]);
      expect(await page.locator("li.step.failed").count()).toBe(1);
      expect(await page.locator("li.step.failed .error").textContent()).toContain("99999");
      const images = page.locator("li.step figure img");
      expect(await images.count()).toBeGreaterThanOrEqual(6); // an after for each, a before for each act
      for (let i = 0; i < (await images.count()); i++) {
        const img = images.nth(i);
        await img.scrollIntoViewIfNeeded();
        await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle());
        expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
        expect(await img.getAttribute("src")).toMatch(/^data:image\/jpeg;base64,/);
      }
      expect(await page.locator(".totals").textContent()).toContain("5 steps");
      for (const url of fetched) expect(url.startsWith("file:") || url.startsWith("data:")).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it("is for LOCAL runs: a REMOTE instance with it is refused, naming the option", () => {
    expect(() => new Deckhand({ env: "REMOTE", report: dir })).toThrow(/report/);
  });
});

describe("a step's screenshot", () => {
  it("with values to hide, is not taken when the page shows one the mask did not cover", async () => {
    const secret = "Zanzibar-4417-Quokka";
    const dh = await startDeckhand();
    try {
      const page = dh.context.activePage()!;
      await page.goto(site.url("actions.html"));
      // Shown before the capture: masked, and the picture is taken.
      await page.evaluate((value: string) => {
        const shown = document.createElement("p");
        shown.textContent = value;
        document.body.append(shown);
      }, secret);
      expect((await captureStepScreenshot(page, { secrets: [secret] }))?.length).toBeGreaterThan(1000);
      // The page shows it again the moment the mask is put on (as a page's own script may, between
      // the masking and the capture): that one is not covered, so there is no picture at all.
      await page.evaluate((value: string) => {
        const own = Object.getOwnPropertyDescriptor(Document.prototype, "adoptedStyleSheets")!;
        Object.defineProperty(document, "adoptedStyleSheets", {
          configurable: true,
          get: () => own.get!.call(document),
          set: (sheets: CSSStyleSheet[]) => {
            own.set!.call(document, sheets);
            const late = document.createElement("p");
            late.textContent = value;
            document.body.append(late);
          },
        });
      }, secret);
      expect(await captureStepScreenshot(page, { secrets: [secret] })).toBeNull();
    } finally {
      await dh.close();
    }
  });

  it("is given up, not taken of the next page, when the tab navigates while it is taken", async () => {
    const dh = await startDeckhand();
    try {
      const page = dh.context.activePage()!;
      await page.goto(site.url("actions.html"));
      // The page draws nothing more: an open alert holds it, and once the navigation closes the
      // alert its script never returns. So the capture cannot be answered with this page, and the
      // next one (of another site: another renderer) commits first.
      const dialogShown = new Promise<void>((resolve) => page.on("dialog", () => resolve()));
      await page.evaluate(() => {
        setTimeout(() => {
          alert("hold the picture");
          for (;;);
        }, 0);
      });
      await dialogShown;
      // Given a minute: before, such a capture was never answered and waited for its timeout (the
      // service's next operation with it); half of it is a bound only a stall reaches.
      const started = Date.now();
      const shot = captureStepScreenshot(page, { timeoutMs: 60_000 });
      await page.goto(site.crossUrl("form.html"));
      expect(page.url()).toBe(site.crossUrl("form.html"));
      expect(await shot).toBeNull();
      expect(Date.now() - started).toBeLessThan(30_000);
      // The next capture, of the page now shown, works.
      expect((await captureStepScreenshot(page))?.length).toBeGreaterThan(1000);
    } finally {
      await dh.close();
    }
  });
});
