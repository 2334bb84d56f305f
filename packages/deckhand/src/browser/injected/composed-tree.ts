// The composed tree: the light DOM and every shadow root, open and closed, as one tree (a shadow
// root's parent is its host). Parents, containment and walks, for the parts of the DOM runtime.
//
// Self-contained: `installComposedTree` is sent to the page as source text.

import type { ShadowAccess } from "./shadow-access.ts";

export function installComposedTree(shadow: ShadowAccess) {
  const { shadowRootOf } = shadow;

  /** Parent in the composed tree: a shadow root's parent is its host. */
  function composedParent(node: Node): Node | null {
    if (node.parentNode)
      return node.parentNode instanceof ShadowRoot ? node.parentNode.host : node.parentNode;
    return node instanceof ShadowRoot ? node.host : null;
  }

  function composedContains(ancestor: Node, node: Node | null): boolean {
    for (let n = node; n; n = composedParent(n)) if (n === ancestor) return true;
    return false;
  }

  /** Every element under `root`, descending into open and closed shadow roots, in tree order. */
  function* walk(root: Document | ShadowRoot | Element): Generator<Element> {
    const stack: Element[] = [];
    const start = root instanceof Document ? root.documentElement : root instanceof ShadowRoot ? null : root;
    if (start) stack.push(start);
    else for (let c = (root as ShadowRoot).lastElementChild; c; c = c.previousElementSibling) stack.push(c);
    while (stack.length) {
      const el = stack.pop()!;
      yield el;
      for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
      const shadow = shadowRootOf(el);
      if (shadow) for (let c = shadow.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
    }
  }

  /** Roots to search: the document and every shadow root in it. */
  function allRoots(root: Document | ShadowRoot): (Document | ShadowRoot)[] {
    const roots: (Document | ShadowRoot)[] = [root];
    for (const el of walk(root)) {
      const shadow = shadowRootOf(el);
      if (shadow) roots.push(shadow);
    }
    return roots;
  }

  return { composedParent, composedContains, walk, allRoots };
}

export type ComposedTree = ReturnType<typeof installComposedTree>;
