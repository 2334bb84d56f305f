// Carrying out one step (a method on an element, or on the page) with real input events, and
// checking that it applied. What each method does and checks is in its table (methods.ts); here
// the element is found and checked to be the one meant, variables are put in, and typed text is
// noted for later outlines.

import type { Locator } from "../browser/locator.ts";
import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import {
  type FailureReason,
  ServiceDomProcessError,
  ServiceElementNotFoundError,
  ServiceError,
  ServiceEvalError,
  ServiceInvalidArgumentError,
} from "../errors.ts";
import { noteTyped } from "../snapshot/describe.ts";
import type { Variables } from "../types.ts";
import { type ActMethod, type MethodStep, methodSpec } from "./methods.ts";
import { substitute, usesVariable } from "./variables.ts";

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

/** The target's locator, once it is checked to lead to the node meant. */
async function checkedLocator(step: StepContext, target: StepTarget): Promise<Locator> {
  const locator = step.page.deepLocator(target.selector);
  if (target.expectedNode === undefined) return locator;
  const { frame, handle } = await locator.resolve(waitOptions(step, 1_000));
  try {
    const node = await frame.backendNodeId(handle);
    if (node !== target.expectedNode) {
      throw new ServiceElementNotFoundError(
        target.selector,
        "(it now leads to a different element than the one chosen)",
        "element-changed",
      );
    }
  } finally {
    void frame.release(handle);
  }
  return locator;
}

/**
 * Runs `method` on the target (or the page) with real input events and checks that it applied.
 * `args` may hold `%name%` variables; they are replaced here, and nowhere else.
 */
export async function runStep(
  step: StepContext,
  target: StepTarget | undefined,
  method: ActMethod,
  args: string[],
  variables: Variables | undefined,
): Promise<void> {
  const spec = methodSpec(method);
  step.deadline.check();
  if (!target && spec.element === "required")
    throw new ServiceElementNotFoundError("(none)", `(the ${method} action needs an element)`);
  const written = args[0];
  if (spec.argument?.required && !written) {
    throw new ServiceInvalidArgumentError(`${method} needs arguments[0]: ${spec.argument.means}.`);
  }
  const value = written ? substitute(written, variables) : (spec.argument?.fallback ?? "");
  const locator = target ? await checkedLocator(step, target) : undefined;
  const methodStep: MethodStep = {
    page: step.page,
    locator,
    selector: target?.selector ?? "the page",
    value,
    wait: () => waitOptions(step),
  };
  const ran = await spec.run(methodStep);
  await spec.check(methodStep, ran);
  if (spec.typesText && locator) {
    await noteTypedText(locator, {
      before: spec.typesText === "appends" ? ((ran as string | null) ?? "") : "",
      typed: written ?? "",
      secret: usesVariable(written ?? "", variables),
    });
  }
}

/** Tells the outline what was typed, so later snapshots show `%name%` where a variable's value is. */
async function noteTypedText(
  locator: Locator,
  text: { before: string; typed: string; secret: boolean },
): Promise<void> {
  try {
    const { frame, handle } = await locator.resolve({ timeout: 500 });
    try {
      await noteTyped(frame, handle, text);
    } finally {
      void frame.release(handle);
    }
  } catch {
    // The field left the page with the typing (a form that re-renders): there is nothing left to
    // show, and the text did land, so the step must not fail (and be typed again) for this.
  }
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
  "not-focusable",
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

/**
 * Reasons that mean the element is no longer where it was (gone, replaced, moved): worth finding
 * it again from its description. An element that is there but cannot take the method (a text
 * field asked to select an option) is not: finding it again would find the same element.
 */
const MOVED = new Set<FailureReason>([
  "not-found",
  "element-changed",
  "detached",
  "stale-snapshot",
  "not-a-frame",
]);

/** Whether act(action) should find the element again (self-heal) after this error. */
export function elementMoved(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  return error.reason !== undefined ? MOVED.has(error.reason) : isRecoverable(error);
}
