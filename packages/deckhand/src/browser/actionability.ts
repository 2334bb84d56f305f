// Actionability: where a pointer action on a locator's element should land, and whether it may.
// The element must be visible, enabled (for a click), not covered by another element at that
// point (the hit test), and reachable by the pointer in its frame; while it is not, the call
// retries, writing why to the call log ("<div id=consent> intercepts pointer events - retrying"),
// and when its time is over it fails with ServiceClickError saying which.

import {
  type FailureReason,
  ServiceClickError,
  ServiceElementNotFoundError,
  XPathResolutionError,
} from "../errors.ts";
import type { Frame } from "./frame.ts";
import { domRuntime } from "./in-page.ts";
import type { PointResult } from "./injected/dom-runtime.ts";
import { type Attempt, LocatorCore, type ResolvedElement, staleHandle } from "./locator-resolve.ts";
import { CoverWatch } from "./still-cover.ts";

export abstract class ActionableLocator extends LocatorCore {
  /**
   * Finds the point a pointer action should use, retrying while the element is covered, hidden,
   * disabled or replaced, and fails with ServiceClickError saying which when time runs out.
   */
  protected async actionPoint(
    a: Attempt,
    force: boolean | undefined,
    checkEnabled: boolean,
    arm?: "click" | "press",
  ): Promise<ActionPoint> {
    // Armed in the page with the point found (see pointerGesture); a point not used disarms.
    if (force) arm = undefined;
    let last: PointResult | undefined;
    let covers: CoverWatch | undefined;
    for (let attempt = 0; ; attempt++) {
      // A retry never starts after the deadline: a click that waited too long must not land late.
      if (attempt > 0 && this.outOfTime(a))
        throw new ServiceClickError(this.selector, explain(last), failureOf(last));
      let el: ResolvedElement;
      try {
        el = await this.resolveWithin(a);
      } catch (error) {
        // Found before, gone now: the page removed the element while the click waited for it.
        const gone = error instanceof ServiceElementNotFoundError || error instanceof XPathResolutionError;
        if (last && gone) {
          a.deadline.log("element was detached");
          throw new ServiceClickError(
            this.selector,
            `${explain({ ok: false, reason: "detached" })}; before that, ${explain(last)}`,
            "detached",
          );
        }
        throw error;
      }
      let armed = false;
      try {
        const point = await a.deadline.race(
          el.frame.invoke(domRuntime, "actionPoint", el.handle, checkEnabled && !force, arm),
        );
        armed = arm !== undefined && point.ok;
        if (point.ok || force) {
          const inFrame = point.ok ? point : await this.centerOf(el);
          const inPage = await a.deadline.race(this.page.toViewportPoint(el.frame, inFrame, !force, true));
          if (inPage.ok && (force || (await this.pointerReaches(el.frame, inPage, a)))) {
            armed = false;
            return { x: inPage.x, y: inPage.y, ...(arm ? { armedIn: el.frame } : {}) };
          }
          last = inPage.ok ? { ok: false, reason: "covered", detail: UNREACHED } : inPage;
        } else {
          last = point;
          if (point.reason === "detached") this.unpin(el);
          // A cover that stays put on a page where nothing happens will not go away by itself.
          covers ??= new CoverWatch(el.frame);
          if (point.reason === "covered" && covers.still(point.detail, point.cover)) {
            a.deadline.log(`${retryLine(last)} - it does not move and the page is still`);
            throw new ServiceClickError(this.selector, explain(last), failureOf(last));
          }
        }
      } catch (error) {
        // The target's handle outlived its document (the frame navigated): look the selector up.
        if (!(el.pinned && staleHandle(error))) throw error;
        a.deadline.log("the element's document went away - finding it again");
        this.unpin(el);
        continue;
      } finally {
        if (armed) void disarm(el.frame);
        this.letGo(el);
      }
      if (this.outOfTime(a)) throw new ServiceClickError(this.selector, explain(last), failureOf(last));
      a.deadline.log(`${retryLine(last)} - retrying`);
      await a.deadline.sleep(Math.min(30 * (attempt + 1), 150));
    }
  }

