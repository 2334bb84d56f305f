// Shared by the browser-layer tests: one browser and one fixture site per file, pages opened
// fresh where state would leak, and a teardown that proves the browser left nothing behind.

import { leftoverTempDirs, waitForNoChrome } from "@deckhand/testkit";
import type { Page } from "deckhand";
import { expect } from "vitest";
import { TEMP_PROFILE_PREFIX } from "../../src/browser/launch.ts";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";

export type { BrowserFixture };

/** Starts the file's browser and fixture site (call in beforeAll). */
export function openFixture(): Promise<BrowserFixture> {
  return browserFixture();
}

/**
 * Closes the file's browser and site, then checks that no Chrome process of that browser is
 * left and that its temporary profile is gone (call in afterAll).
 */
export async function closeFixture(fixture: BrowserFixture | undefined): Promise<void> {
  if (!fixture) return;
  const launched = fixture.dh.context.browser.launched;
  await fixture.close();
  if (!launched) return;
  expect(await waitForNoChrome(launched.userDataDir)).toEqual([]);
  // Only this browser's profile: other files' browsers may be running at the same time.
  expect(leftoverTempDirs(TEMP_PROFILE_PREFIX)).not.toContain(launched.userDataDir);
}

/** A new tab on `path` of the fixture site (the main site unless a full URL is given). */
export async function openPage(fixture: BrowserFixture, path: string): Promise<Page> {
  const page = await fixture.dh.context.newPage();
  await page.goto(path.includes("://") ? path : fixture.site.url(path));
  return page;
}

/**
 * Loads `path` in an existing tab: a fresh document for a test, at a fraction of a new tab's cost.
 * The mouse is parked in the corner first, so that the new document is not hovered where the last
 * test left the pointer.
 */
export async function visit(fixture: BrowserFixture, page: Page, path: string): Promise<Page> {
  await page.mouse.move(0, 0);
  await page.goto(path.includes("://") ? path : fixture.site.url(path));
  return page;
}

/** Closes every tab but the ones to keep, so that tests do not pile up open pages. */
export async function closeOtherPages(fixture: BrowserFixture, ...keep: Page[]): Promise<void> {
  await Promise.all(
    fixture.dh.context
      .pages()
      .filter((p) => !keep.includes(p))
      .map((p) => p.close()),
  );
}

/** The text of an element of the main document, read straight from the DOM. */
export function textOf(page: Page, selector: string): Promise<string | null> {
  return page.evaluate((s: string) => document.querySelector(s)?.textContent ?? null, selector);
}

/**
 * Polls `read` until it returns something `accept`s (or the time is up), and returns the last value.
 * The default limit is one only a stall reaches: waiting ends as soon as the value is accepted, so a
 * longer limit costs a passing test nothing, and a busy machine can take seconds for a frame to load.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() >= deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}
