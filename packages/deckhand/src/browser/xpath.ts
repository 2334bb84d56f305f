// Absolute XPaths across frames: the <iframe> steps from the top document down to a frame, in front
// of the element's own path in its document (injected/xpath.ts writes that one). Deep locators
// split such a path at its iframe steps again (selectors.ts), so whatever selector found an
// element, it is reported and resolved one way.

import type { Frame } from "./frame.ts";
import { domRuntime } from "./in-page.ts";
import type { ElementHandle } from "./injected-script.ts";

/**
 * XPath of the <iframe> chain above a frame ('' for the main frame). `prefixOf` answers for the
 * parent (a caller that names many elements passes a cached one).
 */
export async function frameXPathPrefix(
  frame: Frame,
  prefixOf: (frame: Frame) => Promise<string> = (parent) => frameXPathPrefix(parent),
): Promise<string> {
  const parent = frame.parent;
  if (!parent) return "";
  const owner = await frame.ownerElement();
  try {
    const [above, own] = await Promise.all([prefixOf(parent), parent.invoke(domRuntime, "xpathOf", owner)]);
    return above + own;
  } finally {
    void parent.release(owner);
  }
}

/**
 * The absolute XPath of an element (from the top document, through iframes and shadow roots), in
 * the form snapshot ids map to.
 */
export async function absoluteXPath(frame: Frame, handle: ElementHandle): Promise<string> {
  const [prefix, own] = await Promise.all([
    frameXPathPrefix(frame),
    frame.invoke(domRuntime, "xpathOf", handle),
  ]);
  return prefix + own;
}
