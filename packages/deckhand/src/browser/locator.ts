// Locator: an element on a page, found afresh for every call, waited for up to a timeout (or the
// operation's deadline) and acted on with real input events. This file holds the public class and
// its actions (click, fill, type, press, select, check, files, scroll, drag); it is built in floors:
// locator-resolve.ts (finding the element through frames and shadow roots; each call under its
// deadline), actionability.ts (where a pointer action lands, and whether it may), locator-state.ts
// (state queries and waits).

import { readFile } from "node:fs/promises";
import { basename, resolve as resolvePath } from "node:path";
import { ServiceClickError, ServiceElementNotFoundError, ServiceInvalidArgumentError } from "../errors.ts";
import { domRuntime } from "./in-page.ts";
import { isInPageFailure } from "./injected/dom-runtime.ts";
import type { ClickOptions } from "./input.ts";
import type { TimeoutOption } from "./locator-resolve.ts";
import { LocatorState } from "./locator-state.ts";

export {
  DEFAULT_ACTION_TIMEOUT,
  type LocatorOptions,
  type ResolvedElement,
  type TimeoutOption,
} from "./locator-resolve.ts";
export type { RgbaColor } from "./locator-state.ts";

export type FilePayload = { name: string; mimeType: string; buffer: Uint8Array };

export class Locator extends LocatorState {
  /** The n-th match (0-based; negative counts from the end). Choosing one is never a strict violation. */
  nth(index: number): Locator {
    return new Locator(this.page, this.frame, this.selector, this.deep, index);
  }

  first(): Locator {
    return this.nth(0);
  }

  // ---------- actions ----------

  /** A real mouse click at the element's visible point, after scrolling it into view. */
  async click(options: ClickOptions & TimeoutOption & { force?: boolean } = {}): Promise<void> {
    await this.within("click", options, (a) =>
      this.pointerGesture(a, options.force, true, "click", (point) =>
        this.page.mouse.click(point.x, point.y, options),
      ),
    );
  }

  async dblclick(options: Omit<ClickOptions, "clickCount"> & TimeoutOption = {}): Promise<void> {
    await this.click({ ...options, clickCount: 2 });
  }

  async hover(options: TimeoutOption = {}): Promise<void> {
    await this.within("hover", options, async (a) => {
      const point = await this.actionPoint(a, false, false);
      a.deadline.check();
      await this.page.mouse.move(point.x, point.y);
    });
  }

