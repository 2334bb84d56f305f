// The screenshot of a step: the page's viewport as a JPEG, with the values that must not be seen
// (variable values) hidden for the moment of the capture, in the fields that hold them (any length)
// and in the page's text by the library's rule (MIN_SUBSTRING_SECRET characters or more wherever
// they appear, MIN_TEXT_SECRET or more as a word of their own), then shown again. Shared by the
// service's session page and the LOCAL report.

import { randomUUID } from "node:crypto";
import type { Page } from "../browser/page.ts";
import { MIN_SUBSTRING_SECRET, MIN_TEXT_SECRET } from "../log.ts";

export interface StepScreenshotSettings {
  /** JPEG quality, 1-100. Default 60. */
  quality?: number;
  /** Values to hide (variable values). */
  secrets?: readonly string[];
  /** A capture taking longer (a page stuck in a dialog) is given up. Default 3000 ms. */
  timeoutMs?: number;
}

interface MaskState {
  /** Masks in place, by id: each one's undo. */
  undo: Map<string, () => void>;
  /** Fields masked now: how many masks hold each, and its own style to give back. */
  fields: Map<Element, { holders: number; value: string; priority: string }>;
  /** What each mask covers of the page's text: the text nodes and the offsets in them. */
  covered?: Map<string, Map<Node, Set<number>>>;
}

/**
 * Hides `secrets` on the page (see above) until unmaskSecrets(id). Masks may overlap (two captures
 * of one page): a field gets its own style back when the last mask holding it is undone.
 */
function maskSecrets(args: {
  id: string;
  secrets: string[];
  minSubstring: number;
  minText: number;
  /** Only count what shows a value and mask `id` does not cover (the page changed since). */
  check?: boolean;
}): number {
  const { id, secrets, minSubstring, minText, check } = args;
  const host = window as unknown as { __deckhandMasks?: MaskState };
  host.__deckhandMasks ??= { undo: new Map(), fields: new Map() };
  const state = host.__deckhandMasks;
  state.covered ??= new Map();
  const covered = check
    ? (state.covered.get(id) ?? new Map<Node, Set<number>>())
    : new Map<Node, Set<number>>();
  const undo: (() => void)[] = [];
  let hidden = 0;
  let uncovered = 0;
  const PROPERTY = "-webkit-text-security";
  for (const field of Array.from(document.querySelectorAll("input, textarea")) as HTMLInputElement[]) {
    const value = field.value;
    if (!value || !secrets.some((secret) => value.includes(secret))) continue;
    if (check) {
      if (!state.fields.has(field)) uncovered++;
      continue;
    }
    let held = state.fields.get(field);
    if (!held) {
      held = {
        holders: 0,
        value: field.style.getPropertyValue(PROPERTY),
        priority: field.style.getPropertyPriority(PROPERTY),
      };
      state.fields.set(field, held);
      field.style.setProperty(PROPERTY, "disc", "important");
    }
    held.holders++;
    const own = held;
    undo.push(() => {
      if (--own.holders > 0) return;
      state.fields.delete(field);
      field.style.setProperty(PROPERTY, own.value, own.priority);
    });
    hidden++;
  }
  const words = secrets.filter((secret) => secret.length >= minText && secret.length < minSubstring);
  const anywhere = secrets.filter((secret) => secret.length >= minSubstring);
  const highlights = (CSS as unknown as { highlights?: Map<string, unknown> }).highlights;
  const HighlightClass = (window as unknown as { Highlight?: new () => { add(range: Range): void } })
    .Highlight;
  // Every whole occurrence of a value in the page's text (by the library's rule for short values).
  const eachShown = (visit: (node: Node, at: number, length: number) => void) => {
    const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
    const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.nodeValue ?? "";
      for (const secret of [...anywhere, ...words]) {
        let at = text.indexOf(secret);
        while (at >= 0) {
          if (secret.length >= minSubstring || (!isWord(text[at - 1]) && !isWord(text[at + secret.length])))
            visit(node, at, secret.length);
          at = text.indexOf(secret, at + secret.length);
        }
      }
    }
  };
  if (check) {
    // What the mask's ranges do not cover.
    if (words.length > 0 || anywhere.length > 0)
      eachShown((node, at) => {
        if (!covered.get(node)?.has(at)) uncovered++;
      });
    return uncovered;
  }
  if (highlights && HighlightClass && (words.length > 0 || anywhere.length > 0)) {
    const highlight = new HighlightClass();
    eachShown((node, at, length) => {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + length);
      highlight.add(range);
      const offsets = covered.get(node) ?? new Set<number>();
      offsets.add(at);
      covered.set(node, offsets);
      hidden++;
    });
    const name = `deckhand-mask-${id}`;
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(`::highlight(${name}){color:transparent;background-color:#555}`);
    highlights.set(name, highlight);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    undo.push(() => {
      highlights.delete(name);
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
    });
  }
  state.covered.set(id, covered);
  undo.push(() => state.covered?.delete(id));
  state.undo.set(id, () => {
    for (const step of undo) step();
  });
  return hidden;
}

