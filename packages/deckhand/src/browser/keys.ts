// Keys of a US keyboard, as the DevTools protocol's Input.dispatchKeyEvent wants them:
// `key` (what the page sees as event.key), `code` (the physical key), the Windows virtual key code
// and, for keys that produce a character, the text it produces.

export interface KeyDefinition {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
  /** The key that must be held with Shift to produce this character. */
  shifted?: boolean;
  location?: number;
}

export const MODIFIER_BITS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 } as const;
export type Modifier = keyof typeof MODIFIER_BITS;

const named: Record<string, KeyDefinition> = {};
function add(def: KeyDefinition, ...aliases: string[]): void {
  named[def.key] = def;
  for (const alias of aliases) named[alias] = def;
}

add({ key: "Enter", code: "Enter", keyCode: 13, text: "\r" }, "Return", "\n", "\r");
add({ key: "Tab", code: "Tab", keyCode: 9, text: "\t" }, "\t");
add({ key: "Backspace", code: "Backspace", keyCode: 8 });
add({ key: "Delete", code: "Delete", keyCode: 46 }, "Del");
add({ key: "Escape", code: "Escape", keyCode: 27 }, "Esc");
add({ key: " ", code: "Space", keyCode: 32, text: " " }, "Space", "Spacebar");
add({ key: "ArrowUp", code: "ArrowUp", keyCode: 38 }, "Up");
add({ key: "ArrowDown", code: "ArrowDown", keyCode: 40 }, "Down");
add({ key: "ArrowLeft", code: "ArrowLeft", keyCode: 37 }, "Left");
add({ key: "ArrowRight", code: "ArrowRight", keyCode: 39 }, "Right");
add({ key: "Home", code: "Home", keyCode: 36 });
add({ key: "End", code: "End", keyCode: 35 });
add({ key: "PageUp", code: "PageUp", keyCode: 33 });
add({ key: "PageDown", code: "PageDown", keyCode: 34 });
add({ key: "Insert", code: "Insert", keyCode: 45 });
add({ key: "CapsLock", code: "CapsLock", keyCode: 20 });
add({ key: "Shift", code: "ShiftLeft", keyCode: 16, location: 1 });
add({ key: "Control", code: "ControlLeft", keyCode: 17, location: 1 }, "Ctrl", "Ctl");
add({ key: "Alt", code: "AltLeft", keyCode: 18, location: 1 }, "Option");
add({ key: "Meta", code: "MetaLeft", keyCode: 91, location: 1 }, "Command", "Cmd", "Super");
for (let n = 1; n <= 12; n++) add({ key: `F${n}`, code: `F${n}`, keyCode: 111 + n });

// Punctuation: [unshifted, shifted, code, keyCode].
const punctuation: [string, string, string, number][] = [
  ["`", "~", "Backquote", 192],
  ["-", "_", "Minus", 189],
  ["=", "+", "Equal", 187],
  ["[", "{", "BracketLeft", 219],
  ["]", "}", "BracketRight", 221],
  ["\\", "|", "Backslash", 220],
  [";", ":", "Semicolon", 186],
  ["'", '"', "Quote", 222],
  [",", "<", "Comma", 188],
  [".", ">", "Period", 190],
  ["/", "?", "Slash", 191],
];
const digitShifted = [")", "!", "@", "#", "$", "%", "^", "&", "*", "("];

function characterKey(ch: string): KeyDefinition | undefined {
  if (/^[a-z]$/.test(ch))
    return { key: ch, code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0), text: ch };
  if (/^[A-Z]$/.test(ch))
    return { key: ch, code: `Key${ch}`, keyCode: ch.charCodeAt(0), text: ch, shifted: true };
  if (/^[0-9]$/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), text: ch };
  const shiftedDigit = digitShifted.indexOf(ch);
  if (shiftedDigit >= 0)
    return { key: ch, code: `Digit${shiftedDigit}`, keyCode: 48 + shiftedDigit, text: ch, shifted: true };
  for (const [plain, shifted, code, keyCode] of punctuation) {
    if (ch === plain) return { key: ch, code, keyCode, text: ch };
    if (ch === shifted) return { key: ch, code, keyCode, text: ch, shifted: true };
  }
  return undefined;
}

/** The definition of a key name ("Enter", "a", "ArrowLeft", "F5"), or undefined if unknown. */
export function keyDefinition(name: string): KeyDefinition | undefined {
  return named[name] ?? named[capitalize(name)] ?? characterKey(name);
}

function capitalize(name: string): string {
  return name.length > 1 ? name[0]!.toUpperCase() + name.slice(1).toLowerCase() : name;
}

export function isModifier(name: string): name is Modifier {
  return name in MODIFIER_BITS;
}

/**
 * Splits "Control+Shift+A" into its keys. A literal plus is written as the last key ("Control++").
 */
export function parseKeyCombo(combo: string): string[] {
  if (combo === "+") return ["+"];
  const parts = combo.split("+");
  const keys: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "" && i === parts.length - 1 && keys.length > 0) {
      keys.push("+");
      break;
    }
    if (part === "") continue;
    keys.push(part);
  }
  return keys;
}
