// The record-time locator check of an element (injected/locators.ts does the counting in the page):
// the locators that matched it alone in its frame, and the <iframe> chain above that frame, each
// link a CSS selector unique in its own parent. The in-page count is made with the element's
// description when an act finds its element (describe.ts targetAt: no evaluation of its own);
// otherwise one evaluation in the element's frame. Plus one per iframe above it.

import type { Frame } from "../browser/frame.ts";
import type { ElementHandle } from "../browser/injected-script.ts";
import type { StepLocators } from "../types.ts";
import { stepScript } from "./in-page.ts";
import type { Locators } from "./injected/locators.ts";

/** What the in-page check found for one element, before the frame chain and the secrets. */
export type Located = ReturnType<Locators["locate"]>;

/**
 * What locators address the element and nothing else: `located`, what the in-page check found
 * when the element was described, or else asked for now on `handle()`. `shows`: whether a text
 * would show a secret (a variable's value typed into the page can be in a name or a text): such a
 * locator is dropped, so that no exported script holds the value.
 */
export async function recordLocators(
  frame: Frame,
  element: { located?: Located | undefined; handle: () => Promise<ElementHandle> },
  shows: (text: string) => boolean,
): Promise<StepLocators> {
  const [own, frames] = await Promise.all([
    element.located ?? element.handle().then((handle) => frame.invoke(stepScript, "locate", handle, [])),
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
      parent.invoke(stepScript, "frameSelector", owner),
    ]);
    if (above === undefined || own === null) return undefined;
    return [...above, own];
  } finally {
    void parent.release(owner);
  }
}
