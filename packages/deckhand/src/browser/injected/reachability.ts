// For explicit instructions (ops/explicit.ts): whether a person can see and reach an element, the
// containers they would name it by, and a cheap test of whether a name appears on the page at all.
//
// Self-contained: `installReachability` is sent to the page as source text.

import type { ComposedTree } from "./composed-tree.ts";
import type { ElementReads } from "./element-reads.ts";

export function installReachability(tree: ComposedTree, reads: ElementReads) {
  const { composedParent, allRoots } = tree;
  const { isVisible } = reads;

  return {
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
  };
}

export type Reachability = ReturnType<typeof installReachability>;
