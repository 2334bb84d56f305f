// Carrying out one action on one element with real input events, and checking that it landed.

import type { Locator } from "../browser/locator.ts";
import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import {
  type FailureReason,
  ServiceClickError,
  ServiceDomProcessError,
  ServiceElementNotFoundError,
  ServiceError,
  ServiceEvalError,
  ServiceInvalidArgumentError,
} from "../errors.ts";
import { noteTyped as noteTypedText } from "../snapshot/describe.ts";
import type { Variables } from "../types.ts";
import type { ActMethod } from "./prompts.ts";
import { substitute, usesVariable } from "./variables.ts";

/** Method names a model or a caller may use, mapped to Deckhand's own. */
const ALIASES: Record<string, ActMethod> = {
  click: "click",
  doubleclick: "doubleClick",
  dblclick: "doubleClick",
  fill: "fill",
  type: "type",
  press: "press",
  presskey: "press",
  keypress: "press",
  hover: "hover",
  selectoption: "selectOption",
  selectoptionfromdropdown: "selectOption",
  select: "selectOption",
  check: "check",
  uncheck: "uncheck",
  scrollintoview: "scrollIntoView",
  scrollto: "scrollIntoView",
  scrollbypage: "scrollByPage",
  nextchunk: "scrollByPage",
  prevchunk: "scrollByPage",
  draganddrop: "dragAndDrop",
  dragto: "dragAndDrop",
};

export function normalizeMethod(method: string | undefined): ActMethod {
  const key = (method ?? "click").replace(/[^a-z]/gi, "").toLowerCase();
  const known = ALIASES[key];
  if (!known) {
    throw new ServiceInvalidArgumentError(
      `Unknown action method ${JSON.stringify(method)}. Use one of: ${[...new Set(Object.values(ALIASES))].join(", ")}.`,
    );
  }
  return known;
}

export interface StepTarget {
  /** Absolute XPath (through frames and shadow roots) or any selector a deep locator takes. */
  selector: string;
  /** The backend node id the selector must still lead to (when known): a different node is a failure. */
  expectedNode?: number;
}

/** How long one action waits for its element to be ready (visible, uncovered, enabled). */
const ACTION_TIMEOUT = 3_000;

/** What a step needs of its operation: the page, and the operation's deadline. */
export interface StepContext {
  page: Page;
  deadline: Deadline;
}

/**
 * Options of one locator wait of a step: ACTION_TIMEOUT, never past the operation's deadline, and
 * its cancellation (an abandoned operation must not act later: a click that waited for an overlay
 * to go away would otherwise still land after the caller got ServiceTimeoutError).
 */
function waitOptions(step: StepContext, limit = ACTION_TIMEOUT): { timeout: number; signal: AbortSignal } {
  step.deadline.check();
  return { timeout: step.deadline.cap(limit), signal: step.deadline.signal };
}

/** Resolves the target, checks it is the node we meant, and runs `fn` on its locator. */
async function withTarget<R>(
  step: StepContext,
  target: StepTarget,
  fn: (locator: Locator) => Promise<R>,
): Promise<R> {
  const locator = step.page.deepLocator(target.selector);
  if (target.expectedNode !== undefined) {
    const { frame, handle } = await locator.resolve(waitOptions(step, 1_000));
    try {
      const node = await frame.backendNodeId(handle);
      if (node !== target.expectedNode) {
        throw new ServiceElementNotFoundError(
          target.selector,
          "(it now leads to a different element than the one chosen)",
        );
      }
    } finally {
      void frame.release(handle);
    }
  }
  return fn(locator);
}

/**
 * Runs `method` on the target with real input events. `args` may hold `%name%` variables; they
 * are replaced here, and nowhere else.
 */
