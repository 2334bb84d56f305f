// The absolute XPath of an element, written and read in one place. The form: one step per element
// from the top of its document (`/html[1]/body[1]/div[2]`), where `//` after a step enters the
// shadow root of the element before it (`/html[1]/body[1]/x-card[1]//button[1]`). Deckhand writes
// it for every element it names (snapshot ids, observe's Actions) and resolves it here without
// the browser's XPath engine; across frames, the Node side (browser/xpath.ts) puts the <iframe>
// steps in front and browser/selectors.ts splits them off again.
//
// Self-contained: `installXPath` is sent to the page as source text.

import type { InPageFailure } from "./dom-runtime.ts";
import type { ShadowAccess } from "./shadow-access.ts";

export function installXPath(shadow: ShadowAccess) {
  const { shadowRootOf } = shadow;

  /**
   * Steps (`name[index]`) of elements, remembered while `withStepCache` runs: each parent's
   * children are counted once, so naming thousands of siblings stays linear.
   */
  let stepCache: Map<Element, string> | undefined;

  function stepName(el: Element): string {
    return el.namespaceURI === "http://www.w3.org/1999/xhtml" ? el.localName : `*[name()='${el.localName}']`;
  }

  function step(el: Element): string {
    if (!el.parentNode) return stepName(el);
    const cached = stepCache?.get(el);
    if (cached) return cached;
    if (stepCache) {
      const counts = new Map<string, number>();
      for (let s = el.parentNode.firstChild; s; s = s.nextSibling) {
        if (!(s instanceof Element)) continue;
        const n = (counts.get(s.localName) ?? 0) + 1;
        counts.set(s.localName, n);
        stepCache.set(s, `${stepName(s)}[${n}]`);
      }
      return stepCache.get(el)!;
    }
    let index = 1;
    for (let s = el.previousElementSibling; s; s = s.previousElementSibling)
      if (s.localName === el.localName) index++;
    return `${stepName(el)}[${index}]`;
  }

  /** `/html[1]/body[1]/x-card[1]//button[1]`: `//` enters the shadow root of the element before it. */
  function xpathOf(el: Element): string {
    const parts: string[] = [];
    let node: Element | null = el;
    while (node) {
      const parent: Node | null = node.parentNode;
      if (parent instanceof ShadowRoot) {
        parts.push(`//${step(node)}`);
        node = parent.host;
      } else {
        parts.push(`/${step(node)}`);
        node = parent instanceof Element ? parent : null;
      }
    }
    return parts.reverse().join("");
  }

  const SIMPLE_STEP = /^(?:([a-zA-Z][\w.-]*)|\*\[name\(\)='([^']+)'\])(?:\[(\d+)\])?$/;

  /**
   * Resolves a path of the form xpathOf writes (also without indexes). Undefined when the path is
   * of another form (the browser's XPath engine takes those); null when it leads nowhere.
   */
  function resolve(xpath: string): Element | null | undefined | InPageFailure {
    if (!xpath.startsWith("/") || xpath.startsWith("//")) return undefined;
    const parts = xpath.slice(1).split("/");
    let node: Document | ShadowRoot | Element = document;
    let enterShadow = false;
    for (const part of parts) {
      if (part === "") {
        if (enterShadow) return undefined;
        enterShadow = true;
        continue;
      }
      const match = SIMPLE_STEP.exec(part);
      if (!match) return undefined;
      if (enterShadow) {
        if (!(node instanceof Element)) return undefined;
        const shadow = shadowRootOf(node);
        if (!shadow) return { failed: "shadow-root-missing", detail: node.localName };
        node = shadow;
        enterShadow = false;
      }
      const name = (match[1] ?? match[2] ?? "").toLowerCase();
      const index = match[3] ? Number(match[3]) : 1;
      let seen = 0;
      let found: Element | null = null;
      for (let c: Element | null = node.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName.toLowerCase() === name && ++seen === index) {
          found = c;
          break;
        }
      }
      if (!found) return null;
      node = found;
    }
    return node instanceof Element ? node : null;
  }

  return {
    xpathOf,
    resolve,

    /** Runs `fn` with the step cache on (for naming many elements at once). */
    withStepCache<R>(fn: () => R): R {
      stepCache = new Map();
      try {
        return fn();
      } finally {
        stepCache = undefined;
      }
    },
  };
}

export type XPathAccess = ReturnType<typeof installXPath>;
