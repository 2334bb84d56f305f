// Reaching shadow roots from Deckhand's in-page code: open roots through `shadowRoot`, closed
// ones through the record the page hook keeps (page-hooks.ts) or that the protocol filled in
// (Frame.discoverClosedShadowRoots). Given as the first argument to the DOM runtime and the
// snapshot outline, so both follow the same rules.
//
// Self-contained: it is sent to the page as source text.

export function installShadowAccess() {
  const closedKey = Symbol.for("deckhand.closedShadowRoots");
  const checkedKey = Symbol.for("deckhand.checkedHosts");
  const scope = globalThis as unknown as Record<symbol, unknown>;
  if (!scope[closedKey]) Object.defineProperty(scope, closedKey, { value: new WeakMap(), enumerable: false });
  if (!scope[checkedKey])
    Object.defineProperty(scope, checkedKey, { value: new WeakSet(), enumerable: false });
  const closedRoots = scope[closedKey] as WeakMap<Element, ShadowRoot>;
  /** Hosts already asked about through the protocol (and found without a closed root). */
  const checkedHosts = scope[checkedKey] as WeakSet<Element>;

  // Elements that can host a shadow root (besides custom elements).
  const HOST_TAGS = new Set([
    "article",
    "aside",
    "blockquote",
    "body",
    "div",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "main",
    "nav",
    "p",
    "section",
    "span",
  ]);

  return {
    closedRoots,
    checkedHosts,

    shadowRootOf(el: Element): ShadowRoot | null {
      return el.shadowRoot ?? closedRoots.get(el) ?? null;
    },

    /**
     * Whether `el` may hide a closed root the page hook never saw: a custom element, or an empty
     * host-capable element that still takes up space (a declarative shadow root's template leaves
     * no light children). Hosts already checked through the protocol are not asked about again.
     */
    mayHideClosedRoot(el: Element): boolean {
      if (checkedHosts.has(el)) return false;
      if (el.localName.includes("-")) return true;
      if (!HOST_TAGS.has(el.localName) || el.firstElementChild || el.textContent?.trim()) return false;
      const rect = el.getBoundingClientRect();
      return rect.width > 0 && rect.height > 0;
    },
  };
}

export type ShadowAccess = ReturnType<typeof installShadowAccess>;