export async function runStep(
  step: StepContext,
  target: StepTarget | undefined,
  method: ActMethod,
  args: string[],
  variables: Variables | undefined,
): Promise<void> {
  const { page } = step;
  const arg = (i: number) => substitute(args[i] ?? "", variables);
  const timeout = () => waitOptions(step);
  step.deadline.check();
  if (!target) {
    // Page-level actions: keys to whatever has focus, scrolling the page.
    if (method === "press") {
      await page.keyPress(arg(0) || "Enter");
      return;
    }
    if (method === "scrollByPage") {
      await page.scrollByPage(direction(arg(0)));
      return;
    }
    throw new ServiceElementNotFoundError("(none)", `(the ${method} action needs an element)`);
  }
  return withTarget(step, target, async (locator) => {
    switch (method) {
      case "click":
        await locator.click(timeout());
        return;
      case "doubleClick":
        await locator.dblclick(timeout());
        return;
      case "hover":
        await locator.hover(timeout());
        return;
      case "fill":
      case "type": {
        const value = arg(0);
        const before = method === "type" ? await currentValue(locator) : "";
        if (method === "fill") await locator.fill(value, timeout());
        else await locator.type(value, timeout());
        const after = await currentValue(locator);
        if (after !== null && before !== null && after !== before + value && after !== value) {
          throw new ServiceClickError(
            target.selector,
            "the text did not land in the field (it holds something else now)",
          );
        }
        const typed = args[0] ?? "";
        await noteTyped(
          locator,
          method === "type" ? (before ?? "") : "",
          typed,
          after ?? value,
          usesVariable(typed, variables),
        );
        return;
      }
      case "press":
        await locator.press(arg(0) || "Enter", timeout());
        return;
      case "selectOption": {
        const wanted = arg(0);
        const selected = await locator.selectOption(wanted, timeout()).catch((error: unknown) => {
          if (error instanceof ServiceError && error.reason === "not-a-select") return undefined;
          throw error;
        });
        // Not a native <select>: a custom dropdown opens on click (the next step picks the option).
        if (selected === undefined) await locator.click(timeout());
        return;
      }
      case "check":
        await locator.check(timeout());
        return;
      case "uncheck":
        await locator.uncheck(timeout());
        return;
      case "scrollIntoView":
        await locator.scrollIntoView(timeout());
        return;
      case "scrollByPage":
        await locator.scrollByPage(direction(arg(0)), timeout());
        return;
      case "dragAndDrop": {
        if (!args[0]) throw new ServiceInvalidArgumentError("dragAndDrop needs the element to drop onto.");
        await locator.dragTo(page.deepLocator(args[0]), timeout());
        return;
      }
    }
  });
}

async function currentValue(locator: Locator): Promise<string | null> {
  return locator.inputValue({ timeout: 500 }).catch(() => null);
}

/** Tells the outline what was typed, so later snapshots show `%name%` where a variable's value is. */
async function noteTyped(
  locator: Locator,
  before: string,
  typed: string,
  value: string,
  secret: boolean,
): Promise<void> {
  try {
    const { frame, handle } = await locator.resolve({ timeout: 500 });
    try {
      await noteTypedText(frame, handle, { before, typed, value, secret });
    } finally {
      void frame.release(handle);
    }
  } catch {
    // The field left the page with the typing (a form that re-renders): there is nothing left to
    // show, and the text did land, so the step must not fail (and be typed again) for this.
  }
}

/** "down" or "up" from what a model or caller wrote ("up", "previous", "back" mean up). */
function direction(text: string): "down" | "up" {
  return /up|prev|back/i.test(text) ? "up" : "down";
}

/**
 * Reasons that mean "that element was not there, or could not take the method right now": worth
 * reading the page again (the model may choose better), as opposed to a timeout, a model or
 * configuration problem, or a closed browser.
 */
const RECOVERABLE = new Set<FailureReason>([
  "not-found",
  "element-changed",
  "detached",
  "not-visible",
  "covered",
  "disabled",
  "read-only",
  "not-editable",
  "not-a-select",
  "not-a-file-input",
  "not-checkable",
  "no-such-option",
  "too-many-options",
  "invalid-value",
  "not-applied",
  "shadow-root-missing",
  "not-a-frame",
  "frame-not-ready",
  "stale-snapshot",
]);

/** Whether an error is worth reading the page again for (see RECOVERABLE). */
export function isRecoverable(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  if (error.reason !== undefined) return RECOVERABLE.has(error.reason);
  // A page script that threw (the page changed under it) is worth another look too.
  return error instanceof ServiceEvalError || error instanceof ServiceDomProcessError;
}
