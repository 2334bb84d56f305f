// The selector engines of Deckhand's locators, each through open and closed shadow roots: CSS,
// XPath (Deckhand's own absolute form resolved by xpath.ts, any other by the browser's engine) and
// `text=` (the innermost elements whose text matches).
//
// Self-contained: `installSelectorEngines` is sent to the page as source text.

import type { ComposedTree } from "./composed-tree.ts";
import type { InPageFailure } from "./dom-runtime.ts";
import type { XPathAccess } from "./xpath.ts";

export type SelectorKind = "css" | "xpath" | "text";

export function installSelectorEngines(tree: ComposedTree, xpaths: XPathAccess) {
  const { composedParent, walk, allRoots } = tree;

  function queryCss(selector: string): Element[] | InPageFailure {
    const out: Element[] = [];
    try {
      for (const root of allRoots(document)) for (const el of root.querySelectorAll(selector)) out.push(el);
    } catch (error) {
      return { failed: "invalid-selector", detail: error instanceof Error ? error.message : String(error) };
    }
    return out;
  }

  function queryXPath(xpath: string): Element[] | InPageFailure {
    const simple = xpaths.resolve(xpath);
    if (simple !== undefined) return simple === null ? [] : simple instanceof Element ? [simple] : simple;
    let result: XPathResult;
    try {
      result = document.evaluate(xpath, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    } catch (error) {
      return { failed: "invalid-selector", detail: error instanceof Error ? error.message : String(error) };
    }
    const out: Element[] = [];
    for (let i = 0; i < result.snapshotLength; i++) {
      const node = result.snapshotItem(i);
      if (node instanceof Element) out.push(node);
      else if (node?.parentElement) out.push(node.parentElement);
    }
    return out;
  }

  function normalize(text: string): string {
    return text.replace(/\s+/g, " ").trim().toLowerCase();
  }

  function ownText(el: Element): string {
    if (el instanceof HTMLInputElement && ["button", "submit", "reset"].includes(el.type)) return el.value;
    return el.textContent ?? "";
  }

  /** `text=Sign in` (case-insensitive substring) or `text="Sign in"` (exact); the innermost matches. */
  function queryText(query: string): Element[] {
    const quoted = /^(["'])(.*)\1$/.exec(query);
    const wanted = normalize(quoted ? (quoted[2] ?? "") : query);
    const exact = Boolean(quoted);
    const test = (el: Element) => {
      const text = normalize(ownText(el));
      return exact ? text === wanted : text.includes(wanted);
    };
    const skip = new Set(["script", "style", "noscript", "template", "head", "title", "meta", "link"]);
    const matches = new Set<Element>();
    for (const el of walk(document)) {
      if (skip.has(el.localName)) continue;
      if (test(el)) matches.add(el);
    }
    // Keep the innermost: drop an element when one of its descendants matched too.
    for (const el of matches) {
      for (let p = composedParent(el); p; p = composedParent(p)) if (p instanceof Element) matches.delete(p);
    }
    return [...matches];
  }

  function queryAll(kind: SelectorKind, value: string): Element[] | InPageFailure {
    if (kind === "css") return queryCss(value);
    if (kind === "xpath") return queryXPath(value);
    return queryText(value);
  }

  return {
    count(kind: SelectorKind, value: string): number | InPageFailure {
      const all = queryAll(kind, value);
      return Array.isArray(all) ? all.length : all;
    },

    /** The index-th match (negative counts from the end), or null, or why the query cannot run. */
    queryOne(kind: SelectorKind, value: string, index: number): Element | null | InPageFailure {
      const all = queryAll(kind, value);
      if (!Array.isArray(all)) return all;
      return all[index < 0 ? all.length + index : index] ?? null;
    },
  };
}

export type SelectorEngines = ReturnType<typeof installSelectorEngines>;
