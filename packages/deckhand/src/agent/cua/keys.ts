// Key names as the computer-use models write them (xdotool's "ctrl+a", "Return", "Page_Down" from
// Claude; "CTRL", "ENTER", "ARROWLEFT" from OpenAI; "Control+A" from Gemini) turned into the names
// the browser layer's keyboard knows.

import { keyDefinition } from "../../browser/keys.ts";
import { ServiceInvalidArgumentError } from "../../errors.ts";

const NAMES: Readonly<Record<string, string>> = {
  ctrl: "Control",
  control: "Control",
  ctl: "Control",
  alt: "Alt",
  option: "Alt",
  shift: "Shift",
  cmd: "Meta",
  command: "Meta",
  meta: "Meta",
  super: "Meta",
  win: "Meta",
  windows: "Meta",
  return: "Enter",
  enter: "Enter",
  kp_enter: "Enter",
  tab: "Tab",
  esc: "Escape",
  escape: "Escape",
  space: " ",
  spacebar: " ",
  backspace: "Backspace",
  back_space: "Backspace",
  delete: "Delete",
  del: "Delete",
  insert: "Insert",
  home: "Home",
  end: "End",
  pageup: "PageUp",
  page_up: "PageUp",
  prior: "PageUp",
  pagedown: "PageDown",
  page_down: "PageDown",
  next: "PageDown",
  up: "ArrowUp",
  arrowup: "ArrowUp",
  down: "ArrowDown",
  arrowdown: "ArrowDown",
  left: "ArrowLeft",
  arrowleft: "ArrowLeft",
  right: "ArrowRight",
  arrowright: "ArrowRight",
  capslock: "CapsLock",
  caps_lock: "CapsLock",
  minus: "-",
  plus: "+",
  equal: "=",
  comma: ",",
  period: ".",
  slash: "/",
};

/** One key as the browser layer names it; a clear error for a key no keyboard has. */
export function browserKeyName(name: string): string {
  const trimmed = name.trim();
  const lower = trimmed.toLowerCase();
  const known = NAMES[lower] ?? (/^f([1-9]|1[0-2])$/.test(lower) ? lower.toUpperCase() : undefined);
  // Letters are their key (a shortcut's "A" is the A key, not Shift+A).
  const key = known ?? (trimmed.length === 1 ? trimmed.toLowerCase() : trimmed);
  if (!keyDefinition(key)) {
    throw new ServiceInvalidArgumentError(
      `The model asked for the key ${JSON.stringify(name)}, which Deckhand does not know. Known: letters, digits, ` +
        "punctuation, Enter, Tab, Escape, Backspace, Delete, arrows, Home, End, PageUp, PageDown, F1-F12, Control, Alt, Shift, Meta.",
    );
  }
  return key;
}

/** A chord ("ctrl+shift+t", ["CTRL", "A"], "Control+A") as keys for keyboard.press, modifiers first. */
export function chordKeys(chord: string | readonly string[]): string[] {
  const parts = typeof chord === "string" ? splitChord(chord) : chord.flatMap((k) => splitChord(k));
  return parts.map(browserKeyName);
}

function splitChord(chord: string): string[] {
  if (chord === "+") return ["+"];
  const parts = chord.split("+");
  // "ctrl++" is Control and the plus key.
  if (chord.endsWith("++")) return [...parts.slice(0, -2).filter(Boolean), "+"];
  return parts.filter((p) => p !== "");
}
