// The computer a computer-use model controls: the page's viewport. It takes screenshots at the
// size the model was told, and runs the model's actions with real input events (the browser
// layer's mouse and keyboard), with coordinates already mapped to viewport CSS pixels.

import type { Page } from "../../browser/page.ts";
import { waitForSettled } from "../../browser/settle.ts";
import type { Deadline } from "../../deadline.ts";
import { ServiceInvalidArgumentError } from "../../errors.ts";
import { agentPageUrl } from "../agent-url.ts";
import {
  drawCursor,
  markFocusedField,
  nextFrames,
  SECRET_ATTRIBUTE,
  scrollSettled,
  setSecretMask,
  watchScroll,
} from "./in-page.ts";
import { chordKeys } from "./keys.ts";
import { TabWatch, type TabWatchOptions } from "./tabs.ts";

export interface Point {
  x: number;
  y: number;
}

/** An action in the page's terms. Coordinates are viewport CSS pixels. */
export type ComputerAction =
  | {
      type: "click";
      x: number;
      y: number;
      button?: "left" | "right" | "middle" | "back" | "forward";
      clickCount?: number;
      /** Keys held during the click ("shift", "ctrl"). */
      keys?: string[];
    }
  | { type: "mouseDown"; x?: number; y?: number }
  | { type: "mouseUp"; x?: number; y?: number }
  | { type: "move"; x: number; y: number }
  | { type: "drag"; path: Point[] }
  | { type: "scroll"; x: number; y: number; deltaX: number; deltaY: number; keys?: string[] }
  | {
      type: "type";
      text: string;
      /** Click here first (Gemini's type_text_at). */
      at?: Point;
      /** Select all and delete before typing. */
      clearFirst?: boolean;
      pressEnter?: boolean;
    }
  | { type: "keyPress"; keys: string[] }
  | { type: "holdKey"; keys: string[]; ms: number }
  | { type: "wait"; ms: number }
  | { type: "goto"; url: string }
  | { type: "back" }
  | { type: "forward" }
  | { type: "screenshot" };

/** The viewport as the model sees it: its CSS size and the size of the screenshots the model gets. */
export interface Screen {
  width: number;
  height: number;
  /** The screenshot's size (smaller than the viewport when scaled down for the model). */
  shotWidth: number;
  shotHeight: number;
}

/** The longest screenshot edges a provider wants (larger viewports are scaled down to fit). */
export interface ShotLimit {
  maxWidth: number;
  maxHeight: number;
}

const SETTLE_MS = 2_000;
/** How long a wheel scroll may run on before the screenshot is taken anyway. */
const SCROLL_SETTLE_MS = 1_000;

export interface ComputerOptions extends TabWatchOptions {
  /** Typed text: %name% replaced by the variable's value; `secret` when a value went in. */
  substitute: (text: string) => { text: string; secret: boolean };
  highlightCursor?: boolean;
}

export class Computer {
  private readonly deadline: Deadline;
  private readonly tabs: TabWatch;
  private readonly substitute: ComputerOptions["substitute"];
  /** Whether a variable's value was typed into a field of the current document. */
  private secretsTyped = false;
  /** A scaled capture ran since the page last drew a frame of its own (see run). */
  private scaledShot = false;
  private cursor: Point = { x: 0, y: 0 };
  private readonly highlightCursor: boolean;

  constructor(page: Page, deadline: Deadline, options: ComputerOptions) {
    this.deadline = deadline;
    this.substitute = options.substitute;
    this.highlightCursor = options.highlightCursor ?? false;
    this.tabs = new TabWatch(page, deadline, options);
  }

  /** The tab the model sees and drives (see tabs.ts). */
  get page(): Page {
    return this.tabs.page;
  }

  dispose(): void {
    this.tabs.dispose();
  }

  /** What happened since the last call that the screenshot does not show (a dialog answered). */
  takeNotes(): string | undefined {
    return this.tabs.takeNotes();
  }

