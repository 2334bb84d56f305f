// Deckhand's in-page helpers for locating elements and preparing input, as one object that
// locators, input and settle call by method name. Installed once per execution context
// (Frame.invoke) and called through the DevTools protocol. Each job is a module of its own, given
// here installed (browser/in-page.ts composes them): the composed tree, the selector engines, what
// an element is like (element-reads.ts), where a click lands (hit-test.ts), the changes input
// needs (element-changes.ts), reachability for explicit instructions, and the page's quiet state.
// This file keeps the closed shadow roots found through the protocol, and the runtime's methods.
//
// Self-contained: `installDomRuntime` is sent to the page as source text, so it may not use
// imports or anything outside its own body.

import type { FailureReason } from "../../errors.ts";
import type { ComposedTree } from "./composed-tree.ts";
import type { ElementChanges } from "./element-changes.ts";
import type { ElementReads } from "./element-reads.ts";
import type { HitTest } from "./hit-test.ts";
import type { Quietness } from "./quiet.ts";
import type { Reachability } from "./reachability.ts";
import type { SelectorEngines } from "./selector-engines.ts";
import type { ShadowAccess } from "./shadow-access.ts";
import type { XPathAccess } from "./xpath.ts";

export type { ElementState } from "./element-reads.ts";
export type { ClickPoint, PointResult } from "./hit-test.ts";
export type { SelectorKind } from "./selector-engines.ts";

/** Why an in-page step could not be done, with a short description of the element for messages. */
export interface InPageFailure {
  failed: FailureReason;
  detail: string;
}

export function isInPageFailure(value: unknown): value is InPageFailure {
  return typeof value === "object" && value !== null && typeof (value as InPageFailure).failed === "string";
}

export function installDomRuntime(
  shadow: ShadowAccess,
  xpaths: XPathAccess,
  quietness: Quietness,
  tree: ComposedTree,
  engines: SelectorEngines,
  reads: ElementReads,
  hitTest: HitTest,
  changes: ElementChanges,
  reachability: Reachability,
) {
  const { shadowRootOf, mayHideClosedRoot, closedRoots, checkedHosts } = shadow;
  const { walk } = tree;

  return {
    ...engines,
    ...reads,
    ...hitTest,
    ...changes,
    ...reachability,

    /** The element's absolute XPath in this document (see xpath.ts). */
    xpathOf: xpaths.xpathOf,

    /** Registers a closed shadow root found through the protocol, so queries can enter it. */
    registerClosedRoot(host: Element, root: ShadowRoot): void {
      closedRoots.set(host, root);
    },

    /** Custom elements with no shadow root known to this runtime: candidates for a closed root. */
    unknownHosts(): Element[] {
      const out: Element[] = [];
      for (const el of walk(document)) if (!shadowRootOf(el) && mayHideClosedRoot(el)) out.push(el);
      return out;
    },

    /** Remembers that a host was asked about, so it is not asked about again. */
    markHostChecked(host: Element): void {
      checkedHosts.add(host);
    },

    /** How far the document has come and whether it is still changing (see quiet.ts). */
    quiet: quietness.quiet,

    isFrameOwner(el: Element): boolean {
      return el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement;
    },
  };
}

export type DomRuntime = ReturnType<typeof installDomRuntime>;
