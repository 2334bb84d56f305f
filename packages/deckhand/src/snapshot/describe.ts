// What the operations need to know about one element, in the outline's terms: what it is (role
// and name as an outline line would show them), which node it is (an element target: frame and
// backend node id), and, where it is the product, its absolute XPath; and the note that keeps
// text typed from `%name%` variables out of later outlines.

import type { ElementTarget } from "../browser/element-target.ts";
import { targetOf } from "../browser/element-target.ts";
import type { Frame } from "../browser/frame.ts";
import type { ElementHandle } from "../browser/injected-script.ts";
import type { TimeoutOption } from "../browser/locator.ts";
import type { Page } from "../browser/page.ts";
import { frameXPathPrefix } from "../browser/xpath.ts";
import { outlineScript, stepScript } from "./in-page.ts";
import type { Located } from "./locators.ts";

/**
 * An element found once (frame and backend node id, with the handle that found it) and what the
 * outline calls it. This is what snapshot/ hands to ops/ and ops/ hands to the browser
 * (page.locatorFor): one resolution per action. Whoever got it releases it (releaseTarget).
 */
export interface Target extends ElementTarget {
  /** Role and accessible name, as the outline gives them: what identity checks compare. */
  readonly role: string;
  readonly name: string;
  /**
   * Absolute XPath from the top document (through iframes and shadow roots), present when it was
   * asked for: it is the product where a result, the action cache or a replay names the element.
   */
  readonly xpath?: string;
  /**
   * The record-time locator check's in-page count (locators.ts), made in the same evaluation as
   * the role and name when it was asked for (`locators`): the element a step is about to act on.
   */
  readonly located?: Located;
}

export interface ElementFacts {
  /** Role and accessible name, as the outline gives them. */
  role: string;
  name: string;
  /** The protocol's backend node id. */
  node: number;
  /** Absolute XPath from the top document (through iframes and shadow roots). */
  xpath: string;
}

/** What to find out about an element besides its role and name (each in the same evaluation). */
export interface DescribeOptions {
  /** Its absolute XPath. */
  xpath: boolean;
  /**
   * The record-time locator check's in-page count (for a step about to act on it): made here, in
   * the evaluation that reads the role and name, it costs no command of its own.
   */
  locators?: boolean;
}

/**
 * The target of an element a handle points at. The handle becomes the target's. Two commands
 * (role and name, with the XPath and the locator check in the same call when asked for; the
 * backend node id), plus the iframe chain's XPath for an element in a child frame, and once per
 * document the installation of the locator check (in-page.ts stepScript).
 */
export async function describeTarget(
  frame: Frame,
  handle: ElementHandle,
  options: DescribeOptions,
): Promise<Target> {
  const describing: Promise<{ role: string; name: string; xpath?: string; located?: Located }> =
    options.locators
      ? frame.invoke(stepScript, "describeForStep", handle, options.xpath)
      : frame.invoke(outlineScript, "describeNode", handle, options.xpath);
  const [described, target, prefix] = await Promise.all([
    describing,
    targetOf(frame, handle),
    options.xpath ? frameXPathPrefix(frame) : undefined,
  ]);
  const located = described.located;
  return {
    ...target,
    role: described.role,
    name: described.name,
    ...(options.xpath ? { xpath: (prefix ?? "") + (described.xpath ?? "") } : {}),
    ...(located ? { located } : {}),
  };
}

/**
 * The target of what `selector` (any selector a deep locator takes) leads to now, found once
 * within `wait`. Rejects as the locator does when nothing is there.
 */
export async function targetAt(
  page: Page,
  selector: string,
  wait: TimeoutOption,
  options: DescribeOptions,
): Promise<Target> {
  const { frame, handle } = await page.deepLocator(selector).resolve(wait);
  try {
    return await describeTarget(frame, handle, options);
  } catch (error) {
    void frame.release(handle);
    throw error;
  }
}

/** Role, name, node and absolute XPath of an element (the handle stays the caller's). */
export async function describeElement(frame: Frame, handle: ElementHandle): Promise<ElementFacts> {
  const [described, node, prefix] = await Promise.all([
    frame.invoke(outlineScript, "describeNode", handle, true),
    frame.backendNodeId(handle),
    frameXPathPrefix(frame),
  ]);
  return { role: described.role, name: described.name, node, xpath: prefix + (described.xpath ?? "") };
}

/**
 * Tells the outline what was typed into a field, so that later snapshots show `%name%` where a
 * variable's value is: `before` what the field held ("" when replaced), `typed` the text as written
 * (with its tokens), `secret` whether the text used a variable. What the field holds now is read
 * in the page, the way the outline reads it. False when the element has left the page (nothing
 * was noted).
 */
export async function noteTyped(
  frame: Frame,
  handle: ElementHandle,
  text: { before: string; typed: string; secret: boolean },
): Promise<boolean> {
  return frame.invoke(outlineScript, "noteTyped", handle, text.before, text.typed, text.secret);
}
