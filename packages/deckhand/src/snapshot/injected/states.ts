// The state part of an outline line: value=, options=, checked, expanded, selected, disabled, ...
//
// Self-contained: `installStates` is sent to the page as source text.

import type { TextHelpers } from "./text.ts";
import type { Values } from "./values.ts";

export function installStates(values: Values, text: TextHelpers) {
  const { shownValue } = values;
  const { quote } = text;

  function states(el: Element, role: string): string {
    const parts: string[] = [];
    const shown = shownValue(el, role);
    const value = shown?.text ?? null;
    if (shown?.masked) {
      // Checked first: a masked value must not reach the combobox branch below either.
      parts.push(`value=${/^%[\w.-]+%$/.test(shown.text) ? shown.text : quote(shown.text)}`);
    } else if (value !== null && role !== "combobox" && role !== "listbox") {
      if (value !== "")
        parts.push(
          `value=${el instanceof HTMLInputElement && el.type === "password" ? '"••••"' : quote(value)}`,
        );
    }
    if (el instanceof HTMLSelectElement) {
      const selected = [...el.selectedOptions].map((o) => o.label);
      if (selected.length) parts.push(`value=${quote(selected.join(", "))}`);
      const options = [...el.options].map((o) => o.label.trim());
      const shown = options.slice(0, 25).join(" | ");
      parts.push(`options=[${shown}${options.length > 25 ? ` | … ${options.length - 25} more` : ""}]`);
    } else if (role === "combobox" && value && !shown?.masked) {
      parts.push(`value=${quote(value)}`);
    }
    if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) {
      if (el.indeterminate) parts.push("mixed");
      else if (el.checked) parts.push("checked");
    } else {
      const checked = el.getAttribute("aria-checked");
      if (checked === "true") parts.push("checked");
      else if (checked === "mixed") parts.push("mixed");
    }
    if (el instanceof HTMLInputElement && el.type === "range")
      parts.push(`min=${el.min || 0} max=${el.max || 100}`);
    const expanded = el.getAttribute("aria-expanded");
    if (expanded === "true" || expanded === "false")
      parts.push(expanded === "true" ? "expanded" : "collapsed");
    if (el.localName === "summary")
      parts.push((el.parentElement as HTMLDetailsElement | null)?.open ? "expanded" : "collapsed");
    if (el.getAttribute("aria-selected") === "true" || (el instanceof HTMLOptionElement && el.selected))
      parts.push("selected");
    if (el.getAttribute("aria-pressed") === "true") parts.push("pressed");
    if ((el as HTMLButtonElement).disabled || el.getAttribute("aria-disabled") === "true")
      parts.push("disabled");
    if ((el as HTMLInputElement).required || el.getAttribute("aria-required") === "true")
      parts.push("required");
    if ((el as HTMLInputElement).readOnly || el.getAttribute("aria-readonly") === "true")
      parts.push("readonly");
    if (el.getAttribute("aria-invalid") === "true") parts.push("invalid");
    return parts.length ? ` ${parts.join(" ")}` : "";
  }

  return { states };
}

export type States = ReturnType<typeof installStates>;
