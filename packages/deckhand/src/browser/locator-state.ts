// A locator's state queries and waits: whether its element is visible, checked, enabled; what it
// holds (value, text, HTML, box); how many match; waiting until it is attached, detached, visible
// or hidden (each retry written to the call log); and drawing a box over it for a person watching.

import { ServiceIframeError, ServiceInvalidArgumentError, ServiceTimeoutError } from "../errors.ts";
import { ActionableLocator } from "./actionability.ts";
import { domRuntime } from "./in-page.ts";
import { type ElementState, isInPageFailure } from "./injected/dom-runtime.ts";
import { type Attempt, explains, type TimeoutOption, withClosedRoots } from "./locator-resolve.ts";

export interface RgbaColor {
  r: number;
  g: number;
  b: number;
  /** 0-1; default 1. */
  a?: number;
}

function cssColor(color: string | RgbaColor | undefined): string | undefined {
  if (color === undefined || typeof color === "string") return color;
  const channel = (v: number) => Math.max(0, Math.min(255, Math.round(Number(v) || 0)));
  const alpha = color.a === undefined ? 1 : Math.max(0, Math.min(1, Number(color.a) || 0));
  return `rgba(${channel(color.r)}, ${channel(color.g)}, ${channel(color.b)}, ${alpha})`;
}

export abstract class LocatorState extends ActionableLocator {
  // ---------- queries ----------

  /** Whether the element exists now and is visible. Does not wait. */
  async isVisible(): Promise<boolean> {
    const result = await this.resolveOnce();
    if ("missing" in result) return false;
    try {
      return await result.frame.invoke(domRuntime, "isVisible", result.handle);
    } finally {
      this.letGo(result);
    }
  }

  async isChecked(options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement("isChecked", options, async ({ frame, handle }) => {
      const state = await frame.invoke(domRuntime, "state", handle);
      if (state.checked === null) {
        throw new ServiceInvalidArgumentError(
          `${JSON.stringify(this.selector)} is not a checkbox, radio or element with aria-checked.`,
          { reason: "not-checkable" },
        );
      }
      return state.checked;
    });
  }

