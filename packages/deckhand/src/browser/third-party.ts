// Pages from Playwright, Puppeteer or Patchright connected to the same browser are accepted
// wherever a page is: each library can open a protocol session on its page, and that session
// names the target, which is also a Deckhand page.

import { ServiceInvalidArgumentError, ServiceTargetClosedError } from "../errors.ts";
import type { Browser } from "./browser.ts";
import { Page } from "./page.ts";

/** Anything that can be used where a page is expected: a Deckhand page, or a Playwright,
 * Puppeteer or Patchright page connected to the same browser. */
export type AnyPage = Page | { url(): string };

interface ProtocolSession {
  send(method: "Target.getTargetInfo"): Promise<{ targetInfo: { targetId: string } }>;
  detach(): Promise<void>;
}

/** Playwright and Patchright: page.context().newCDPSession(page). */
interface PlaywrightLikePage {
  context(): { newCDPSession(page: unknown): Promise<ProtocolSession> };
}

/** Puppeteer: page.createCDPSession(). */
interface PuppeteerLikePage {
  createCDPSession(): Promise<ProtocolSession>;
}

const known = new WeakMap<object, string>();

function isPlaywrightLike(page: object): page is PlaywrightLikePage {
  return typeof (page as PlaywrightLikePage).context === "function";
}

function isPuppeteerLike(page: object): page is PuppeteerLikePage {
  return typeof (page as PuppeteerLikePage).createCDPSession === "function";
}

async function targetIdOf(page: object): Promise<string> {
  const cached = known.get(page);
  if (cached) return cached;
  let session: ProtocolSession;
  if (isPuppeteerLike(page)) session = await page.createCDPSession();
  else if (isPlaywrightLike(page)) session = await page.context().newCDPSession(page);
  else {
    throw new ServiceInvalidArgumentError(
      "`page` must be a Deckhand page or a Playwright, Puppeteer or Patchright page (connected to the same browser).",
    );
  }
  try {
    const { targetInfo } = await session.send("Target.getTargetInfo");
    known.set(page, targetInfo.targetId);
    return targetInfo.targetId;
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/** The Deckhand page for any supported page object. */
export async function resolvePage(browser: Browser, page: AnyPage): Promise<Page> {
  if (page instanceof Page) return page;
  if (!page || typeof page !== "object") {
    throw new ServiceInvalidArgumentError(
      `\`page\` must be a page object, got ${page === null ? "null" : typeof page}.`,
    );
  }
  const targetId = await targetIdOf(page);
  const ours =
    browser.pageByTargetId(targetId) ?? (await browser.waitForPage(targetId, 2_000).catch(() => undefined));
  if (!ours) {
    throw new ServiceTargetClosedError(
      "That page is not in Deckhand's browser. Connect the other library to the same browser " +
        "(for example playwright's chromium.connectOverCDP(deckhand.connectURL())).",
    );
  }
  return ours;
}