  /** Whether the run was cancelled (or timed out): nothing more is sent to the page. */
  get aborted(): boolean {
    return this.deadline.aborted;
  }

  /** Waits (briefly) for the page to be still, as before the model's first look at it. */
  async settle(): Promise<void> {
    await waitForSettled(this.page, this.deadline.cap(SETTLE_MS), this.deadline);
  }

  /** The viewport's CSS size now, and the screenshot size for `limit`. */
  async screen(limit: ShotLimit): Promise<Screen> {
    // The window's size, scrollbars included: what a person sees, and what mouse coordinates span.
    const { width, height } = await this.deadline.race(
      this.page.evaluate(() => ({ width: window.innerWidth, height: window.innerHeight })),
    );
    const scale = Math.min(1, limit.maxWidth / width, limit.maxHeight / height);
    return {
      width,
      height,
      shotWidth: Math.round(width * scale),
      shotHeight: Math.round(height * scale),
    };
  }

  /**
   * A PNG of the viewport at `screen.shotWidth` x `screen.shotHeight`. Fields a variable's value
   * was typed into show discs in it.
   */
  async screenshot(screen: Screen): Promise<Buffer> {
    this.deadline.check();
    const mask = this.secretsTyped;
    if (mask)
      await this.page
        .evaluate(setSecretMask, { attribute: SECRET_ATTRIBUTE, on: true })
        .catch(() => undefined);
    try {
      return await this.capture(screen);
    } finally {
      if (mask)
        await this.page
          .evaluate(setSecretMask, { attribute: SECRET_ATTRIBUTE, on: false })
          .catch(() => undefined);
    }
  }

  private async capture(screen: Screen): Promise<Buffer> {
    const metrics = await this.deadline.race(this.page.session.send("Page.getLayoutMetrics"));
    const { pageX, pageY } = metrics.cssVisualViewport;
    const { data } = await this.deadline.race(
      this.page.session.send("Page.captureScreenshot", {
        format: "png",
        // The clip is in page coordinates: the visible part, scaled to the size the model was told.
        clip: {
          x: pageX,
          y: pageY,
          width: screen.width,
          height: screen.height,
          scale: screen.shotWidth / screen.width,
        },
        captureBeyondViewport: false,
        fromSurface: true,
      }),
    );
    if (screen.shotWidth !== screen.width) this.scaledShot = true;
    return Buffer.from(data, "base64");
  }

