// Runs in every document before the page's own scripts (Page.addScriptToEvaluateOnNewDocument).
//
// 1. Closed shadow roots are invisible to page JavaScript (`host.shadowRoot` is null); recording
//    them as they are created lets Deckhand's in-page code reach elements inside them. Roots that
//    exist before this hook ran (declarative shadow DOM, attaching to a running page) are found
//    through the DevTools protocol instead (Frame.discoverClosedShadowRoots).
// 2. The time of the last DOM change, so that "is the page still changing?" is answered at once
//    for a quiet page instead of by waiting a fixed idle period.
//
// Self-contained: it is sent to the page as source text.

export function installPageHooks(): void {
  const rootsKey = Symbol.for("deckhand.closedShadowRoots");
  const mutationKey = Symbol.for("deckhand.lastMutation");
  const scope = globalThis as unknown as Record<symbol, unknown>;
  if (scope[mutationKey]) return;

  // The times of the latest mutation batches, and when the current burst of changes began (the
  // first change after half a second of calm). Together they tell a one-off change from a page
  // that ticks every 50 ms, and both from an endless animation.
  const recent: number[] = [performance.now()];
  let burstStart = recent[0]!;
  Object.defineProperty(scope, mutationKey, {
    value: () => ({ recent: recent.slice(), burstStart }),
    enumerable: false,
  });
  const observer = new MutationObserver(() => {
    const now = performance.now();
    if (now - recent[recent.length - 1]! > 500) burstStart = now;
    recent.push(now);
    if (recent.length > 8) recent.shift();
  });
  // Structure, text and the attributes that show or hide things; not `style`, which animations
  // rewrite every frame and would keep a page from ever looking settled.
  const watch: MutationObserverInit = {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: [
      "class",
      "hidden",
      "disabled",
      "open",
      "aria-hidden",
      "aria-expanded",
      "aria-busy",
      "value",
    ],
  };
  observer.observe(document, watch);

  if (!scope[rootsKey])
    Object.defineProperty(scope, rootsKey, { value: new WeakMap<Element, ShadowRoot>(), enumerable: false });
  const roots = scope[rootsKey] as WeakMap<Element, ShadowRoot>;
  const original = Element.prototype.attachShadow;
  const patched = function attachShadow(this: Element, init: ShadowRootInit): ShadowRoot {
    const root = original.call(this, init);
    if (init && init.mode === "closed") roots.set(this, root);
    observer.observe(root, watch);
    return root;
  };
  // Pages that print or compare the function still see a native-looking one.
  Object.defineProperty(patched, "toString", { value: () => original.toString(), enumerable: false });
  Element.prototype.attachShadow = patched;
}
