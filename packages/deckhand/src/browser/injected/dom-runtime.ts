// Deckhand's in-page helpers for locating elements and preparing input. Installed once per
// execution context (Frame.invoke) and called through the DevTools protocol.
//
// Self-contained: `installDomRuntime` is sent to the page as source text, so it may not use
// imports or anything outside its own body.

import type { FailureReason } from "../../errors.ts";
import type { Quietness } from "./quiet.ts";
import type { ShadowAccess } from "./shadow-access.ts";
import type { XPathAccess } from "./xpath.ts";

export type SelectorKind = "css" | "xpath" | "text";

/** Why an in-page step could not be done, with a short description of the element for messages. */
export interface InPageFailure {
  failed: FailureReason;
  detail: string;
}

export function isInPageFailure(value: unknown): value is InPageFailure {
  return typeof value === "object" && value !== null && typeof (value as InPageFailure).failed === "string";
}

export interface ClickPoint {
  x: number;
  y: number;
}

export type PointResult =
  | ({ ok: true } & ClickPoint)
  | {
      ok: false;
      reason: "detached" | "not-visible" | "covered" | "disabled";
      detail?: string;
      cover?: CoverState;
    };

/**
 * What a covered element's page looked like (see still-cover.ts): where the cover is and how many
 * changes the document has had, and whether anything under way (a request, a young document's
 * timer, an animation) may yet move it.
 */
export interface CoverState {
  scene: string;
  busy: boolean;
}

export interface ElementState {
  connected: boolean;
  visible: boolean;
  enabled: boolean;
  checked: boolean | null;
  editable: boolean;
  /** It, or something inside it, has the keyboard focus. */
  focused: boolean;
  /** The pointer is over it. */
  hovered: boolean;
  /** Some part of it is inside the viewport. */
  inView: boolean;
  /** It opens or is part of a list to choose from (a custom dropdown): combobox, listbox, option, menu item, or aria-haspopup. */
  choosable: boolean;
  tag: string;
  type: string | null;
  role: string | null;
}

