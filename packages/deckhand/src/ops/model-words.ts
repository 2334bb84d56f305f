// What small and local models call the act methods. The table of methods (methods.ts) holds the
// names callers use; this one adds the words models answer with instead (`input` for fill, `tap`
// for click, `choose` for selectOption). Only words that mean one method are listed: a word that
// could mean two is not read, and the model is asked again. The one reading that depends on the
// element, `press` on a button meaning click, is made where the element is known (act-model.ts).

import { type ActMethod, knownMethod, methodSpec } from "./methods.ts";

/** Model words, lower case and letters only, and the method each stands for. */
export const MODEL_METHOD_WORDS: Readonly<Record<string, ActMethod>> = {
  input: "fill",
  enter: "fill",
  entertext: "fill",
  write: "fill",
  settext: "fill",
  setvalue: "fill",
  filltext: "fill",
  typetext: "type",
  appendtext: "type",
  tap: "click",
  clickon: "click",
  clickelement: "click",
  choose: "selectOption",
  chooseoption: "selectOption",
  pick: "selectOption",
  pickoption: "selectOption",
  mouseover: "hover",
  hoverover: "hover",
  scroll: "scrollByPage",
  tick: "check",
  untick: "uncheck",
};

/** The method a model's word stands for: a method's name or alias, or a word of the table above. */
export function methodFromModel(word: unknown): ActMethod | undefined {
  if (typeof word !== "string") return undefined;
  return knownMethod(word) ?? MODEL_METHOD_WORDS[word.replace(/[^a-z]/gi, "").toLowerCase()];
}

/** Roles whose element a press with no key (or a press that names no key) clicks. */
const PRESSED_BY_CLICK = new Set([
  "button",
  "link",
  "tab",
  "menuitem",
  "option",
  "switch",
  "checkbox",
  "radio",
]);

/** Key names `press` understands (a letter, a digit, F1-F12, named keys, with modifiers). */
const KEY =
  /^((control|ctrl|shift|alt|meta|cmd|command)\+)*([a-z0-9]|f([1-9]|1[0-2])|enter|return|tab|escape|esc|space|backspace|delete|arrow(up|down|left|right)|home|end|pageup|pagedown)$/i;

/**
 * Whether a `press` answer on an element of this role means a click: the element is a button (or
 * the like) and the answer names no key to press.
 */
export function pressMeansClick(role: string, args: readonly string[]): boolean {
  const key = args[0]?.trim();
  return PRESSED_BY_CLICK.has(role) && (!key || !KEY.test(key.replace(/\s+/g, "")));
}

/**
 * Act's reading of a parsed answer before its schema check: the method's word, `arguments` left
 * out (or null) for a method that takes none, the element id under another key, and a missing
 * description (words only shown to people). Nothing that changes what is done is filled in.
 */
export function normalizeActAnswer(answer: unknown): unknown {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return answer;
  const out = { ...(answer as Record<string, unknown>) };
  if (out.elementId === undefined) {
    const keys = ["id", "element", "elementid", "element_id", "target"].filter((k) => out[k] !== undefined);
    if (keys.length === 1) out.elementId = out[keys[0]!];
  }
  const method = methodFromModel(out.method);
  if (method) {
    out.method = method;
    const spec = methodSpec(method);
    // A method that takes no argument, or one that falls back to a default that is not typed text
    // (press: Enter), may leave its arguments out; fill and type may not (that would clear a field).
    const optional = !spec.argument || (spec.argument.fallback !== undefined && !spec.typesText);
    if ((out.arguments === undefined || out.arguments === null) && optional) out.arguments = [];
  }
  if (out.description === undefined || out.description === null) {
    out.description = `${String(out.method)} element ${String(out.elementId)}`;
  }
  return out;
}

/** The longest outline line quoted back to the model when it named an id the outline does not have. */
const QUOTED_LINE = 80;

/**
 * What act and observe tell the model when it named ids the outline does not have: each id, the
 * range of ids the outline does show, and, for each, the two outline lines whose ids are nearest
 * (as the outline writes them: `[12] button: Increment`), so that an id mistyped or misread can be
 * put right by the model. Nothing is chosen for it: an id not in the outline is never taken for a
 * nearby one (docs/tolerant-reader.md). `outline` is the text the model was shown (masked).
 */
export function idsNotInOutline(missing: readonly number[], outline: string): string {
  const lines = new Map<number, string>();
  for (const line of outline.split("\n")) {
    const found = /^\s*\[(\d+)\]/.exec(line);
    if (!found) continue;
    const text = line.trim();
    lines.set(Number(found[1]), text.length > QUOTED_LINE ? `${text.slice(0, QUOTED_LINE)}...` : text);
  }
  const ids = [...lines.keys()].sort((a, b) => a - b);
  const which = missing.join(", ");
  const verb = missing.length > 1 ? "are" : "is";
  if (ids.length === 0) return `elementId ${which} ${verb} not in the page outline`;
  const near = missing.map((id) => {
    const nearest = [...ids].sort((a, b) => Math.abs(a - id) - Math.abs(b - id) || a - b).slice(0, 2);
    return `${missing.length > 1 ? `for ${id}: ` : ""}${nearest
      .sort((a, b) => a - b)
      .map((n) => lines.get(n))
      .join("; ")}`;
  });
  return (
    `elementId ${which} ${verb} not in the page outline (its ids run from ${ids[0]} to ${ids.at(-1)}; ` +
    `the nearest it shows are ${near.join(" | ")})`
  );
}
