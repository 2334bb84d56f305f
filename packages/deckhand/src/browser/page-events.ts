// The events a program can listen to on a page (`page.on("console" | "dialog" | "close", ...)`),
// as the reference library and Playwright name them. It listens on every session of the page (its
// own and its out-of-process iframes'), so a message or a dialog of any frame arrives.

import type { Protocol } from "devtools-protocol";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";

/** A `console.*` call of the page or one of its frames. */
export class ConsoleMessage {
  private readonly event: Protocol.Runtime.ConsoleAPICalledEvent;

  /** @internal */
  constructor(event: Protocol.Runtime.ConsoleAPICalledEvent) {
    this.event = event;
  }

  /** `log`, `info`, `warning`, `error`, `debug`, ... (the protocol's names: `warning`, not `warn`). */
  type(): string {
    return this.event.type;
  }

  /** The arguments as text, joined by spaces, as the DevTools console shows them. */
  text(): string {
    return this.event.args.map(remoteText).join(" ");
  }

  /** The arguments' values where they are plain values (strings, numbers, ...), else their descriptions. */
  args(): unknown[] {
    return this.event.args.map((arg) => ("value" in arg ? arg.value : (arg.description ?? arg.type)));
  }

  /** Where the call was made, when the browser says. */
  location(): { url: string; lineNumber: number; columnNumber: number } | undefined {
    const frame = this.event.stackTrace?.callFrames[0];
    return frame
      ? { url: frame.url, lineNumber: frame.lineNumber, columnNumber: frame.columnNumber }
      : undefined;
  }

  /** Milliseconds since the Unix epoch. */
  timestamp(): number {
    return this.event.timestamp;
  }
}

function remoteText(arg: Protocol.Runtime.RemoteObject): string {
  if (arg.type === "undefined") return "undefined";
  if ("value" in arg) return typeof arg.value === "string" ? arg.value : JSON.stringify(arg.value);
  return arg.unserializableValue ?? arg.description ?? arg.type;
}

/** An `alert`, `confirm`, `prompt` or `beforeunload` dialog. The page waits until it is answered. */
export class Dialog {
  private readonly event: Protocol.Page.JavascriptDialogOpeningEvent;
  private readonly session: CdpSession;
  private handled = false;

  /** @internal */
  constructor(event: Protocol.Page.JavascriptDialogOpeningEvent, session: CdpSession) {
    this.event = event;
    this.session = session;
  }

  type(): "alert" | "confirm" | "prompt" | "beforeunload" {
    return this.event.type;
  }

  message(): string {
    return this.event.message;
  }

  /** A prompt's default value ("" for other dialogs). */
  defaultValue(): string {
    return this.event.defaultPrompt ?? "";
  }

  /** Presses OK (with `promptText` for a prompt). */
  async accept(promptText?: string): Promise<void> {
    await this.answer(true, promptText);
  }

  /** Presses Cancel (an alert's only button counts as OK either way). */
  async dismiss(): Promise<void> {
    await this.answer(false);
  }

  private async answer(accept: boolean, promptText?: string): Promise<void> {
    if (this.handled) {
      throw new ServiceInvalidArgumentError("This dialog was already accepted or dismissed.");
    }
    this.handled = true;
    await this.session.send("Page.handleJavaScriptDialog", {
      accept,
      ...(promptText !== undefined ? { promptText } : {}),
    });
  }
}

export interface PageEventMap {
  console: ConsoleMessage;
  dialog: Dialog;
  /** The page was closed (or crashed, or its browser went away). */
  close: undefined;
}

export type PageEventName = keyof PageEventMap;
type Listener<E extends PageEventName> = (event: PageEventMap[E]) => void;

const EVENT_NAMES: readonly PageEventName[] = ["console", "dialog", "close"];

/** Listeners of one page, and the taps on its sessions that feed them. */
export class PageEvents {
  private readonly listeners = new Map<PageEventName, Set<Listener<PageEventName>>>();
  private readonly onListenerError: (event: PageEventName, error: unknown) => void;

  constructor(onListenerError: (event: PageEventName, error: unknown) => void) {
    this.onListenerError = onListenerError;
  }

  static check(event: string): asserts event is PageEventName {
    if (!(EVENT_NAMES as readonly string[]).includes(event)) {
      throw new ServiceInvalidArgumentError(
        `page.on: unknown event ${JSON.stringify(event)}. Events: ${EVENT_NAMES.join(", ")}.`,
      );
    }
  }

  add<E extends PageEventName>(event: E, listener: Listener<E>): void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<PageEventName>);
  }

  /** Adds a listener that is removed after its first call (or by remove() with the same listener). */
  addOnce<E extends PageEventName>(event: E, listener: Listener<E>): void {
    const once = Object.assign(
      (value: PageEventMap[E]) => {
        this.remove(event, listener);
        listener(value);
      },
      { original: listener },
    );
    this.add(event, once);
  }

  remove<E extends PageEventName>(event: E, listener: Listener<E>): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const registered of set) {
      if (registered === listener || (registered as { original?: unknown }).original === listener) {
        set.delete(registered);
      }
    }
  }

  has(event: PageEventName): boolean {
    return (this.listeners.get(event)?.size ?? 0) > 0;
  }

  emit<E extends PageEventName>(event: E, value: PageEventMap[E]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener(value);
      } catch (error) {
        // A program's listener that throws must not break the page's own event handling.
        this.onListenerError(event, error);
      }
    }
  }

  /** Feeds the listeners from one of the page's sessions (Runtime and Page are enabled on each). */
  tap(session: CdpSession): void {
    session.on("Runtime.consoleAPICalled", (event) => {
      if (this.has("console")) this.emit("console", new ConsoleMessage(event));
    });
    session.on("Page.javascriptDialogOpening", (event) => {
      if (this.has("dialog")) this.emit("dialog", new Dialog(event, session));
    });
  }
}