function unmaskSecrets(id: string): void {
  const state = (window as unknown as { __deckhandMasks?: MaskState }).__deckhandMasks;
  const undo = state?.undo.get(id);
  state?.undo.delete(id);
  undo?.();
}

// The viewport at its own size. Not scaled down on purpose: a capture with a scaled `clip` has the
// compositor draw the page at another size, and for a while after it Chromium routes input into
// out-of-process iframes by their scaled positions, so the next click into such a frame was lost
// (reproduced 2 runs in 3 by the REMOTE iframe tests; waiting two animation frames did not cure it).
async function captureNow(page: Page, quality: number): Promise<Buffer> {
  const { data } = await page.session.send("Page.captureScreenshot", {
    format: "jpeg",
    quality,
    optimizeForSpeed: true,
  });
  return Buffer.from(data, "base64");
}

/**
 * The page's viewport as a JPEG, `secrets` hidden, or null when it could not be taken (a closed
 * page, a timeout, a page that could not be masked: no picture rather than one showing the values).
 */
export async function captureStepScreenshot(
  page: Page,
  settings: StepScreenshotSettings = {},
): Promise<Buffer | null> {
  if (page.isClosed()) return null;
  const secrets = settings.secrets ?? [];
  const maskId = randomUUID();
  let timer: NodeJS.Timeout | undefined;
  let stopWatching: (() => void) | undefined;
  const givenUp = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), settings.timeoutMs ?? 3000);
    // A new document in the tab means the page to picture is gone: the picture would show another
    // page, and a capture pending across the commit may never be answered (seen in the service when
    // its client navigates right after an operation: the capture hung until the timeout, and the
    // session's next operation waited for it).
    // The tab's own session: a frame without a parent there is its top document.
    stopWatching = page.session.on("Page.frameNavigated", ({ frame }) => {
      if (!frame.parentId) resolve(null);
    });
  });
  const shot = (async () => {
    // Every frame with a document, iframes (same- or out-of-process) included: a value typed into
    // a field of an iframe shows in the picture as much as one of the top document. A frame that
    // cannot be masked means no picture.
    const frames = secrets.length > 0 ? page.frames().filter((f) => f.hasDocument && !f.detached) : [];
    const masked: typeof frames = [];
    try {
      await Promise.all(
        frames.map(async (frame) => {
          await frame.evaluate(maskSecrets, {
            id: maskId,
            secrets: [...secrets],
            minSubstring: MIN_SUBSTRING_SECRET,
            minText: MIN_TEXT_SECRET,
          });
          masked.push(frame);
        }),
      );
      const picture = await captureNow(page, settings.quality ?? 60);
      // The page may have changed between its masking and the capture (its own script, or a busy
      // machine widening the gap): a value shown since, which no mask covered, may be in the
      // picture. Then there is no picture (a frame that appeared meanwhile is not masked either).
      const now = page.frames().filter((f) => f.hasDocument && !f.detached);
      if (now.some((frame) => !masked.includes(frame)) && secrets.length > 0) return null;
      const uncovered = await Promise.all(
        masked.map((frame) =>
          frame.evaluate(maskSecrets, {
            id: maskId,
            secrets: [...secrets],
            minSubstring: MIN_SUBSTRING_SECRET,
            minText: MIN_TEXT_SECRET,
            check: true,
          }),
        ),
      );
      return uncovered.some((n) => n > 0) ? null : picture;
    } finally {
      await Promise.all(masked.map((frame) => frame.evaluate(unmaskSecrets, maskId).catch(() => undefined)));
    }
  })().catch(() => null);
  try {
    return await Promise.race([shot, givenUp]);
  } finally {
    clearTimeout(timer);
    stopWatching?.();
  }
}
