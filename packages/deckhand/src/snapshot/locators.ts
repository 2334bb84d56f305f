// The record-time locator check of an element (injected/locators.ts does the counting in the page):
// the locators that matched it alone in its frame, and the <iframe> chain above that frame, each
// link a CSS selector unique in its own parent. One evaluation in the element's frame, plus one
// per iframe above it.

import type { Frame } from "../browser/frame.ts";
import type { ElementHandle } from "../browser/injected-script.ts";
import type { StepLocators } from "../types.ts";
import { locatorScript } from "./in-page.ts";

/**
 * What locators address the element behind `handle` and nothing else. `shows`: whether a text
 * would show a secret (a variable's value typed into the page can be in a name or a text): such a
 * locator is dropped, so that no exported script holds the value.
 */
export async function recordLocators(
  frame: Frame,
  handle: ElementHandle,
  shows: (text: string) => boolean,
): Promise<StepLocators> {
  const [own, frames] = await Promise.all([
    frame.invoke(locatorScript, "locate", handle, []),
    frameChain(frame),
  ]);
  const { tag } = own;
  if (frames === undefined || frames.some(shows))
    return { tag, frames: [], candidates: [], unaddressable: "only its position tells its frame apart" };
  const candidates = own.candidates.filter((c) => !Object.values(c).some((v) => shows(v)));
  if (own.unaddressable) return { tag, frames, candidates, unaddressable: own.unaddressable };
  if (candidates.length === 0)
    return {
      tag,
      frames,
      candidates,
      unaddressable: "every locator that tells it apart shows a variable's value",
    };
  return { tag, frames, candidates };
}

/** The <iframe> selectors from the top document down to `frame`; undefined when one has none. */
async function frameChain(frame: Frame): Promise<string[] | undefined> {
  const parent = frame.parent;
  if (!parent) return [];
  const owner = await frame.ownerElement();
  try {
    const [above, own] = await Promise.all([
      frameChain(parent),
      parent.invoke(locatorScript, "frameSelector", owner),
    ]);
    if (above === undefined || own === null) return undefined;
    return [...above, own];
  } finally {
    void parent.release(owner);
  }
}