  /** Runs one action with real input events, then waits (briefly) for the page to settle. */
  async run(action: ComputerAction): Promise<void> {
    this.deadline.check();
    const { page } = this;
    if (this.scaledShot) {
      // A scaled capture draws the page at another scale; the browser routes input into
      // out-of-process frames by where they were last drawn, so let the page draw itself again
      // first (a click sent at once into a cross-site iframe was seen to be lost).
      this.scaledShot = false;
      await this.deadline.race(page.evaluate(nextFrames)).catch((error: unknown) => {
        if (this.deadline.aborted) throw error;
      });
    }
    switch (action.type) {
      case "click": {
        const button = action.button ?? "left";
        if (button === "back" || button === "forward") {
          await this.navigate(button);
          break;
        }
        await this.withKeys(action.keys, () =>
          page.mouse.click(action.x, action.y, {
            button,
            clickCount: action.clickCount ?? 1,
          }),
        );
        this.cursor = { x: action.x, y: action.y };
        break;
      }
      case "mouseDown":
      case "mouseUp": {
        if (action.x !== undefined && action.y !== undefined) await this.moveTo({ x: action.x, y: action.y });
        if (action.type === "mouseDown") await page.mouse.down();
        else await page.mouse.up();
        break;
      }
      case "move":
        await this.moveTo(action);
        break;
      case "drag": {
        const [first, ...rest] = action.path;
        if (!first || rest.length === 0)
          throw new ServiceInvalidArgumentError("A drag needs at least two points (from and to).");
        await this.moveTo(first);
        await page.mouse.down();
        for (const point of rest) await page.mouse.move(point.x, point.y, { steps: 8 });
        await page.mouse.up();
        this.cursor = rest.at(-1) ?? first;
        break;
      }
      case "scroll": {
        await this.moveTo(action);
        // A wheel scroll runs on after the event is handled; the next screenshot must show where it ended.
        const watching = await page.evaluate(watchScroll).then(
          () => true,
          () => false,
        );
        await this.withKeys(action.keys, () => page.mouse.wheel(action.deltaX, action.deltaY));
        if (watching)
          await this.deadline.race(page.evaluate(scrollSettled, SCROLL_SETTLE_MS)).catch(() => undefined);
        break;
      }
      case "type": {
        if (action.at) {
          await page.mouse.click(action.at.x, action.at.y);
          this.cursor = action.at;
        }
        if (action.clearFirst) {
          await page.keyboard.press("Control+a");
          await page.keyboard.press("Delete");
        }
        const typed = this.substitute(action.text);
        await page.keyboard.type(typed.text, { signal: this.deadline.signal });
        // The field shows the value; screenshots show it as discs (the model never sees a value).
        if (typed.secret && (await page.evaluate(markFocusedField, SECRET_ATTRIBUTE).catch(() => false)))
          this.secretsTyped = true;
        if (action.pressEnter) await page.keyboard.press("Enter");
        break;
      }
      case "keyPress":
        await page.keyboard.press(chordKeys(action.keys).join("+"));
        break;
      case "holdKey": {
        const keys = chordKeys(action.keys);
        for (const key of keys) await page.keyboard.down(key);
        try {
          await this.deadline.sleep(action.ms);
        } finally {
          for (const key of [...keys].reverse()) await page.keyboard.up(key);
        }
        break;
      }
      case "wait":
        await this.deadline.sleep(action.ms);
        break;
      case "goto":
        await page.goto(webUrl(action.url), { deadline: this.deadline, waitUntil: "domcontentloaded" });
        break;
      case "back":
      case "forward":
        await this.navigate(action.type);
        break;
      case "screenshot":
        break;
    }
    if (this.highlightCursor) await this.showCursor().catch(() => undefined);
    // A tab opened by the action appears a moment later.
    await waitForSettled(page, this.deadline.cap(SETTLE_MS), this.deadline).catch((error: unknown) => {
      if (this.deadline.aborted) throw error;
    });
    if (await this.tabs.follow()) {
      this.secretsTyped = false;
      await waitForSettled(this.page, this.deadline.cap(SETTLE_MS), this.deadline);
    }
  }

  private async moveTo(point: Point): Promise<void> {
    await this.page.mouse.move(point.x, point.y);
    this.cursor = { x: point.x, y: point.y };
  }

  private async navigate(direction: "back" | "forward"): Promise<void> {
    const options = { deadline: this.deadline, waitUntil: "domcontentloaded" as const };
    if (direction === "back") await this.page.goBack(options);
    else await this.page.goForward(options);
  }

  private async withKeys(keys: string[] | undefined, run: () => Promise<void>): Promise<void> {
    const held = keys?.length ? chordKeys(keys) : [];
    for (const key of held) await this.page.keyboard.down(key);
    try {
      await run();
    } finally {
      for (const key of [...held].reverse()) await this.page.keyboard.up(key);
    }
  }

  /** A dot where the pointer is, so a person watching (or a recording) sees what the model does. */
  private async showCursor(): Promise<void> {
    await this.page.evaluate(drawCursor, this.cursor);
  }
}

/**
 * The URL a model asked to open, if the agent may open it: models write "example.com" (taken as
 * https), and a page's text can talk a model into anything, so the rule is the one every untrusted
 * caller obeys (agent-url.ts: http, https, data: and about:blank; file:, chrome:, javascript: and the
 * like are refused: the machine's files and the browser's own pages are not the task's).
 */
export function webUrl(url: string): string {
  const trimmed = url.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
  return agentPageUrl(withScheme);
}