  /** Replaces the element's content with `value` (input, textarea, contenteditable). */
  async fill(value: string, options: TimeoutOption = {}): Promise<void> {
    if (typeof value !== "string")
      throw new ServiceInvalidArgumentError(`fill() needs a string, got ${typeof value}.`);
    await this.withElement("fill", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const mode = await frame.invoke(domRuntime, "prepareFill", handle, value);
      if (isInPageFailure(mode)) {
        throw new ServiceInvalidArgumentError(
          `Cannot fill ${JSON.stringify(this.selector)}: ${mode.detail}`,
          {
            reason: mode.failed,
          },
        );
      }
      if (mode === "done") return;
      a.deadline.check();
      if (value === "") await this.page.keyboard.press("Delete");
      else await this.page.keyboard.insertText(value);
    });
  }

  /** Focuses the element and types text key by key (appending to what is there). */
  async type(text: string, options: TimeoutOption & { delay?: number } = {}): Promise<void> {
    await this.withElement("type", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
      a.deadline.check();
      await this.page.keyboard.type(text, { ...options, signal: a.deadline.signal });
    });
  }

  /** Gives the element the keyboard focus (as a click or Tab would). */
  async focus(options: TimeoutOption = {}): Promise<void> {
    await this.withElement("focus", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
    });
  }

  /** Focuses the element and presses a key or combination ("Enter", "Control+A"). */
  async press(key: string, options: TimeoutOption & { delay?: number } = {}): Promise<void> {
    await this.withElement("press", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      await frame.invoke(domRuntime, "focus", handle);
      a.deadline.check();
      await this.page.keyboard.press(key, options);
    });
  }

  /** Selects options of a <select> by value or label. Returns the selected values. */
  async selectOption(values: string | string[], options: TimeoutOption = {}): Promise<string[]> {
    const wanted = Array.isArray(values) ? values : [values];
    return this.withElement("selectOption", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const selected = await frame.invoke(domRuntime, "selectOptions", handle, wanted);
      if (isInPageFailure(selected)) {
        throw new ServiceInvalidArgumentError(
          `Cannot select in ${JSON.stringify(this.selector)}: ${selected.detail}`,
          { reason: selected.failed },
        );
      }
      return selected;
    });
  }

  /** Checks a checkbox or radio (by clicking it, as a user would) unless it already is. */
  async check(options: TimeoutOption = {}): Promise<void> {
    await this.setChecked(true, options);
  }

  async uncheck(options: TimeoutOption = {}): Promise<void> {
    await this.setChecked(false, options);
  }

  private async setChecked(wanted: boolean, options: TimeoutOption): Promise<void> {
    if ((await this.isChecked(options)) === wanted) return;
    await this.click(options);
    // The box is read back at once after the click: a short limit of its own, within the caller's.
    const now = options.deadline
      ? await options.deadline.withLimit("reading the box back", 500, (deadline) =>
          this.isChecked({ deadline }),
        )
      : await this.isChecked({ ...options, timeout: 500 });
    if (now !== wanted) {
      throw new ServiceClickError(
        this.selector,
        `clicking did not ${wanted ? "check" : "uncheck"} it`,
        "not-applied",
      );
    }
  }

  /** Sets the files of an <input type=file>: paths on disk, or in-memory files. */
  async setInputFiles(
    files: string | string[] | FilePayload | FilePayload[],
    options: TimeoutOption = {},
  ): Promise<void> {
    const list = (Array.isArray(files) ? files : [files]) as (string | FilePayload)[];
    const payloads = await Promise.all(
      list.map(async (f) => {
        if (typeof f !== "string") return f;
        const path = resolvePath(f);
        const buffer = await readFile(path).catch(() => {
          throw new ServiceInvalidArgumentError(`setInputFiles: cannot read ${path}.`);
        });
        return { name: basename(path), mimeType: mimeTypeOf(path), buffer };
      }),
    );
    await this.withElement("setInputFiles", options, async ({ frame, handle }, a) => {
      a.deadline.check();
      const encoded = payloads.map((p) => ({
        name: p.name,
        mimeType: p.mimeType,
        base64: Buffer.from(p.buffer).toString("base64"),
      }));
      const failure = await frame.invoke(domRuntime, "setFiles", handle, encoded);
      if (failure) {
        throw new ServiceInvalidArgumentError(
          `Cannot set files on ${JSON.stringify(this.selector)}: ${failure.detail}`,
          { reason: failure.failed },
        );
      }
    });
  }

  async scrollIntoView(options: TimeoutOption = {}): Promise<void> {
    await this.withElement("scrollIntoView", options, ({ frame, handle }, a) => {
      a.deadline.check();
      return frame.invoke(domRuntime, "scrollIntoView", handle);
    });
  }

  /**
   * Scrolls the element's content by about a page (`"down"` or `"up"`). Resolves to whether it
   * moved (false at the end, or for an element that does not scroll).
   */
  async scrollByPage(direction: "down" | "up" = "down", options: TimeoutOption = {}): Promise<boolean> {
    return this.withElement("scrollByPage", options, ({ frame, handle }, a) => {
      a.deadline.check();
      return frame.invoke(domRuntime, "scrollByPage", handle, direction === "up" ? -1 : 1);
    });
  }

  /** Drags this element onto another with real mouse movements. */
  async dragTo(target: Locator, options: TimeoutOption = {}): Promise<void> {
    // The press on this element is guarded (see pointerGesture); the drop is hit-tested before,
    // and its release is meant to land elsewhere than the press.
    await this.within("dragTo", options, (a) =>
      this.pointerGesture(a, false, false, "press", async (from) => {
        const to = await target.actionPoint(a, false, false);
        a.deadline.check();
        await this.page.dragAndDrop(from, to);
      }),
    );
  }

  /** The centre of the element's box in the top frame's viewport, rounded to CSS pixels. */
  async centroid(options: TimeoutOption = {}): Promise<{ x: number; y: number }> {
    await this.scrollIntoView(options);
    const box = await this.boundingBox(options);
    if (!box) {
      throw new ServiceElementNotFoundError(
        this.selector,
        "(it has no box: hidden or not rendered)",
        "not-visible",
      );
    }
    return { x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) };
  }
}

const MIME: Record<string, string> = {
  txt: "text/plain",
  html: "text/html",
  json: "application/json",
  csv: "text/csv",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
};

function mimeTypeOf(path: string): string {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  return MIME[ext] ?? "application/octet-stream";
}
