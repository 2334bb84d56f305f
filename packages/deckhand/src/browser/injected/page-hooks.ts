// Runs in every document before the page's own scripts (Page.addScriptToEvaluateOnNewDocument).
//
// 1. Closed shadow roots are invisible to page JavaScript (`host.shadowRoot` is null); recording
//    them as they are created lets Deckhand's in-page code reach elements inside them. Roots that
//    exist before this hook ran (declarative shadow DOM, attaching to a running page) are found
//    through the DevTools protocol instead (Frame.discoverClosedShadowRoots).
// 2. When the DOM last changed (and how many times it has), so that "is the page still changing?"
//    is answered at once for a quiet page instead of by waiting a fixed idle period. What the
//    parser inserts while the document is loading does not count: the loading state is a signal
//    of its own, and a page that finished loading has no changes pending from it. What a young
//    document scheduled for its first second (a timeout that will render something) is known too.
//
// Self-contained: it is sent to the page as source text.

export function installPageHooks(): void {
  const rootsKey = Symbol.for("deckhand.closedShadowRoots");
  const mutationKey = Symbol.for("deckhand.lastMutation");
  const scope = globalThis as unknown as Record<symbol, unknown>;
  if (scope[mutationKey]) return;

  // When the DOM last changed, how many changes there have been, when the current burst of
  // changes began (the first change after half a second of calm: a burst that never ends is an
  // animation, not something to wait for), and the times of the latest changes the page made on
  // its own: those that follow a user's input by less than INPUT_MS answer that input, and do not
  // make a rhythm (a ticker every 50 ms does).
  const INPUT_MS = 200;
  let last = Number.NEGATIVE_INFINITY;
  let burstStart = Number.NEGATIVE_INFINITY;
  let lastInput = Number.NEGATIVE_INFINITY;
  let changes = 0;
  const own: number[] = [];
  // Work a young document has scheduled for itself: timeouts set in its first second that are due
  // within it (content a page renders a moment after it loaded). Later timers are the page's own
  // business (polling, analytics) and are not waited for.
  const YOUNG_MS = 1_000;
  const dueTimers = new Map<number, number>();
  const nativeSetTimeout = globalThis.setTimeout as unknown as (...args: unknown[]) => number;
  const nativeClearTimeout = globalThis.clearTimeout;
  const trackedSetTimeout = function setTimeout(
    this: unknown,
    handler: TimerHandler,
    delay?: number,
    ...rest: unknown[]
  ): number {
    const due = performance.now() + (Number(delay) || 0);
    if (due >= YOUNG_MS || typeof handler !== "function")
      return nativeSetTimeout.call(this, handler, delay, ...rest);
    const id: number = nativeSetTimeout.call(
      this,
      function (this: unknown, ...args: unknown[]) {
        dueTimers.delete(id);
        return (handler as (...a: unknown[]) => unknown).apply(this, args);
      },
      delay,
      ...rest,
    );
    dueTimers.set(id, due);
    return id;
  };
  const trackedClearTimeout = function clearTimeout(this: unknown, id?: number): void {
    if (id !== undefined) dueTimers.delete(id);
    nativeClearTimeout.call(this, id);
  };
  // Pages that print or compare the functions still see native-looking ones.
  Object.defineProperty(trackedSetTimeout, "toString", {
    value: () => nativeSetTimeout.toString(),
    enumerable: false,
  });
  Object.defineProperty(trackedClearTimeout, "toString", {
    value: () => nativeClearTimeout.toString(),
    enumerable: false,
  });
  globalThis.setTimeout = trackedSetTimeout as unknown as typeof globalThis.setTimeout;
  globalThis.clearTimeout = trackedClearTimeout as typeof globalThis.clearTimeout;

  Object.defineProperty(scope, mutationKey, {
    value: () => {
      let timersDue: number | null = null;
      for (const due of dueTimers.values()) timersDue = Math.max(timersDue ?? 0, due);
      return { last, burstStart, changes, own: own.slice(), timersDue };
    },
    enumerable: false,
  });
  for (const type of [
    "pointerdown",
    "pointerup",
    "mousedown",
    "mouseup",
    "mouseover",
    "mousemove",
    "click",
    "dblclick",
    "keydown",
    "keyup",
    "input",
    "change",
    "wheel",
  ]) {
    addEventListener(
      type,
      (event) => {
        if (event.isTrusted) lastInput = performance.now();
      },
      { capture: true, passive: true },
    );
  }
  const observer = new MutationObserver(() => {
    if (document.readyState === "loading") return;
    const now = performance.now();
    if (now - last > 500) burstStart = now;
    last = now;
    changes++;
    if (now - lastInput >= INPUT_MS) {
      own.push(now);
      if (own.length > 8) own.shift();
    }
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
