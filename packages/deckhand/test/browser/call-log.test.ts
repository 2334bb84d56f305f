// The call log a deadline keeps: a locator call that fails says what it waited for and every
// retry (a retry repeated at once folded as "x N"), and a failed act carries the whole operation's
// log into its message, its history entry and the report's failed step, secrets masked.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import {
  type Deckhand,
  type Page,
  ServiceClickError,
  ServiceElementNotFoundError,
  ServiceError,
  ServiceTimeoutError,
} from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDeckhand } from "../support/browser.ts";
import { type BrowserFixture, closeFixture } from "./helpers.ts";

/** A typed variable's value: it must never show in a log, a message, the history or the report. */
const SECRET = "tok-7f3a9c21e5";

let fx: BrowserFixture | undefined;
let dh: Deckhand;
let site: FixtureServer;
let reportDir: string;
let page: Page;

beforeAll(async () => {
  reportDir = await mkdtemp(path.join(tmpdir(), "deckhand-calllog-"));
  // The instance keeps a LOCAL report (the session report a failed step shows its log in).
  [dh, site] = await Promise.all([
    startDeckhand({}, { report: reportDir, selfHeal: false }),
    startFixtureServer(),
  ]);
  fx = {
    dh,
    site,
    close: async () => {
      await Promise.all([dh.close(), site.close()]);
    },
  };
  page = dh.context.pages()[0]!;
});

afterAll(async () => {
  await closeFixture(fx);
  await rm(reportDir, { recursive: true, force: true });
});

async function show(file: string): Promise<Page> {
  await page.mouse.move(0, 0);
  await page.goto(site.url(file));
  return page;
}

/** The error a call rejects with (it must reject). */
async function failure(call: Promise<unknown>): Promise<ServiceError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ServiceError)) throw new Error(`expected a Deckhand error, got ${String(error)}`);
  return error;
}

/** The log a message ends with, as lines. */
function logOf(message: string): string[] {
  const at = message.indexOf("\nCall log:\n");
  if (at < 0) return [];
  return message
    .slice(at + "\nCall log:\n".length)
    .split("\n")
    .map((line) => line.replace(/^ {2}- /, ""));
}

describe("a locator call that fails", () => {
  it("ends a covered click's ServiceClickError with a log naming the cover", async () => {
    await show("overlay.html");
    const error = await failure(page.locator("#behind-banner").click({ timeout: 1_000 }));
    expect(error).toBeInstanceOf(ServiceClickError);
    expect(error.message).toMatch(/^Could not click "#behind-banner": it is covered by another element/);
    expect(error.callLog?.[0]).toBe('click: waiting for locator("#behind-banner")');
    expect(error.callLog).toContainEqual(
      expect.stringMatching(
        /^<div id="cookie-banner"[^>]*>We use cookies.*intercepts pointer events - retrying/,
      ),
    );
    // The message ends with the same lines, and no line follows itself (repeats are folded).
    expect(logOf(error.message)).toEqual(error.callLog);
    const lines = error.callLog ?? [];
    for (let i = 1; i < lines.length; i++) expect(lines[i]).not.toBe(lines[i - 1]);
  });

  it("lists a wait's retries for an element that never appears as one folded line", async () => {
    await show("overlay.html");
    const error = await failure(page.locator("#never-there").waitFor({ timeout: 3_000 }));
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect(error.callLog?.[0]).toBe('waitFor: waiting for locator("#never-there") to be visible');
    expect(error.callLog).toHaveLength(2);
    const folded = /^no element matches #never-there - retrying x (\d+)$/.exec(error.callLog?.[1] ?? "");
    expect(folded, String(error.callLog?.[1])).not.toBeNull();
    expect(Number(folded![1])).toBeGreaterThanOrEqual(2);
  });

  it("ends ServiceElementNotFoundError with the log of the lookups", async () => {
    await show("overlay.html");
    const error = await failure(page.locator("#never-there").click({ timeout: 300 }));
    expect(error).toBeInstanceOf(ServiceElementNotFoundError);
    expect(logOf(error.message)[0]).toBe('click: waiting for locator("#never-there")');
    expect(error.callLog?.at(-1)).toMatch(/^no element matches #never-there - retrying/);
  });

  it("leaves a call that succeeds without a log on any error", async () => {
    await show("overlay.html");
    await page.locator("#free").click({ timeout: 1_000 });
    expect(await page.evaluate(() => document.getElementById("log")!.textContent)).toBe("free clicked\n");
  });
});

describe("a failed act", () => {
  it("ends its message with the operation's log, keeps it in the history and the report, masked", async () => {
    await show("overlay.html");
    // The banner's class is the variable's value: the log names the cover, with the value masked.
    await page.evaluate((secret) => {
      document.getElementById("cookie-banner")!.className = secret;
    }, SECRET);
    const variables = { token: SECRET };
    const result = await dh.act(
      {
        selector: "#behind-banner",
        method: "click",
        description: "the button behind the banner",
        arguments: [],
      },
      { variables },
    );
    expect(result.success).toBe(false);
    const lines = logOf(result.message);
    expect(lines).toContainEqual(
      expect.stringMatching(/^<div id="cookie-banner" class="%token%"[^>]*>.*intercepts pointer events/),
    );
    // One log, at the end: the failure's own message does not carry a second copy.
    expect(result.message.split("\nCall log:\n")).toHaveLength(2);

    // Typing the variable into a field that takes no text fails too; its value is never logged.
    await page.evaluate(() => {
      const field = document.createElement("input");
      field.id = "code";
      field.readOnly = true;
      document.body.prepend(field);
    });
    const typed = await dh.act(
      { selector: "#code", method: "fill", description: "the code field", arguments: ["%token%"] },
      { variables },
    );
    expect(typed.success).toBe(false);
    expect(logOf(typed.message)).toContain('fill: waiting for locator("#code")');

    const history = await dh.history;
    const [clicked, filled] = history.slice(-2);
    expect(clicked?.callLog).toEqual(lines);
    expect(filled?.callLog).toEqual(logOf(typed.message));

    const report = await readFile(await dh.writeReport(), "utf8");
    expect(report).toContain('<ul class="calllog" aria-label="Call log">');
    expect(report).toContain("intercepts pointer events");
    for (const text of [result.message, typed.message, JSON.stringify(history), report])
      expect(text).not.toContain(SECRET);
  });
});