export function installDomRuntime(shadow: ShadowAccess, xpaths: XPathAccess, quietness: Quietness) {
  const { shadowRootOf, mayHideClosedRoot, closedRoots, checkedHosts } = shadow;
  // Mouse moves that reached this document: tells Deckhand whether the browser routes the pointer
  // at a point to this frame yet (see Locator's pointerReaches).
  let mouseMoves = 0;
  addEventListener(
    "mousemove",
    () => {
      mouseMoves++;
    },
    { capture: true, passive: true },
  );

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

  function deepElementFromPoint(x: number, y: number): Element | null {
    let el = document.elementFromPoint(x, y);
    while (el) {
      const shadow = shadowRootOf(el);
      if (!shadow) break;
      const inner = shadow.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    return el;
  }

  function describe(el: Element | null): string {
    if (!el) return "nothing";
    let text = `<${el.localName}`;
    if (el.id) text += ` id="${el.id}"`;
    const cls = el.getAttribute("class");
    if (cls) text += ` class="${cls.trim().slice(0, 60)}"`;
    const label = el.getAttribute("aria-label");
    if (label) text += ` aria-label="${label.slice(0, 40)}"`;
    text += ">";
    const content = (el.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 40);
    if (content) text += `${content}</${el.localName}>`;
    return text;
  }

  function isVisible(el: Element): boolean {
    if (!el.isConnected) return false;
    if (typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true }))
      return false;
    const rect = el.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0;
  }

  function isDisabled(el: Element): boolean {
    if ((el as HTMLButtonElement).disabled === true) return true;
    if (el.closest("fieldset[disabled]") && !el.closest("legend")) return true;
    return el.getAttribute("aria-disabled") === "true";
  }

  function scrollIntoViewIfNeeded(el: Element): void {
    const rect = el.getBoundingClientRect();
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const inView = rect.top >= 0 && rect.left >= 0 && rect.bottom <= vh && rect.right <= vw;
    if (!inView) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  }

  /** The point a real click on `el` should land on, after scrolling it into view. */
  function actionPoint(el: Element, checkEnabled: boolean): PointResult {
    if (!el.isConnected) return { ok: false, reason: "detached" };
    if (checkEnabled && isDisabled(el)) return { ok: false, reason: "disabled" };
    // Hidden elements (display, visibility, no size) would otherwise look "covered" by whatever
    // is at their place.
    if (!isVisible(el)) return { ok: false, reason: "not-visible" };
    scrollIntoViewIfNeeded(el);
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    let hitBy: Element | null = null;
    for (const rect of el.getClientRects()) {
      const left = Math.max(rect.left, 0);
      const top = Math.max(rect.top, 0);
      const right = Math.min(rect.right, vw);
      const bottom = Math.min(rect.bottom, vh);
      if (right - left < 1 || bottom - top < 1) continue;
      // The centre first; then points inset from the corners, for elements partly covered.
      const candidates: [number, number][] = [
        [(left + right) / 2, (top + bottom) / 2],
        [left + (right - left) * 0.25, top + (bottom - top) * 0.25],
        [left + (right - left) * 0.75, top + (bottom - top) * 0.75],
        [left + (right - left) * 0.25, top + (bottom - top) * 0.75],
        [left + (right - left) * 0.75, top + (bottom - top) * 0.25],
      ];
      for (const [x, y] of candidates) {
        const hit = deepElementFromPoint(x, y);
        if (hit && (composedContains(el, hit) || isLabelFor(hit, el))) return { ok: true, x, y };
        if (!hitBy) hitBy = hit;
      }
    }
    if (!hitBy) return { ok: false, reason: "not-visible" };
    return { ok: false, reason: "covered", detail: describe(hitBy), cover: coverState(hitBy) };
  }

  function coverState(cover: Element): CoverState {
    const r = cover.getBoundingClientRect();
    const q = quietness.quiet();
    return {
      // The document's own start time tells one document from the next the frame shows.
      scene: `${Math.round(r.left)},${Math.round(r.top)},${Math.round(r.width)},${Math.round(r.height)} #${q.changes} @${performance.timeOrigin}`,
      busy:
        q.readyState === "loading" ||
        q.requests > 0 ||
        q.timersDue !== null ||
        document.getAnimations().some((a) => a.playState === "running"),
    };
  }

  /** Where the content box of an iframe starts, in this document's viewport. */
  function frameContentOffset(el: Element): { x: number; y: number } {
    const rect = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return {
      x: rect.left + el.clientLeft + Number.parseFloat(style.paddingLeft),
      y: rect.top + el.clientTop + Number.parseFloat(style.paddingTop),
    };
  }

  /** A click on a <label> lands on its control, so a label covering its own input is no obstacle. */
  function isLabelFor(hit: Element, el: Element): boolean {
    const label = hit.closest("label");
    return Boolean(label && (label as HTMLLabelElement).control === el);
  }

  const TEXT_INPUT_TYPES = new Set(["", "text", "search", "email", "url", "tel", "password", "number"]);

  /**
   * The text of a contenteditable element as its user typed it: line breaks where the editor put
   * blocks or <br>, without the trailing break an editor keeps after the last line.
   */
  function editableText(el: HTMLElement): string {
    return el.innerText.replace(/\n$/, "");
  }

  return {
    describe,
    isVisible,
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

    /** How far the document has come and whether it is still changing (see quiet.ts). */
    quiet: quietness.quiet,

    isFrameOwner(el: Element): boolean {
      return el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement;
    },

    actionPoint,

    /** Whether a click at (x, y) of this document would reach `el` (used for iframe owners). */
    hits(el: Element, x: number, y: number): string | null {
      const hit = deepElementFromPoint(x, y);
      return hit && composedContains(el, hit) ? null : describe(hit);
    },

    frameContentOffset,

    /**
     * Scrolls this document, if needed, until the point (x, y) of an iframe's content is in view
     * (a click in a frame below the fold); returns frameContentOffset afterwards, and whether it
     * scrolled.
     */
    revealFramePoint(el: Element, x: number, y: number): { x: number; y: number; scrolled: boolean } {
      const inView = (o: { x: number; y: number }) =>
        o.x + x >= 0 && o.x + x < window.innerWidth && o.y + y >= 0 && o.y + y < window.innerHeight;
      let offset = frameContentOffset(el);
      if (inView(offset)) return { ...offset, scrolled: false };
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      offset = frameContentOffset(el);
      // An iframe taller than the viewport: bring the point itself to the middle.
      if (!inView(offset)) {
        window.scrollBy(offset.x + x - window.innerWidth / 2, offset.y + y - window.innerHeight / 2);
        offset = frameContentOffset(el);
      }
      return { ...offset, scrolled: true };
    },

    /** How many mouse moves have reached this document since the runtime was installed. */
    mouseMoves(): number {
      return mouseMoves;
    },

    /** Resolves once the page has drawn two more frames (or after 100 ms in a tab that does not draw). */
    nextFrames(): Promise<void> {
      return new Promise((resolve) => {
        setTimeout(resolve, 100);
        requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
      });
    },

    /**
     * Scrolls an element (null: the document) by about a page, down (sign 1) or up (-1). Returns
     * whether it moved: an element at its end, or one that does not scroll, stays where it is.
     */
    scrollByPage(el: Element | null, sign: number): boolean {
      const target = el ?? document.scrollingElement ?? document.documentElement;
      const height = el ? target.clientHeight : innerHeight;
      const before = target.scrollTop;
      target.scrollBy({ top: sign * height * 0.9, behavior: "instant" });
      return target.scrollTop !== before;
    },

    scrollIntoView(el: Element): void {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    },

    boundingBox(el: Element): { x: number; y: number; width: number; height: number } | null {
      if (!el.isConnected) return null;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0 && !isVisible(el)) return null;
      return { x: rect.left, y: rect.top, width: rect.width, height: rect.height };
    },

    state(el: Element): ElementState {
      const input = el as HTMLInputElement;
      const ariaChecked = el.getAttribute("aria-checked");
      const checked =
        el instanceof HTMLInputElement && (input.type === "checkbox" || input.type === "radio")
          ? input.checked
          : ariaChecked === "true"
            ? true
            : ariaChecked === "false"
              ? false
              : null;
      const editable =
        ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) &&
          !input.readOnly &&
          !input.disabled) ||
        (el as HTMLElement).isContentEditable === true;
      const role = el.getAttribute("role");
      const popup = el.getAttribute("aria-haspopup");
      const choosable =
        (popup !== null && popup !== "false") ||
        el.hasAttribute("aria-expanded") ||
        [
          "combobox",
          "listbox",
          "option",
          "menuitem",
          "menuitemradio",
          "menuitemcheckbox",
          "treeitem",
        ].includes(role ?? "") ||
        el instanceof HTMLSelectElement ||
        (el instanceof HTMLInputElement && el.hasAttribute("list"));
      let active: Element | null = document.activeElement;
      while (active && shadowRootOf(active)?.activeElement) active = shadowRootOf(active)!.activeElement;
      const rect = el.getBoundingClientRect();
      return {
        connected: el.isConnected,
        visible: isVisible(el),
        enabled: !isDisabled(el),
        checked,
        editable,
        focused: active !== null && composedContains(el, active),
        hovered: el.matches(":hover"),
        inView: rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth,
        choosable,
        tag: el.localName,
        type: el instanceof HTMLInputElement ? input.type : null,
        role,
      };
    },

    /**
     * Whether a person can see it: visible (see isVisible), not fully transparent (itself or an
     * ancestor), larger than a pixel each way (the "visually hidden" pattern), and not placed
     * where no scrolling reaches (left: -9999px). Explicit instructions act only on such elements.
     */
    perceivable(el: Element): boolean {
      if (!isVisible(el)) return false;
      if (
        typeof el.checkVisibility === "function" &&
        !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
      )
        return false;
      const rect = el.getBoundingClientRect();
      if (rect.width <= 1 || rect.height <= 1) return false;
      if (rect.right + scrollX <= 0 || rect.bottom + scrollY <= 0) return false;
      // Clipped away (clip: rect(0 0 0 0), clip-path: inset(50%)), or inside a box of a pixel
      // that hides what overflows it.
      for (let node: Node | null = el; node; node = composedParent(node)) {
        if (!(node instanceof Element)) continue;
        const style = getComputedStyle(node);
        if (/^rect\(\s*0(px)?[\s,]+0(px)?[\s,]+0(px)?[\s,]+0(px)?\s*\)$/.test(style.clip)) return false;
        if (/^inset\(\s*50%/.test(style.clipPath)) return false;
        if (node !== el && style.overflow !== "visible") {
          const box = node.getBoundingClientRect();
          if (box.width <= 1 || box.height <= 1) return false;
        }
      }
      return true;
    },

    /**
     * For explicit instructions, a cheap first test: whether any of `names` (lower case, NFKC,
     * spaces collapsed) appears in the text of the document or its shadow roots, or in an
     * attribute that can give an element its name. A name that appears nowhere is no element's
     * name, so the instruction is refused without reading the page's outline.
     */
    mentions(names: string[]): boolean {
      const squash = (t: string | null | undefined) =>
        (t ?? "").normalize("NFKC").toLowerCase().replace(/\s+/g, " ");
      for (const root of allRoots(document)) {
        const text = squash(root instanceof Document ? root.documentElement?.textContent : root.textContent);
        if (names.some((n) => text.includes(n))) return true;
        for (const el of root.querySelectorAll("[aria-label],[placeholder],[title],[alt],input[value]")) {
          for (const attr of ["aria-label", "placeholder", "title", "alt", "value"]) {
            const value = el.getAttribute(attr);
            if (value && names.some((n) => squash(value).includes(n))) return true;
          }
        }
      }
      return false;
    },

    /**
     * For explicit instructions: whether a person can reach it (perceivable, not inert, not behind
     * an open modal dialog) and the containers it is in, innermost first: each with the kinds a
     * person calls it by and the names they may give it (its label, its heading or legend, for a row
     * its first cell and its position among the table's body rows).
     */
    explicitPlace(el: Element): {
      reachable: boolean;
      focused: boolean;
      containers: { kinds: string[]; names: string[] }[];
    } {
      const text = (node: Element | null | undefined) =>
        (node?.textContent ?? "").replace(/\s+/g, " ").trim();
      const labelOf = (node: Element): string[] => {
        const names: string[] = [];
        const label = node.getAttribute("aria-label");
        if (label) names.push(label);
        const by = node.getAttribute("aria-labelledby");
        if (by) {
          const root = node.getRootNode() as Document | ShadowRoot;
          names.push(
            by
              .split(/\s+/)
              .map((id) => text(root.getElementById?.(id)))
              .join(" "),
          );
        }
        return names;
      };
      const firstOf = (node: Element, selector: string) => text(node.querySelector(selector));
      const containers: { kinds: string[]; names: string[] }[] = [];
      let inert = false;
      let inModal = false;
      const modal = document.querySelector("dialog:modal");
      for (let node: Node | null = composedParent(el); node; node = composedParent(node)) {
        if (!(node instanceof Element)) continue;
        if (node === modal) inModal = true;
        if (node.hasAttribute("inert")) inert = true;
        const tag = node.localName;
        const role = node.getAttribute("role") ?? "";
        let kinds: string[] = [];
        let names: string[] = [];
        if (tag === "dialog" || role === "dialog" || role === "alertdialog") {
          kinds = ["dialog", "modal", "popup", "window"];
          names = [...labelOf(node), firstOf(node, "h1,h2,h3,h4,h5,h6")];
        } else if (tag === "fieldset" || role === "group" || role === "radiogroup") {
          kinds = ["group", "fieldset", "section"];
          names = [...labelOf(node), firstOf(node, "legend")];
        } else if (tag === "section" || tag === "article" || role === "region") {
          kinds = ["section", "region", "panel", "card"];
          names = [...labelOf(node), firstOf(node, "h1,h2,h3,h4,h5,h6")];
        } else if (tag === "form" || role === "form") {
          kinds = ["form"];
          names = [...labelOf(node), firstOf(node, "h1,h2,h3,h4,h5,h6,legend")];
        } else if (tag === "tr" || role === "row") {
          kinds = ["row"];
          names = [
            ...labelOf(node),
            text(node.querySelector("th,td,[role=cell],[role=rowheader],[role=gridcell]")),
          ];
          const body = node.parentElement;
          if (body && tag === "tr" && body.localName === "tbody")
            names.push(String([...body.children].indexOf(node) + 1));
        } else if (tag === "li" || role === "listitem") {
          kinds = ["item", "list item", "card", "entry"];
          names = [...labelOf(node), firstOf(node, "h1,h2,h3,h4,h5,h6")];
        } else if (tag === "nav" || role === "navigation") {
          kinds = ["navigation", "nav", "menu", "navigation bar", "nav bar"];
          names = labelOf(node);
        } else if (tag === "footer" || role === "contentinfo") {
          kinds = ["footer"];
          names = labelOf(node);
        } else if (tag === "header" || role === "banner") {
          kinds = ["header"];
          names = labelOf(node);
        } else if (role === "toolbar" || role === "menubar" || role === "tablist") {
          kinds = ["toolbar", "menu bar", "bar"];
          names = labelOf(node);
        }
        if (kinds.length) containers.push({ kinds, names: names.filter((n) => n) });
      }
      const reachable = !inert && (!modal || inModal || modal === el) && this.perceivable(el);
      let active: Element | null = document.activeElement;
      while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
      return { reachable, focused: active === el, containers };
    },

    /** A field's value: an input's, a textarea's or a select's, or the text of a contenteditable element. */
    inputValue(el: Element): string | InPageFailure {
      if (
        el instanceof HTMLInputElement ||
        el instanceof HTMLTextAreaElement ||
        el instanceof HTMLSelectElement
      )
        return el.value;
      if ((el as HTMLElement).isContentEditable) return editableText(el as HTMLElement);
      return {
        failed: "not-editable",
        detail: `${describe(el)} is not an <input>, <textarea>, <select> or contenteditable element`,
      };
    },

    textContent(el: Element): string | null {
      return el.textContent;
    },

    innerHTML(el: Element): string {
      return el.innerHTML;
    },

    /** The rendered text (CSS applied: hidden parts left out, line breaks as laid out). */
    innerText(el: Element): string {
      return el instanceof HTMLElement ? el.innerText : (el.textContent ?? "");
    },

    /**
     * Draws a box over the element for `durationMs` (a person watching a headful run sees what is
     * about to be used). The box takes no pointer events and is removed afterwards.
     */
    highlight(el: Element, durationMs: number, borderColor: string, contentColor: string): void {
      const rect = el.getBoundingClientRect();
      const box = document.createElement("div");
      box.setAttribute("data-deckhand-highlight", "");
      Object.assign(box.style, {
        position: "fixed",
        left: `${rect.left}px`,
        top: `${rect.top}px`,
        width: `${rect.width}px`,
        height: `${rect.height}px`,
        border: `2px solid ${borderColor}`,
        background: contentColor,
        boxSizing: "border-box",
        pointerEvents: "none",
        zIndex: "2147483647",
      });
      (document.body ?? document.documentElement).appendChild(box);
      setTimeout(() => box.remove(), durationMs);
    },

    focus(el: Element): void {
      (el as HTMLElement).focus({ preventScroll: false });
    },

    /**
     * Gets `el` ready to receive `value` as typed text: focused, with its current content selected
     * so that the text replaces it. Inputs that take no typed text (date, color, range, ...) get
     * the value set directly with input/change events; the caller then has nothing left to do.
     */
    prepareFill(el: Element, value: string): "type" | "done" | InPageFailure {
      if (el instanceof HTMLInputElement) {
        const type = el.type.toLowerCase();
        if (el.disabled) return { failed: "disabled", detail: `${describe(el)} is disabled` };
        if (el.readOnly) return { failed: "read-only", detail: `${describe(el)} is read-only` };
        if (["checkbox", "radio", "file", "button", "submit", "reset", "image", "hidden"].includes(type))
          return {
            failed: "not-editable",
            detail: `cannot fill an <input type="${type}">; use check, setInputFiles or click`,
          };
        if (!TEXT_INPUT_TYPES.has(type)) {
          el.focus();
          const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
          setter?.call(el, value);
          if (el.value !== value && value !== "")
            return {
              failed: "invalid-value",
              detail: `"${value}" is not a valid value for <input type="${type}">`,
            };
          el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
          el.dispatchEvent(new Event("change", { bubbles: true }));
          return "done";
        }
        el.focus();
        el.select();
        return "type";
      }
      if (el instanceof HTMLTextAreaElement) {
        if (el.disabled) return { failed: "disabled", detail: `${describe(el)} is disabled` };
        if (el.readOnly) return { failed: "read-only", detail: `${describe(el)} is read-only` };
        el.focus();
        el.select();
        return "type";
      }
      if ((el as HTMLElement).isContentEditable) {
        (el as HTMLElement).focus();
        const range = document.createRange();
        range.selectNodeContents(el);
        const selection = window.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
        return "type";
      }
      return {
        failed: "not-editable",
        detail: `${describe(el)} is not an input, textarea or contenteditable element`,
      };
    },

    /** Selects options of a <select> by value or by visible label; returns the selected values. */
    selectOptions(el: Element, wanted: string[]): string[] | InPageFailure {
      if (!(el instanceof HTMLSelectElement))
        return { failed: "not-a-select", detail: `${describe(el)} is not a <select>` };
      if (el.disabled) return { failed: "disabled", detail: `${describe(el)} is disabled` };
      const options = [...el.options];
      const chosen: HTMLOptionElement[] = [];
      for (const w of wanted) {
        const norm = w.trim().toLowerCase();
        const option =
          options.find((o) => o.value === w) ??
          options.find(
            (o) =>
              o.label.trim().toLowerCase() === norm || (o.textContent ?? "").trim().toLowerCase() === norm,
          );
        if (!option) {
          const available = options.map((o) => JSON.stringify(o.label || o.value)).join(", ");
          return {
            failed: "no-such-option",
            detail: `no option ${JSON.stringify(w)} in ${describe(el)}; it has ${available}`,
          };
        }
        chosen.push(option);
      }
      if (!el.multiple && chosen.length > 1)
        return {
          failed: "too-many-options",
          detail: `${describe(el)} takes one option, got ${chosen.length}`,
        };
      el.focus();
      for (const option of options) option.selected = chosen.includes(option);
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      // Read back after the page's handlers ran: one that rejects the choice has undone it.
      if (!chosen.every((o) => o.selected))
        return {
          failed: "not-applied",
          detail: `${describe(el)} did not keep the choice (the page changed it back)`,
        };
      return [...el.selectedOptions].map((o) => o.value);
    },

    /** Puts in-memory files on a file input, as a user's file picker would. */
    setFiles(el: Element, files: { name: string; mimeType: string; base64: string }[]): null | InPageFailure {
      if (!(el instanceof HTMLInputElement) || el.type !== "file")
        return { failed: "not-a-file-input", detail: `${describe(el)} is not a file input` };
      const transfer = new DataTransfer();
      for (const f of files) {
        const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
        transfer.items.add(new File([bytes], f.name, { type: f.mimeType }));
      }
      el.files = transfer.files;
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return null;
    },
  };
}

export type DomRuntime = ReturnType<typeof installDomRuntime>;
