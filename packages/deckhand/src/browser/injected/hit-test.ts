// Where a click lands: the point of an element that a real click should use (scrolled into view,
// not covered by anything but its own content or its label), what is at a point, where an
// iframe's content starts, and whether the pointer reaches this document at all yet.
//
// Self-contained: `installHitTest` is sent to the page as source text.

import type { ComposedTree } from "./composed-tree.ts";
import type { ElementReads } from "./element-reads.ts";
import type { Quietness } from "./quiet.ts";
import type { ShadowAccess } from "./shadow-access.ts";

export interface ClickPoint {
  x: number;
  y: number;
}

export type PointResult =
  | ({ ok: true } & ClickPoint)
  | {
      ok: false;
      reason: "detached" | "not-visible" | "covered" | "disabled";
      detail?: string;
      cover?: CoverState;
    };

/**
 * What a covered element's page looked like (see still-cover.ts): where the cover is, how many
 * changes the document has had and which document it is, and whether anything under way (a
 * request, a young document's timer, an animation) may yet move it.
 */
export interface CoverState {
  scene: string;
  busy: boolean;
}

export function installHitTest(
  shadow: ShadowAccess,
  tree: ComposedTree,
  reads: ElementReads,
  quietness: Quietness,
) {
  const { shadowRootOf } = shadow;
  const { composedContains } = tree;
  const { describe, isVisible, isDisabled } = reads;
  // Mouse moves that reached this document: tells Deckhand whether the browser routes the pointer
  // at a point to this frame yet (see Locator's pointerReaches).
  let mouseMoves = 0;
  addEventListener(
    "mousemove",
    () => {
      mouseMoves++;
    },
    { capture: true, passive: true },
  );

  // The pointer check armed with a click's action point (see ActionableLocator.pointerGesture):
  // between the hit test and the press the page can still move (late content above, a hover
  // effect on the first mouse move), and the press would land on whatever is at the old point now.
  // The first trusted event of the gesture must reach the target; for a click ("click" kind) so
  // must every press and release after it while the target stays in the document at a place it
  // moved to since the hit test, since a release elsewhere sends the click to what the two have in
  // common instead. A page that replaces its button on the press, or opens something over a button
  // that stays where it was (a menu, a pressed look), is left alone: that release goes where the
  // page meant it to, and holding it back would press the button again. The first that misses is
  // stopped with the rest of the gesture before any of the page's own listeners see them (ours are
  // on the window, capturing), and `hit` says what it reached. One check per document at a time;
  // the listeners stay, and cost a comparison while nothing is armed.
  let armed: {
    target: Element;
    kind: "click" | "press";
    hit: string | null | undefined;
    /** Where the target was at the hit test (viewport px). */
    at: { x: number; y: number };
  } | null = null;
  const moved = (target: Element, at: { x: number; y: number }) => {
    const rect = target.getBoundingClientRect();
    return Math.abs(rect.left - at.x) > 0.5 || Math.abs(rect.top - at.y) > 0.5;
  };
  const onGesture = (event: Event) => {
    if (!armed || !event.isTrusted) return;
    const again =
      armed.hit === null &&
      armed.kind === "click" &&
      PRESSES.has(event.type) &&
      armed.target.isConnected &&
      moved(armed.target, armed.at);
    if (armed.hit === undefined || again) armed.hit = interceptor(armed.target, event as MouseEvent);
    if (armed.hit === null) return;
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  // The events of a press and release (a double click is two), and the ones hit-tested anew.
  const PRESSES = new Set(["pointerdown", "mousedown", "pointerup", "mouseup"]);
  for (const type of [
    "pointerdown",
    "mousedown",
    "pointerup",
    "mouseup",
    "click",
    "auxclick",
    "dblclick",
    "contextmenu",
  ])
    addEventListener(type, onGesture, { capture: true });

  /** What the event reached instead of `target` (its description), or null if it reached it. */
  function interceptor(target: Element, event: MouseEvent): string | null {
    const path = event.composedPath();
    if (path.includes(target)) return null;
    if (path.some((n) => n instanceof HTMLLabelElement && n.control === target)) return null;
    // A target inside a closed shadow root is not in the path the window sees (it ends at the
    // host): what is at the event's point, found through the roots Deckhand knows, tells.
    const deepest = path[0] instanceof Element ? path[0] : null;
    if (deepest && composedContains(deepest, target)) {
      const hit = deepElementFromPoint(event.clientX, event.clientY);
      if (hit && (composedContains(target, hit) || isLabelFor(hit, target))) return null;
      return describe(hit ?? deepest);
    }
    return describe(deepest);
  }

  function deepElementFromPoint(x: number, y: number): Element | null {
    let el = document.elementFromPoint(x, y);
    while (el) {
      const shadow = shadowRootOf(el);
      if (!shadow) break;
      const inner = shadow.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    return el;
  }

  function scrollIntoViewIfNeeded(el: Element): void {
    const rect = el.getBoundingClientRect();
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const inView = rect.top >= 0 && rect.left >= 0 && rect.bottom <= vh && rect.right <= vw;
    if (!inView) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  }

  /**
   * The point a real click on `el` should land on, after scrolling it into view. With `arm`, a
   * point found also arms the pointer check of that kind for `el` (disarmHitCheck reads it).
   */
  function actionPoint(el: Element, checkEnabled: boolean, arm?: "click" | "press"): PointResult {
    const point = findPoint(el, checkEnabled);
    if (arm && point.ok) {
      const rect = el.getBoundingClientRect();
      armed = { target: el, kind: arm, hit: undefined, at: { x: rect.left, y: rect.top } };
    }
    return point;
  }

  function findPoint(el: Element, checkEnabled: boolean): PointResult {
    if (!el.isConnected) return { ok: false, reason: "detached" };
    if (checkEnabled && isDisabled(el)) return { ok: false, reason: "disabled" };
    // Hidden elements (display, visibility, no size) would otherwise look "covered" by whatever
    // is at their place.
    if (!isVisible(el)) return { ok: false, reason: "not-visible" };
    scrollIntoViewIfNeeded(el);
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    let hitBy: Element | null = null;
    for (const rect of el.getClientRects()) {
      const left = Math.max(rect.left, 0);
      const top = Math.max(rect.top, 0);
      const right = Math.min(rect.right, vw);
      const bottom = Math.min(rect.bottom, vh);
      if (right - left < 1 || bottom - top < 1) continue;
      // The centre first; then points inset from the corners, for elements partly covered.
      const candidates: [number, number][] = [
        [(left + right) / 2, (top + bottom) / 2],
        [left + (right - left) * 0.25, top + (bottom - top) * 0.25],
        [left + (right - left) * 0.75, top + (bottom - top) * 0.75],
        [left + (right - left) * 0.25, top + (bottom - top) * 0.75],
        [left + (right - left) * 0.75, top + (bottom - top) * 0.25],
      ];
      for (const [x, y] of candidates) {
        const hit = deepElementFromPoint(x, y);
        if (hit && (composedContains(el, hit) || isLabelFor(hit, el))) return { ok: true, x, y };
        if (!hitBy) hitBy = hit;
      }
    }
    if (!hitBy) return { ok: false, reason: "not-visible" };
    return { ok: false, reason: "covered", detail: describe(hitBy), cover: coverState(hitBy) };
  }

  function coverState(cover: Element): CoverState {
    const r = cover.getBoundingClientRect();
    const q = quietness.quiet();
    return {
      // The document's own start time tells one document from the next the frame shows.
      scene: `${Math.round(r.left)},${Math.round(r.top)},${Math.round(r.width)},${Math.round(r.height)} #${q.changes} @${performance.timeOrigin}`,
      busy:
        q.readyState === "loading" ||
        q.requests > 0 ||
        q.timersDue !== null ||
        document.getAnimations().some((a) => a.playState === "running"),
    };
  }

  /** Where the content box of an iframe starts, in this document's viewport. */
  function frameContentOffset(el: Element): { x: number; y: number } {
    const rect = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return {
      x: rect.left + el.clientLeft + Number.parseFloat(style.paddingLeft),
      y: rect.top + el.clientTop + Number.parseFloat(style.paddingTop),
    };
  }

  /** A click on a <label> lands on its control, so a label covering its own input is no obstacle. */
  function isLabelFor(hit: Element, el: Element): boolean {
    const label = hit.closest("label");
    return Boolean(label && (label as HTMLLabelElement).control === el);
  }

  return {
    actionPoint,

    /**
     * Ends the pointer check actionPoint armed: what the gesture hit instead of its target, or
     * null (it reached the target, nothing reached this document, or nothing was armed).
     */
    disarmHitCheck(): string | null {
      const hit = armed?.hit ?? null;
      armed = null;
      return hit;
    },

    /** Whether a click at (x, y) of this document would reach `el` (used for iframe owners). */
    hits(el: Element, x: number, y: number): string | null {
      const hit = deepElementFromPoint(x, y);
      return hit && composedContains(el, hit) ? null : describe(hit);
    },

    frameContentOffset,

    /**
     * Scrolls this document, if needed, until the point (x, y) of an iframe's content is in view
     * (a click in a frame below the fold); returns frameContentOffset afterwards, and whether it
     * scrolled.
     */
    revealFramePoint(el: Element, x: number, y: number): { x: number; y: number; scrolled: boolean } {
      const inView = (o: { x: number; y: number }) =>
        o.x + x >= 0 && o.x + x < window.innerWidth && o.y + y >= 0 && o.y + y < window.innerHeight;
      let offset = frameContentOffset(el);
      if (inView(offset)) return { ...offset, scrolled: false };
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      offset = frameContentOffset(el);
      // An iframe taller than the viewport: bring the point itself to the middle.
      if (!inView(offset)) {
        window.scrollBy(offset.x + x - window.innerWidth / 2, offset.y + y - window.innerHeight / 2);
        offset = frameContentOffset(el);
      }
      return { ...offset, scrolled: true };
    },

    /** How many mouse moves have reached this document since the runtime was installed. */
    mouseMoves(): number {
      return mouseMoves;
    },

    /** Resolves once the page has drawn two more frames (or after 100 ms in a tab that does not draw). */
    nextFrames(): Promise<void> {
      return new Promise((resolve) => {
        setTimeout(resolve, 100);
        requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
      });
    },
  };
}

export type HitTest = ReturnType<typeof installHitTest>;
