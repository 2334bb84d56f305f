// When to stop waiting for an element to be uncovered. A click on a covered element retries until
// its timeout, because covers often go away by themselves (a loading overlay, a toast). A cover
// that stays where it is, on a page where nothing happens (no DOM change, no request of the page's
// scripts, no timer of a young document, no animation), is not going anywhere: a cookie banner
// waits for a person. Such a cover is reported after STILL_COVER_MS instead of the full timeout,
// and a later click on the same frame that meets the same cover on the unchanged page (the
// self-heal's, the model's second choice) is told at once: it has been waited for already.

import type { CoverState } from "./injected/hit-test.ts";

/** How long a cover must stay still, on a page where nothing happens, to be reported. */
export const STILL_COVER_MS = 1_000;

interface Sighting {
  detail: string;
  scene: string;
}

/** The still cover last reported per frame (its scene names the document it was seen in). */
const reported = new WeakMap<object, Sighting>();

/** One click's watch over the covers it meets, in one frame. */
export class CoverWatch {
  private first: (Sighting & { at: number }) | undefined;
  private readonly frame: object;

  /** `frame`: the frame of the element (the covers a click meets are in its document). */
  constructor(frame: object) {
    this.frame = frame;
  }

  /**
   * Whether to report the cover now: it was already reported still here, on the same page; or it
   * has stayed the same, with nothing under way, for STILL_COVER_MS.
   */
  still(detail: string | undefined, cover: CoverState | undefined, now = Date.now()): boolean {
    if (detail === undefined || !cover || cover.busy) {
      this.first = undefined;
      return false;
    }
    const known = reported.get(this.frame);
    if (known && known.detail === detail && known.scene === cover.scene) return true;
    if (!this.first || this.first.detail !== detail || this.first.scene !== cover.scene) {
      this.first = { detail, scene: cover.scene, at: now };
      return false;
    }
    if (now - this.first.at < STILL_COVER_MS) return false;
    reported.set(this.frame, { detail, scene: cover.scene });
    return true;
  }
}
