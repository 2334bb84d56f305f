// What the outline makes of an element its role does not settle: something clickable or draggable
// (a generic element made to be acted on), something of no size, a box that scrolls.
//
// Self-contained: `installElementKinds` is sent to the page as source text.

export function installElementKinds() {
  function clickable(el: Element, tag: string, role: string): boolean {
    if (role !== "generic") return false;
    // Something made to be dragged is something to act on (drag and drop needs its id).
    if (draggable(el)) return true;
    const tabindex = el.getAttribute("tabindex");
    if (tabindex !== null && Number(tabindex) >= 0) return true;
    if (el.hasAttribute("onclick")) return true;
    if (
      tag === "span" ||
      tag === "div" ||
      tag === "li" ||
      tag === "img" ||
      tag === "svg" ||
      el.localName.includes("-")
    ) {
      const parent = el.parentElement;
      if (!parent) return false;
      const own = hasOwnText(el) || tag === "img" || tag === "svg";
      if (!own) return false;
      return getComputedStyle(el).cursor === "pointer" && getComputedStyle(parent).cursor !== "pointer";
    }
    return false;
  }

  function draggable(el: Element): boolean {
    return el.getAttribute("draggable") === "true";
  }

  function hasOwnText(el: Element): boolean {
    for (let n = el.firstChild; n; n = n.nextSibling)
      if (n.nodeType === Node.TEXT_NODE && (n as Text).data.trim()) return true;
    return false;
  }

  function zeroSize(el: Element): boolean {
    const rect = el.getBoundingClientRect();
    return rect.width === 0 && rect.height === 0;
  }

  function scrollable(el: Element): boolean {
    if (el.scrollHeight <= el.clientHeight + 4 && el.scrollWidth <= el.clientWidth + 4) return false;
    const style = getComputedStyle(el);
    return /(auto|scroll)/.test(style.overflowY + style.overflowX);
  }

  return { clickable, draggable, zeroSize, scrollable };
}

export type ElementKinds = ReturnType<typeof installElementKinds>;
