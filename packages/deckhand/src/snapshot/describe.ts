// What the operations need to know about one element, in the outline's terms: what it is (role
// and name as an outline line would show them), which node it is, and its absolute XPath; and the
// note that keeps text typed from `%name%` variables out of later outlines.

import type { Frame } from "../browser/frame.ts";
import type { ElementHandle } from "../browser/injected-script.ts";
import { absoluteXPath } from "../browser/xpath.ts";
import { outlineScript } from "./in-page.ts";

export interface ElementFacts {
  /** Role and accessible name, as the outline gives them. */
  role: string;
  name: string;
  /** The protocol's backend node id. */
  node: number;
  /** Absolute XPath from the top document (through iframes and shadow roots). */
  xpath: string;
}

/** Role, name, node and absolute XPath of an element. */
export async function describeElement(frame: Frame, handle: ElementHandle): Promise<ElementFacts> {
  const [described, node, xpath] = await Promise.all([
    frame.invoke(outlineScript, "describeNode", handle),
    frame.backendNodeId(handle),
    absoluteXPath(frame, handle),
  ]);
  return { ...described, node, xpath };
}

/**
 * Tells the outline what was typed into a field, so that later snapshots show `%name%` where a
 * variable's value is: `before` what the field held ("" when replaced), `typed` the text as written
 * (with its tokens), `secret` whether the text used a variable. What the field holds now is read
 * in the page, the way the outline reads it.
 */
export async function noteTyped(
  frame: Frame,
  handle: ElementHandle,
  text: { before: string; typed: string; secret: boolean },
): Promise<void> {
  await frame.invoke(outlineScript, "noteTyped", handle, text.before, text.typed, text.secret);
}
