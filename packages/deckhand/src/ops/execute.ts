// Carrying out one step (a method on an element, or on the page) with real input events, and
// checking that it applied. What each method does and checks is in its table (methods.ts); here
// the step's element target (found once, and checked to be the one meant, by the caller) is acted
// on, variables are put in, and typed text is noted for later outlines.

import { type ElementTarget, targetHandle } from "../browser/element-target.ts";
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

/** The element of a step, found once before it (snapshot/ resolved it: see snapshot/describe.ts). */
export interface StepTarget {
  /** The node the step acts on. Its handle stays the caller's to release (releaseTarget). */
  element: ElementTarget;
  /**
   * How the element is named in errors, and how it is found again should it leave the page during
   * the step (a re-render while a click waits for an overlay): its absolute XPath, or the caller's
   * selector.
   */
  selector: string;
}

/** How long one action waits for its element to be ready (visible, uncovered, enabled). */
const ACTION_TIMEOUT = 3_000;

/** What a step needs of its operation: the page, and the operation's deadline. */
export interface StepContext {
  page: Page;
  deadline: Deadline;
}

/**
 * Runs `method` on the target (or the page) with real input events and checks that it applied.
 * The target was found once, before the step: every call of the step uses that node (no lookup
 * again), so the element acted on is the one that was checked. `args` may hold `%name%`
 * variables; they are replaced here, and nowhere else.
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
  const locator = target ? step.page.locatorFor(target.element, target.selector) : undefined;
  // Each locator wait of the step runs under a step of the operation's deadline limited to
  // ACTION_TIMEOUT (one of the documented exceptions in deadline.ts): the wait then fails with
  // what it waited for; the operation's own end (or its caller's cancel) still stops it at once,
  // and nothing acts after that.
  const waits: Deadline[] = [];
  const methodStep: MethodStep = {
    page: step.page,
    locator,
    selector: target?.selector ?? "the page",
    value,
    wait: (limitMs = ACTION_TIMEOUT) => {
      step.deadline.check();
      const wait = step.deadline.limited(`${method} ${target?.selector ?? "the page"}`, limitMs);
      waits.push(wait);
      return { deadline: wait };
    },
  };
  let ran: unknown;
  try {
    ran = await spec.run(methodStep);
    await spec.check(methodStep, ran);
  } finally {
    for (const wait of waits) wait.dispose();
  }
  if (spec.typesText && target) {
    await noteTypedText(step, target, {
      before: spec.typesText === "appends" ? ((ran as string | null) ?? "") : "",
      typed: written ?? "",
      secret: usesVariable(written ?? "", variables),
    });
  }
}

/** Tells the outline what was typed, so later snapshots show `%name%` where a variable's value is. */
async function noteTypedText(
  step: StepContext,
  target: StepTarget,
  text: { before: string; typed: string; secret: boolean },
): Promise<void> {
  try {
    const { frame } = target.element;
    if (await noteTyped(frame, await targetHandle(target.element), text)) return;
    // The typing made the page replace the field (a form that re-renders): the note belongs to the
    // field that shows the text now, found as the step's selector finds it.
    const found = await step.deadline.withLimit("finding the typed field again", 500, (deadline) =>
      step.page.deepLocator(target.selector).resolve({ deadline }),
    );
    try {
      await noteTyped(found.frame, found.handle, text);
    } finally {
      void found.frame.release(found.handle);
    }
  } catch {
    // The field left the page with the typing: there is nothing left to show, and the text did
    // land, so the step must not fail (and be typed again) for this.
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
