// The record-time locator check as the acts call it: an extension of the outline script
// (browser/injected-script.ts), installed on the outline's object the first time a step is
// recorded in a document, so that a document where no step runs never compiles it. Describing the
// element a step is about to act on (the outline's role and name) and checking which locators match
// it alone is one evaluation on its handle, not two (each is a round trip to the renderer, counted
// by `npm run bench -- --only=cdp-count`).
//
// Self-contained: `installStepElement` is sent to the page as source text.

import type { Locators } from "./locators.ts";
import type { Outline } from "./outline.ts";

export function installStepElement(outline: Outline, locators: Locators) {
  return {
    locate: locators.locate,
    frameSelector: locators.frameSelector,

    /**
     * The outline's describeNode, and the record-time locator check on the same element. The
     * check never fails the description: when it throws, `located` is left out (the caller asks
     * again on its own, and records the step without locators if that fails too).
     */
    describeForStep(
      el: Element,
      withXPath: boolean,
    ): ReturnType<Outline["describeNode"]> & { located?: ReturnType<Locators["locate"]> } {
      const described = outline.describeNode(el, withXPath);
      try {
        return { ...described, located: locators.locate(el, []) };
      } catch {
        return described;
      }
    },
  };
}

export type StepElement = ReturnType<typeof installStepElement>;
