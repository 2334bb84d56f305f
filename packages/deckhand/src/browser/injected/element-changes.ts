// Changes to an element or the document that input needs besides the keyboard and mouse: focus,
// getting a field ready for typed text (or setting the value of one that takes none), choosing a
// <select>'s options, files on a file input, scrolling, and the highlight box of a headful run.
//
// Self-contained: `installElementChanges` is sent to the page as source text.

import type { InPageFailure } from "./dom-runtime.ts";
import type { ElementReads } from "./element-reads.ts";

export function installElementChanges(reads: ElementReads) {
  const { describe } = reads;

  const TEXT_INPUT_TYPES = new Set(["", "text", "search", "email", "url", "tel", "password", "number"]);

  return {
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

export type ElementChanges = ReturnType<typeof installElementChanges>;
