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
//    document scheduled for itself is known too: a short timeout set while it loads or in the
//    second after (content it renders a moment after loading), and the requests its scripts have
//    in flight (fetch, XMLHttpRequest), counted until the script that reads the answer has run.
//    Both are counted in the page, as they happen: they do not depend on how soon the browser
//    reports a request over the protocol, nor on how fast a busy machine loads the document.
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
  // Work a young document has scheduled for itself: timeouts shorter than YOUNG_MS set while it is
  // parsed or within YOUNG_MS after its DOMContentLoaded or its load event (content a page renders
  // a moment after it loaded). Counted from the document's own progress, not from the navigation's
  // start: on a busy machine a page's startup script runs late, and its timer is no less part of
  // its loading. Other timers are the page's own business (polling, analytics) and not waited for.
  const YOUNG_MS = 1_000;
  let readyAt = Number.NEGATIVE_INFINITY;
  let loadedAt = Number.NEGATIVE_INFINITY;
  document.addEventListener("DOMContentLoaded", () => {
    readyAt = performance.now();
  });
  addEventListener("load", (event) => {
    if (event.target === document || event.target === window) loadedAt = performance.now();
  });
  const dueTimers = new Map<number, number>();
  const nativeSetTimeout = globalThis.setTimeout as unknown as (...args: unknown[]) => number;
  const nativeClearTimeout = globalThis.clearTimeout;
  const trackedSetTimeout = function setTimeout(
    this: unknown,
    handler: TimerHandler,
    delay?: number,
    ...rest: unknown[]
  ): number {
    const now = performance.now();
    const wait = Number(delay) || 0;
    const starting =
      document.readyState === "loading" || now - readyAt < YOUNG_MS || now - loadedAt < YOUNG_MS;
    if (!starting || wait >= YOUNG_MS || typeof handler !== "function")
      return nativeSetTimeout.call(this, handler, delay, ...rest);
    const due = now + wait;
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

  // Requests the page's scripts have in flight: from the fetch() or send() call until the answer
  // (and its body, when a script reads it) has arrived and the script continuing from it has run
  // (a task later: the continuation is a microtask, so a DOM change it makes comes first). One that
  // has taken longer than REQUEST_STALE_MS is background traffic (a long poll) and not waited for.
  const REQUEST_STALE_MS = 2_000;
  const requests = new Map<number, number>();
  let lastRequest = 0;
  const begin = (): number => {
    const token = ++lastRequest;
    requests.set(token, performance.now());
    return token;
  };
  const end = (token: number) => {
    nativeSetTimeout.call(globalThis, () => requests.delete(token), 0);
  };
  const tracked = <A extends unknown[], R>(
    name: string,
    native: (this: unknown, ...args: A) => Promise<R>,
  ): ((this: unknown, ...args: A) => Promise<R>) => {
    const wrapper = {
      [name](this: unknown, ...args: A): Promise<R> {
        const token = begin();
        let promise: Promise<R>;
        try {
          promise = native.apply(this, args);
        } catch (error) {
          end(token);
          throw error;
        }
        promise.then(
          () => end(token),
          () => end(token),
        );
        return promise;
      },
    }[name]!;
    Object.defineProperty(wrapper, "toString", { value: () => native.toString(), enumerable: false });
    Object.defineProperty(wrapper, "length", { value: native.length });
    return wrapper;
  };
  if (typeof globalThis.fetch === "function")
    globalThis.fetch = tracked("fetch", globalThis.fetch) as typeof globalThis.fetch;
  if (typeof Response === "function") {
    for (const method of ["text", "json", "arrayBuffer", "blob", "formData", "bytes"] as const) {
      const native = (Response.prototype as unknown as Record<string, unknown>)[method];
      if (typeof native === "function")
        (Response.prototype as unknown as Record<string, unknown>)[method] = tracked(
          method,
          native as (this: unknown) => Promise<unknown>,
        );
    }
  }
  if (typeof XMLHttpRequest === "function") {
    const nativeSend = XMLHttpRequest.prototype.send;
    const trackedSend = function send(this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
      const token = begin();
      this.addEventListener("loadend", () => end(token), { once: true });
      try {
        nativeSend.call(this, body);
      } catch (error) {
        end(token);
        throw error;
      }
    };
    Object.defineProperty(trackedSend, "toString", { value: () => nativeSend.toString(), enumerable: false });
    Object.defineProperty(trackedSend, "length", { value: nativeSend.length });
    XMLHttpRequest.prototype.send = trackedSend;
  }
  const requestsInFlight = (): number => {
    const now = performance.now();
    let count = 0;
    for (const started of requests.values()) if (now - started < REQUEST_STALE_MS) count++;
    return count;
  };

  Object.defineProperty(scope, mutationKey, {
    value: () => {
      let timersDue: number | null = null;
      for (const due of dueTimers.values()) timersDue = Math.max(timersDue ?? 0, due);
      return { last, burstStart, changes, own: own.slice(), timersDue, requests: requestsInFlight() };
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
