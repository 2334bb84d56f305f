// The outline script as the acts call it: the outline (outline.ts) with the record-time locator
// check (locators.ts) beside it, so that describing the element a step is about to act on and
// checking which locators match it alone is one evaluation on its handle, not two (each is a
// round trip to the renderer, counted by `npm run bench -- --only=cdp-count`).
//
// Self-contained: `installStepElement` is sent to the page as source text.

import type { Locators } from "./locators.ts";
import type { Outline } from "./outline.ts";

export function installStepElement(outline: Outline, locators: Locators) {
  return {
    ...outline,
    locate: locators.locate,
    frameSelector: locators.frameSelector,

    /**
     * describeNode, and with `locate` the record-time locator check on the same element. The
     * check never fails the description: when it throws, `located` is left out (the caller asks
     * again on its own, and records the step without locators if that fails too).
     */
    describeForStep(
      el: Element,
      withXPath: boolean,
      locate: boolean,
    ): ReturnType<Outline["describeNode"]> & { located?: ReturnType<Locators["locate"]> } {
      const described = outline.describeNode(el, withXPath);
      if (!locate) return described;
      try {
        return { ...described, located: locators.locate(el, []) };
      } catch {
        return described;
      }
    },
  };
}

export type StepElement = ReturnType<typeof installStepElement>;
