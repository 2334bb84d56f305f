// Accessible names as Chrome computes them (accname 1.2, in the parts pages use): aria-labelledby,
// aria-label, labels, alt and title, content for the roles named from content, with hidden parts
// skipped and controls read as their values.
//
// Self-contained: `installNames` is sent to the page as source text.

import type { ShadowAccess } from "../../browser/injected/shadow-access.ts";
import type { Roles } from "./roles.ts";
import type { TextHelpers } from "./text.ts";
import type { Values } from "./values.ts";

export function installNames(shadow: ShadowAccess, roles: Roles, values: Values, text: TextHelpers) {
  const { shadowRootOf } = shadow;
  const { SKIP, INLINE, NAME_FROM_CONTENT, roleOf } = roles;
  const { shownValue } = values;
  const { collapse } = text;

  function visibleForName(el: Element): boolean {
    if (el.getAttribute("aria-hidden") === "true") return false;
    if (typeof el.checkVisibility !== "function" || el.checkVisibility({ visibilityProperty: true }))
      return true;
    return el.localName === "slot" || getComputedStyle(el).display === "contents";
  }

  /** Text of a subtree as a name computed from content: hidden parts skipped, controls give their value. */
  /** `hiddenToo`: content reached through aria-labelledby counts even when hidden (accname 2B). */
  function textFrom(node: Node, exclude: Element | null, depth: number, hiddenToo = false): string {
    if (depth > 40) return "";
    if (node.nodeType === Node.TEXT_NODE) return (node as Text).data;
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const el = node as Element;
    const tag = el.localName;
    if (SKIP.has(tag) || (!hiddenToo && !visibleForName(el))) return "";
    if (el === exclude) return "";
    const label = el.getAttribute("aria-label")?.trim();
    if (label && depth > 0) return ` ${label} `;
    const role = roleOf(el, tag);
    if (
      depth > 0 &&
      (role === "textbox" ||
        role === "combobox" ||
        role === "listbox" ||
        role === "searchbox" ||
        role === "slider" ||
        role === "spinbutton")
    ) {
      return ` ${shownValue(el, role)?.text ?? ""} `;
    }
    if (tag === "img" || tag === "area")
      return ` ${el.getAttribute("alt") ?? el.getAttribute("title") ?? ""} `;
    if (tag === "svg") return ` ${svgTitle(el)} `;
    if (el instanceof HTMLInputElement && ["button", "submit", "reset"].includes(el.type))
      return ` ${el.value} `;
    let text = "";
    const shadow = shadowRootOf(el);
    const kids = shadow ? shadow.childNodes : tag === "slot" ? slotted(el as HTMLSlotElement) : el.childNodes;
    for (const child of kids) text += textFrom(child, exclude, depth + 1, hiddenToo);
    if (!INLINE.has(tag) && depth > 0) text = ` ${text} `;
    return text;
  }

  function slotted(slot: HTMLSlotElement): Iterable<Node> {
    const assigned = slot.assignedNodes({ flatten: true });
    return assigned.length ? assigned : slot.childNodes;
  }

  function svgTitle(el: Element): string {
    const label = el.getAttribute("aria-label");
    if (label) return label;
    for (const child of el.children) if (child.localName === "title") return child.textContent ?? "";
    return "";
  }

  function byIds(el: Element, ids: string): string {
    const root = el.getRootNode() as Document | ShadowRoot;
    return ids
      .split(/\s+/)
      .map((id) => {
        const ref = root.getElementById?.(id) ?? document.getElementById(id);
        if (!ref) return "";
        return ref.getAttribute("aria-label")?.trim() || textFrom(ref, null, 0, true);
      })
      .join(" ");
  }

  // `el.labels` searches the whole document on each call (seconds for a fresh 20,000-element
  // page); during a capture the document's labels are indexed once instead.
  let labelIndex: Map<Element, HTMLLabelElement[]> | undefined;
  let indexing = false;

  function labelsOf(el: Element): (Iterable<HTMLLabelElement> & { length: number }) | null {
    if (!("labels" in el)) return null;
    if (!indexing || el.getRootNode() !== document) return (el as HTMLInputElement).labels;
    if (!labelIndex) {
      labelIndex = new Map();
      for (const label of document.querySelectorAll("label")) {
        const control = label.control;
        if (!control) continue;
        const list = labelIndex.get(control);
        if (list) list.push(label);
        else labelIndex.set(control, [label]);
      }
    }
    return labelIndex.get(el) ?? [];
  }

  function nameOf(el: Element, tag: string, role: string): string {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = collapse(byIds(el, labelledBy)).trim();
      if (text) return text;
    }
    const ariaLabel = el.getAttribute("aria-label");
    if (ariaLabel?.trim()) return collapse(ariaLabel).trim();
    if (el instanceof HTMLInputElement) {
      const type = el.type;
      if (type === "submit" || type === "reset" || type === "button") {
        return el.value || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
      }
      if (type === "image") return el.alt || el.value || "Submit";
    }
    const labels = labelsOf(el);
    if (labels && labels.length > 0) {
      const text = collapse([...labels].map((l) => textFrom(l, el, 0)).join(" ")).trim();
      if (text) return text;
    }
    if (tag === "img" || tag === "area") {
      const alt = el.getAttribute("alt");
      if (alt?.trim()) return collapse(alt).trim();
    }
    if (tag === "svg") {
      const title = svgTitle(el);
      if (title.trim()) return collapse(title).trim();
    }
    if (tag === "fieldset") {
      const legend = el.querySelector(":scope > legend");
      if (legend) return collapse(textFrom(legend, null, 0)).trim();
    }
    if (tag === "table") {
      const caption = (el as HTMLTableElement).caption;
      if (caption) return collapse(textFrom(caption, null, 0)).trim();
    }
    if (tag === "figure") {
      const caption = el.querySelector(":scope > figcaption");
      if (caption) return collapse(textFrom(caption, null, 0)).trim();
    }
    if (tag === "iframe" || tag === "frame")
      return collapse(el.getAttribute("title") ?? el.getAttribute("name") ?? "").trim();
    if (NAME_FROM_CONTENT.has(role) || role === "generic") {
      const text = collapse(textFrom(el, null, 0)).trim();
      if (text) return text;
    }
    const title = el.getAttribute("title");
    if (title?.trim()) return collapse(title).trim();
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      const placeholder = el.getAttribute("placeholder") ?? el.getAttribute("aria-placeholder");
      if (placeholder?.trim()) return collapse(placeholder).trim();
    }
    return "";
  }

  return {
    nameOf,
    slotted,

    /** Runs `fn` (a capture) with the document's labels indexed once instead of per control. */
    withLabelIndex<R>(fn: () => R): R {
      indexing = true;
      labelIndex = undefined;
      try {
        return fn();
      } finally {
        indexing = false;
        labelIndex = undefined;
      }
    },
  };
}

export type Names = ReturnType<typeof installNames>;
