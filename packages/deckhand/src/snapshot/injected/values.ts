// The value of a form control as the outline shows it, and the record of text typed into fields
// from `%name%` variables: such a field shows the text as written (with its tokens, never the
// value) for as long as it still holds what was typed. Ops note typed text here (snapshot/describe.ts).
//
// Self-contained: `installValues` is sent to the page as source text.

export function installValues() {
  const masks = new WeakMap<Element, { token: string; value: string }>();

  function controlValue(el: Element, role: string): string | null {
    if (el instanceof HTMLInputElement) {
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "hidden"].includes(el.type))
        return null;
      return el.value;
    }
    if (el instanceof HTMLTextAreaElement) return el.value;
    if (el instanceof HTMLSelectElement) return el.selectedOptions[0]?.label ?? "";
    if ((el as HTMLElement).isContentEditable) return editableText(el as HTMLElement);
    if (role === "textbox" || role === "searchbox") return el.textContent ?? "";
    return null;
  }

  /** An editor's text as its user typed it (as Locator.inputValue reads it back). */
  function editableText(el: HTMLElement): string {
    return el.innerText.replace(/\n$/, "");
  }

  /**
   * The value as the outline shows it: a field that holds text typed from `%name%` variables shows
   * the text as written (with its tokens) for as long as it still holds what was typed.
   */
  function shownValue(el: Element, role: string): { text: string; masked: boolean } | null {
    const value = controlValue(el, role);
    if (value === null) return null;
    const mask = masks.get(el);
    return mask && mask.value === value ? { text: mask.token, masked: true } : { text: value, masked: false };
  }

  return {
    controlValue,
    shownValue,

    /**
     * Records text typed into a field, so that a value that came from `%name%` variables stays
     * hidden: `typed` is the text as written (tokens, not values), `before` what the field held
     * before the typing ("" when it was replaced). Text typed after a masked value keeps the mask;
     * a field with nothing secret in it is shown as it is. False when the element has left the
     * page (a form that re-rendered it): nothing was noted.
     */
    noteTyped(el: Element, before: string, typed: string, secret: boolean): boolean {
      if (!el.isConnected) return false;
      const value = controlValue(el, "textbox") ?? "";
      const previous = masks.get(el);
      const beforeMasked = before !== "" && previous !== undefined && previous.value === before;
      if (secret || beforeMasked)
        masks.set(el, { token: (beforeMasked ? previous.token : before) + typed, value });
      else masks.delete(el);
      return true;
    },
  };
}

export type Values = ReturnType<typeof installValues>;
