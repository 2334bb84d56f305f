// Functions the computer sends into the page (Runtime.callFunctionOn through page.evaluate): they
// run there, so they use nothing from this module's scope.

/** The attribute that marks a field a variable's value was typed into. */
export const SECRET_ATTRIBUTE = "data-deckhand-secret";

/** Marks the element that has the keyboard focus (through shadow roots and same-origin frames). */
export function markFocusedField(attribute: string): boolean {
  let doc: Document = document;
  let el: Element | null = doc.activeElement;
  for (;;) {
    const shadowActive = el?.shadowRoot?.activeElement;
    if (shadowActive) {
      el = shadowActive;
      continue;
    }
    if (el instanceof HTMLIFrameElement) {
      try {
        const inner = el.contentDocument;
        if (inner?.activeElement) {
          doc = inner;
          el = inner.activeElement;
          continue;
        }
      } catch {
        // A cross-origin frame: its field cannot be marked from here.
      }
    }
    break;
  }
  if (!el || el === doc.body || el === doc.documentElement) return false;
  el.setAttribute(attribute, "");
  return true;
}

/**
 * Shows (on) or stops showing (off) the marked fields' text as discs, in this document and the
 * same-origin frames in it: on just before a screenshot, off right after.
 */
export function setSecretMask(options: { attribute: string; on: boolean }): void {
  const id = "__deckhand_secret_mask";
  const apply = (doc: Document) => {
    doc.getElementById(id)?.remove();
    if (options.on && doc.querySelector(`[${options.attribute}]`)) {
      const style = doc.createElement("style");
      style.id = id;
      style.textContent = `[${options.attribute}] { -webkit-text-security: disc !important; }`;
      (doc.head ?? doc.documentElement).appendChild(style);
    }
    for (const frame of Array.from(doc.querySelectorAll("iframe"))) {
      try {
        if (frame.contentDocument) apply(frame.contentDocument);
      } catch {
        // cross-origin
      }
    }
  };
  apply(document);
}

/** A dot where the pointer is, so a person watching (or a recording) sees what the model does. */
export function drawCursor(point: { x: number; y: number }): void {
  const id = "__deckhand_cua_cursor";
  let dot = document.getElementById(id);
  if (!dot) {
    dot = document.createElement("div");
    dot.id = id;
    dot.setAttribute("aria-hidden", "true");
    dot.style.cssText =
      "position:fixed;width:14px;height:14px;margin:-7px 0 0 -7px;border-radius:50%;" +
      "background:rgba(255,0,80,.55);border:2px solid #fff;pointer-events:none;z-index:2147483647";
    document.documentElement.appendChild(dot);
  }
  dot.style.left = `${point.x}px`;
  dot.style.top = `${point.y}px`;
}

interface ScrollWatch {
  scrolls: number;
  ends: number;
}

/** Starts counting scroll and scrollend events (anywhere in the document) before a wheel event is sent. */
export function watchScroll(): void {
  const w = window as unknown as { __deckhandScroll?: ScrollWatch; __deckhandScrollHooked?: boolean };
  w.__deckhandScroll = { scrolls: 0, ends: 0 };
  if (w.__deckhandScrollHooked) return;
  w.__deckhandScrollHooked = true;
  addEventListener("scroll", () => w.__deckhandScroll && w.__deckhandScroll.scrolls++, true);
  addEventListener("scrollend", () => w.__deckhandScroll && w.__deckhandScroll.ends++, true);
}

/**
 * Resolves once the scroll a wheel event started has ended (and been painted), or soon when
 * nothing scrolled, or after `timeoutMs`: a screenshot taken then shows where the page went.
 */
export async function scrollSettled(timeoutMs: number): Promise<void> {
  const w = window as unknown as { __deckhandScroll?: ScrollWatch };
  const started = performance.now();
  const frame = () =>
    new Promise<void>((resolve) => {
      requestAnimationFrame(() => resolve());
      setTimeout(resolve, 50);
    });
  for (;;) {
    await frame();
    const state = w.__deckhandScroll;
    const elapsed = performance.now() - started;
    if (!state || elapsed > timeoutMs) return;
    if (state.ends > 0) {
      await frame();
      return;
    }
    if (state.scrolls === 0 && elapsed > 150) return;
  }
}

/** Resolves after the page has drawn two more frames (or 100 ms, for a page that draws none). */
export function nextFrames(): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, 100);
    requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
  });
}
