// Real input events for a page: the browser routes them like a user's, to whichever frame
// (in-process or not) is under the pointer or has focus. Coordinates are CSS pixels of the top
// frame's viewport.

import type { Protocol } from "devtools-protocol";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import {
  isModifier,
  type KeyDefinition,
  keyDefinition,
  MODIFIER_BITS,
  type Modifier,
  parseKeyCombo,
} from "./keys.ts";

export type MouseButton = "left" | "right" | "middle";

export interface ClickOptions {
  button?: MouseButton;
  clickCount?: number;
  /** Milliseconds between press and release. */
  delay?: number;
}

const BUTTON_BITS: Record<MouseButton, number> = { left: 1, right: 2, middle: 4 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Keyboard {
  private readonly session: CdpSession;
  private readonly held = new Set<Modifier>();

  private readonly beforeInput: () => Promise<void>;

  /** `beforeInput` runs before each event (the page makes sure its tab is the one receiving input). */
  constructor(session: CdpSession, beforeInput: () => Promise<void> = async () => {}) {
    this.session = session;
    this.beforeInput = beforeInput;
  }

  /** @internal */
  prepare(): Promise<void> {
    return this.beforeInput();
  }

  /** Bitmask of the modifiers currently held, for mouse events too. */
  get modifiers(): number {
    let bits = 0;
    for (const m of this.held) bits |= MODIFIER_BITS[m];
    return bits;
  }

  async down(name: string): Promise<void> {
    const def = requireKey(name);
    if (isModifier(def.key)) this.held.add(def.key);
    // A character is produced only without Control/Alt/Meta (those make shortcuts instead).
    const producesText = def.text !== undefined && (this.modifiers & ~MODIFIER_BITS.Shift) === 0;
    await this.prepare();
    await this.session.send("Input.dispatchKeyEvent", {
      type: producesText ? "keyDown" : "rawKeyDown",
      key: this.eventKey(def),
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      modifiers: this.modifiers,
      ...(producesText ? { text: def.text, unmodifiedText: def.text } : {}),
      ...(def.location ? { location: def.location } : {}),
      autoRepeat: false,
    });
  }

  async up(name: string): Promise<void> {
    const def = requireKey(name);
    if (isModifier(def.key)) this.held.delete(def.key);
    await this.prepare();
    await this.session.send("Input.dispatchKeyEvent", {
      type: "keyUp",
      key: this.eventKey(def),
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      modifiers: this.modifiers,
      ...(def.location ? { location: def.location } : {}),
    });
  }

  /**
   * `event.key` as a US keyboard reports it with the modifiers now held: Shift makes capitals, and
   * a letter in a Control/Alt/Meta shortcut without Shift is lower case ("Control+A" is the A key
   * with Control, which pages check as `e.ctrlKey && e.key === "a"`).
   */
  private eventKey(def: KeyDefinition): string {
    if (def.key.length !== 1) return def.key;
    if (this.held.has("Shift")) return def.key.toUpperCase();
    if (this.modifiers !== 0) return def.key.toLowerCase();
    return def.key;
  }

  /** Presses a key or a combination such as "Enter", "Control+A", "Shift+ArrowLeft". */
  async press(combo: string, options: { delay?: number } = {}): Promise<void> {
    const keys = parseKeyCombo(combo);
    if (keys.length === 0)
      throw new ServiceInvalidArgumentError(`keyPress needs a key, got ${JSON.stringify(combo)}.`);
    for (const key of keys) requireKey(key);
    for (const key of keys) await this.down(key);
    if (options.delay) await sleep(options.delay);
    for (const key of [...keys].reverse()) await this.up(key);
  }

  /**
   * Types text key by key; characters without a key on a US keyboard are inserted as text. An
   * aborted `signal` stops it between two keys (with the signal's reason).
   */
  async type(text: string, options: { delay?: number; signal?: AbortSignal } = {}): Promise<void> {
    for (const ch of text) {
      if (options.signal?.aborted) throw options.signal.reason;
      const def = keyDefinition(ch);
      if (def && (def.text !== undefined || ch === "\n")) {
        if (def.shifted && !this.held.has("Shift")) {
          await this.down("Shift");
          await this.down(ch);
          await this.up(ch);
          await this.up("Shift");
        } else {
          await this.down(ch);
          await this.up(ch);
        }
      } else {
        await this.insertText(ch);
      }
      if (options.delay) await sleep(options.delay);
    }
  }

  /** Inserts text as an input method would: one input event, no key events. */
  async insertText(text: string): Promise<void> {
    await this.prepare();
    await this.session.send("Input.insertText", { text });
  }
}

function requireKey(name: string): KeyDefinition {
  const def = keyDefinition(name);
  if (!def) {
    throw new ServiceInvalidArgumentError(
      `Unknown key ${JSON.stringify(name)}. Use a character ("a", "1", "/") or a key name such as Enter, Tab, ` +
        "Escape, Backspace, Delete, ArrowUp, Home, PageDown, F1, Shift, Control, Alt, Meta.",
    );
  }
  return def;
}

export class Mouse {
  private readonly session: CdpSession;
  private readonly keyboard: Keyboard;
  private x = 0;
  private y = 0;
  private buttons = 0;

  constructor(session: CdpSession, keyboard: Keyboard) {
    this.session = session;
    this.keyboard = keyboard;
  }

  async move(x: number, y: number, options: { steps?: number } = {}): Promise<void> {
    const steps = Math.max(1, options.steps ?? 1);
    const fromX = this.x;
    const fromY = this.y;
    for (let i = 1; i <= steps; i++) {
      this.x = fromX + ((x - fromX) * i) / steps;
      this.y = fromY + ((y - fromY) * i) / steps;
      await this.dispatch("mouseMoved", { button: this.pressedButton() });
    }
  }

  async down(options: { button?: MouseButton; clickCount?: number } = {}): Promise<void> {
    const button = options.button ?? "left";
    this.buttons |= BUTTON_BITS[button];
    await this.dispatch("mousePressed", { button, clickCount: options.clickCount ?? 1 });
  }

  async up(options: { button?: MouseButton; clickCount?: number } = {}): Promise<void> {
    const button = options.button ?? "left";
    this.buttons &= ~BUTTON_BITS[button];
    await this.dispatch("mouseReleased", { button, clickCount: options.clickCount ?? 1 });
  }

  /** Moves to (x, y) and clicks; clickCount 2 is a double click (two press/release pairs, as a user makes). */
  async click(x: number, y: number, options: ClickOptions = {}): Promise<void> {
    const button = options.button ?? "left";
    const count = options.clickCount ?? 1;
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      throw new ServiceInvalidArgumentError(`click needs finite coordinates, got (${x}, ${y}).`);
    }
    await this.move(x, y);
    for (let n = 1; n <= count; n++) {
      await this.down({ button, clickCount: n });
      if (options.delay) await sleep(options.delay);
      await this.up({ button, clickCount: n });
    }
  }

  async wheel(deltaX: number, deltaY: number): Promise<void> {
    await this.dispatch("mouseWheel", { deltaX, deltaY });
  }

  private pressedButton(): MouseButton | "none" {
    if (this.buttons & 1) return "left";
    if (this.buttons & 2) return "right";
    if (this.buttons & 4) return "middle";
    return "none";
  }

  private async dispatch(
    type: Protocol.Input.DispatchMouseEventRequest["type"],
    extra: Partial<Protocol.Input.DispatchMouseEventRequest>,
  ): Promise<void> {
    await this.keyboard.prepare();
    await this.session.send("Input.dispatchMouseEvent", {
      type,
      x: this.x,
      y: this.y,
      modifiers: this.keyboard.modifiers,
      buttons: this.buttons,
      ...extra,
    });
  }
}