  /**
   * What the element is now: connected, visible, enabled, checked, editable, focused, hovered, in
   * the viewport, a list to choose from, its tag, input type and explicit role.
   */
  async elementState(options: TimeoutOption = {}): Promise<ElementState> {
    return this.withElement("elementState", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "state", handle),
    );
  }

  async isEnabled(options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement(
      "isEnabled",
      options,
      async ({ frame, handle }) => (await frame.invoke(domRuntime, "state", handle)).enabled,
    );
  }

  async inputValue(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("inputValue", options, async ({ frame, handle }) => {
      const value = await frame.invoke(domRuntime, "inputValue", handle);
      if (isInPageFailure(value))
        throw new ServiceInvalidArgumentError(`inputValue(): ${value.detail}`, { reason: value.failed });
      return value;
    });
  }

  async textContent(options: TimeoutOption = {}): Promise<string | null> {
    return this.withElement("textContent", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "textContent", handle),
    );
  }

  async innerHTML(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("innerHTML", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "innerHTML", handle),
    );
  }

  /** innerHTML under the reference library's name. */
  innerHtml(options: TimeoutOption = {}): Promise<string> {
    return this.innerHTML(options);
  }

  /** The element's rendered text (hidden parts left out, line breaks as laid out). */
  async innerText(options: TimeoutOption = {}): Promise<string> {
    return this.withElement("innerText", options, ({ frame, handle }) =>
      frame.invoke(domRuntime, "innerText", handle),
    );
  }

  /**
   * Draws a box over the element for `durationMs` (default 800), so that a person watching the
   * browser sees which element it is. Changes nothing on the page the page itself can notice
   * beyond an extra element at the end of the body for that time.
   */
  async highlight(
    options: TimeoutOption & {
      durationMs?: number;
      /** A CSS color, or `{ r, g, b, a }` as the reference library takes it. */
      borderColor?: string | RgbaColor;
      contentColor?: string | RgbaColor;
    } = {},
  ): Promise<void> {
    const durationMs = options.durationMs ?? 800;
    if (!(typeof durationMs === "number" && durationMs >= 0 && durationMs <= 60_000)) {
      throw new ServiceInvalidArgumentError(
        `highlight: durationMs must be 0 to 60000 milliseconds, got ${String(options.durationMs)}.`,
      );
    }
    await this.withElement("highlight", options, async ({ frame, handle }) => {
      await frame.invoke(domRuntime, "scrollIntoView", handle);
      await frame.invoke(
        domRuntime,
        "highlight",
        handle,
        durationMs,
        cssColor(options.borderColor) ?? "rgb(255, 0, 102)",
        cssColor(options.contentColor) ?? "rgba(255, 0, 102, 0.15)",
      );
    });
  }

  /** The element's box in the top frame's viewport (CSS pixels), or null when it has none. */
  async boundingBox(
    options: TimeoutOption = {},
  ): Promise<{ x: number; y: number; width: number; height: number } | null> {
    return this.withElement("boundingBox", options, async ({ frame, handle }) => {
      const box = await frame.invoke(domRuntime, "boundingBox", handle);
      if (!box) return null;
      const origin = await this.page.toViewportPoint(frame, { x: box.x, y: box.y }, false);
      return origin.ok ? { x: origin.x, y: origin.y, width: box.width, height: box.height } : null;
    });
  }

  /** How many elements match now (0 when a frame on the way is missing). Does not wait. */
  async count(): Promise<number> {
    const entered = await this.enterFrames().catch(() => undefined);
    if (!entered || "missing" in entered) return 0;
    const { frame } = entered;
    const step = this.steps[this.steps.length - 1]!;
    const found = await withClosedRoots(
      frame,
      () => frame.invoke(domRuntime, "count", step.kind, step.value),
      (n) => typeof n === "number" && n > 0,
    );
    if (isInPageFailure(found)) throw this.stepError(step, found);
    return found;
  }

  /** Waits until the element is attached, detached, visible or hidden. */
  async waitFor(
    options: TimeoutOption & { state?: "attached" | "detached" | "visible" | "hidden" } = {},
  ): Promise<void> {
    const state = options.state ?? "visible";
    // Whether an element is there is a question for the selector, not for one node.
    this.pinned = undefined;
    const a = this.begin("waitFor", options, 30_000);
    try {
      a.deadline.log(`waitFor: waiting for ${this.named} to be ${state}`);
      await a.deadline.race(this.waitForState(a, state));
    } catch (error) {
      throw explains(error) ? a.deadline.explain(error) : error;
    } finally {
      if (a.owned) a.deadline.dispose();
    }
  }

  private async waitForState(
    a: Attempt,
    state: "attached" | "detached" | "visible" | "hidden",
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const result = await a.deadline.race(this.resolveOnce());
      if ("missing" in result && result.error && !(result.error instanceof ServiceIframeError))
        throw result.error;
      let attached = false;
      let visible = false;
      if (!("missing" in result)) {
        attached = true;
        visible = await result.frame.invoke(domRuntime, "isVisible", result.handle).catch(() => false);
        this.letGo(result);
      }
      const done =
        (state === "attached" && attached) ||
        (state === "detached" && !attached) ||
        (state === "visible" && visible) ||
        (state === "hidden" && !visible);
      if (done) return;
      if (this.outOfTime(a)) {
        throw new ServiceTimeoutError(
          `waitFor(${JSON.stringify(this.selector)}, state: "${state}")`,
          a.timeout ?? a.deadline.timeoutMs ?? 0,
        );
      }
      const now = !attached
        ? `no element matches ${this.missed({ missing: true, step: this.steps.length - 1 })}`
        : visible
          ? "element is visible"
          : "element is not visible";
      a.deadline.log(`${now} - retrying`);
      await a.deadline.sleep(Math.min(20 * (attempt + 1), 100));
    }
  }
}