  /**
   * Carries out a pointer gesture (`gesture`, at the point it is given) on the element, guarded
   * against the page moving between the hit test and the input: the point is found with the
   * pointer check armed in the element's frame, and if the gesture's first press reached
   * something else there (for a click, any press or release: `kind`), the page never saw that
   * event nor the rest of the gesture, and it is tried again from a new hit test, within the same
   * deadline. A check that never saw the gesture (the pointer went to another frame) cannot tell,
   * and counts as reached. `force` skips the check with the others.
   */
  protected async pointerGesture(
    a: Attempt,
    force: boolean | undefined,
    checkEnabled: boolean,
    kind: "click" | "press",
    gesture: (point: { x: number; y: number }) => Promise<void>,
  ): Promise<void> {
    for (let tries = 0; ; tries++) {
      // At once after a first miss (a layout shift is over); then as actionPoint waits.
      if (tries > 1) await a.deadline.sleep(Math.min(30 * tries, 150));
      const point = await this.actionPoint(a, force, checkEnabled, kind);
      let hit: string | null | undefined;
      try {
        a.deadline.check();
        await gesture(point);
      } finally {
        // Disarmed whatever happened, so a failed call leaves no check behind in the page.
        if (point.armedIn) hit = await disarm(point.armedIn);
      }
      if (!hit) return;
      if (this.outOfTime(a)) {
        throw new ServiceClickError(
          this.selector,
          `${hit} was hit instead: the page kept moving it under the pointer`,
          "covered",
        );
      }
      a.deadline.log(`${hit} was hit instead after the page moved - retrying`);
    }
  }

  /**
   * Whether the pointer at `point` reaches `frame`. The browser routes input to an out-of-process
   * frame by where it was last drawn, which lags behind a scroll or a layout change: a mouse move
   * there, which the frame counts, tells before anything is pressed.
   */
  protected async pointerReaches(
    frame: Frame,
    point: { x: number; y: number },
    a: Attempt,
  ): Promise<boolean> {
    let crossesProcesses = false;
    for (let f: Frame | undefined = frame; f?.parent; f = f.parent) crossesProcesses ||= f.isOutOfProcess;
    if (!crossesProcesses) return true;
    const before = await frame.invoke(domRuntime, "mouseMoves");
    a.deadline.check();
    await this.page.mouse.move(point.x, point.y);
    return (await frame.invoke(domRuntime, "mouseMoves")) > before;
  }

  protected async centerOf(el: ResolvedElement): Promise<{ x: number; y: number }> {
    const box = await el.frame.invoke(domRuntime, "boundingBox", el.handle);
    if (!box) throw new ServiceClickError(this.selector, "the element has no box to click", "not-visible");
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  }
}

/** Where a pointer action lands, in the top frame's viewport; `armedIn`: the frame of its check. */
export interface ActionPoint {
  x: number;
  y: number;
  armedIn?: Frame;
}

/**
 * Ends a pointer check armed in `frame` and reads what was hit instead of the target (null: the
 * target, or nothing could tell). The document may have gone with the gesture (a link followed):
 * its check went with it.
 */
async function disarm(frame: Frame): Promise<string | null> {
  return (await frame.invokeInPlace(domRuntime, "disarmHitCheck").catch(() => undefined)) ?? null;
}

/** The reason of a point that could not be clicked (covered when nothing more precise is known). */
function failureOf(result: PointResult | undefined): FailureReason {
  return result && !result.ok ? result.reason : "covered";
}

const UNREACHED = "something the frame cannot see (the pointer there does not reach the frame)";

/**
 * What a point that could not be used says: in the error when time is over ("it is covered by
 * another element: ..."), and in the call log line of a retry ("... intercepts pointer events").
 */
function pointProblem(result: PointResult | { ok: false; reason: string; detail?: string } | undefined): {
  error: string;
  line: string;
} {
  if (!result || result.ok)
    return { error: "it never became clickable", line: "element is not clickable yet" };
  switch (result.reason) {
    case "detached":
      return { error: "the element was detached from the document", line: "element was detached" };
    case "not-visible":
      return {
        error: "the element is not visible (hidden, zero size, or scrolled out of reach)",
        line: "element is not visible",
      };
    case "covered":
      return {
        error: `it is covered by another element: ${result.detail ?? "unknown"}`,
        line:
          result.detail === UNREACHED
            ? "the pointer there does not reach the element's frame"
            : `${result.detail ?? "another element"} intercepts pointer events`,
      };
    case "disabled":
      return { error: "the element is disabled", line: "element is disabled" };
    default:
      return { error: result.detail ?? result.reason, line: result.detail ?? result.reason };
  }
}

function explain(result: Parameters<typeof pointProblem>[0]): string {
  return pointProblem(result).error;
}

function retryLine(result: PointResult | undefined): string {
  return pointProblem(result).line;
}
