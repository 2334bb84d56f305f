// What an element is like now, read without changing anything: a short description for messages,
// whether it is visible and enabled, its state as Locator's checks and waits read it, its box, and
// its value and text.
//
// Self-contained: `installElementReads` is sent to the page as source text.

import type { ComposedTree } from "./composed-tree.ts";
import type { InPageFailure } from "./dom-runtime.ts";
import type { ShadowAccess } from "./shadow-access.ts";

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

export function installElementReads(shadow: ShadowAccess, tree: ComposedTree) {
  const { shadowRootOf } = shadow;
  const { composedContains } = tree;

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
    isDisabled,

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
  };
}

export type ElementReads = ReturnType<typeof installElementReads>;
