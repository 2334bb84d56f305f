// Operations read pages that are not still yet as a user would see them once they are: content a
// timer renders after load, a single-page app's route change after a click, results that arrive
// over the network, a spinner that gives way to the data. The scripted model answers from the
// outline it is shown (an element that is not in it is "nothing fits"), so a test fails if an
// operation read the page too early.

import type { ScriptedRequest } from "@deckhand/testkit";
import { match } from "@deckhand/testkit";
import type { Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MODES, type OpsFixture, onAct, open, opsFixture, requestsOf, step, textOf } from "./helpers.ts";

/** The requests of `operation` the model receives while `run` runs. */
async function asked<T>(
  fx: OpsFixture,
  operation: string,
  run: () => Promise<T>,
): Promise<[T, ScriptedRequest[]]> {
  const before = requestsOf(fx.model, operation).length;
  const value = await run();
  return [value, requestsOf(fx.model, operation).slice(before)];
}

/** Clicks the element whose outline line matches `line`, or answers "nothing fits" when there is none. */
function clickIfShown(line: RegExp) {
  return (request: ScriptedRequest) => {
    const found = new RegExp(`\\[(\\d+)\\] ${line.source}`).exec(request.lastUserText);
    return found
      ? step({ elementId: Number(found[1]), method: "click", description: `click ${line.source}` })
      : step({ elementId: -1, method: "click", description: `${line.source} is not on the page` });
  };
}

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
  });
  afterAll(async () => {
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  it("acts on content a timer renders within a second after load, right after goto()", async () => {
    const page = await open(fx, "unsettled/timer.html?ms=600");
    onAct(fx.model, clickIfShown(/button: Continue/));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("click Continue"));
    expect(result.success).toBe(true);
    expect(await textOf(page, "#result")).toBe("continued");
    // The page was read once it had rendered: one question was enough.
    expect(questions).toHaveLength(1);
  });

  it("waits for a timer the page set while loading, however late its script ran", async () => {
    // Its script runs 700 ms after the navigation began (later on a busy machine): the timer it
    // sets is due after the document's first second, and still part of its loading.
    const page = await open(fx, "unsettled/late-timer.html");
    onAct(fx.model, clickIfShown(/button: Continue/));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("click Continue"));
    expect(result.success).toBe(true);
    expect(await textOf(page, "#result")).toBe("continued");
    expect(questions).toHaveLength(1);
  });

  // The page renders its button while the model is answering the first question (the test makes
  // it do so before the model's answer goes out), so the answer "nothing fits" comes from a page
  // that has changed since: the operation must look again. What the page does is tied to the
  // operation's own steps, not to the clock: the same on an idle or a busy machine.
  const renderWhileAnswering = (page: Page, answer: (request: ScriptedRequest) => object) => {
    let rendered = false;
    return async (request: ScriptedRequest) => {
      const value = answer(request);
      if (!rendered) {
        rendered = true;
        await page.evaluate("window.renderContinue()");
      }
      return value;
    };
  };

  it("looks once more when the page changed while the model found nothing, and acts on what appeared", async () => {
    const page = await open(fx, "unsettled/timer.html?ms=manual");
    onAct(fx.model, renderWhileAnswering(page, clickIfShown(/button: Continue/)));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("click Continue"));
    expect(result.success).toBe(true);
    expect(await textOf(page, "#result")).toBe("continued");
    expect(questions).toHaveLength(2);
    expect(questions[0]!.lastUserText).not.toContain("button: Continue");
  });

  it("observe looks once more too, and finds what the page rendered meanwhile", async () => {
    const page = await open(fx, "unsettled/timer.html?ms=manual");
    fx.model.on(
      match.schemaName("observe"),
      renderWhileAnswering(page, (request) => {
        const found = /\[(\d+)\] button: Continue/.exec(request.lastUserText);
        return { elements: found ? [{ elementId: Number(found[1]), description: "Continue" }] : [] };
      }),
    );
    const [actions, questions] = await asked(fx, "observe", () => fx.dh.observe("find the Continue button"));
    expect(actions.map((a) => a.description)).toEqual(["Continue"]);
    expect(questions).toHaveLength(2);
    expect(questions[0]!.lastUserText).not.toContain("button: Continue");
  });

  it("fails without a second question when an old, still page has nothing that fits", async () => {
    await open(fx, "unsettled/timer.html?ms=60000");
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    onAct(fx.model, clickIfShown(/button: Continue/));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("click Continue"));
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/No element on the page fits/);
    expect(questions).toHaveLength(1);
  });

  it("follows a single-page app's route change after a click: the next act finds the new view", async () => {
    const page = await open(fx, "unsettled/spa.html");
    onAct(fx.model, clickIfShown(/button: Settings/));
    expect((await fx.dh.act("open the settings")).success).toBe(true);
    fx.model.clear();
    onAct(fx.model, clickIfShown(/button: Save settings/));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("save the settings"));
    expect(result.success).toBe(true);
    expect(await textOf(page, "#result")).toBe("saved");
    expect(page.url()).toMatch(/\/unsettled\/settings$/);
    // The view was read after it arrived, not while its spinner showed: one question.
    expect(questions).toHaveLength(1);
    expect(questions[0]!.lastUserText).not.toContain("Loading");
  });

  it("extracts results that arrive over the network after a click", async () => {
    await open(fx, "unsettled/search.html");
    onAct(fx.model, clickIfShown(/button: Search/));
    expect((await fx.dh.act("search")).success).toBe(true);
    // The model lists the results the outline shows.
    fx.model.on(match.schemaName("extract"), (request) => ({
      results: [...request.lastUserText.matchAll(/Result (\w+)/g)].map((m) => m[0]),
    }));
    const { results } = await fx.dh.extract("the search results", z.object({ results: z.array(z.string()) }));
    expect(results).toEqual(["Result one", "Result two", "Result three"]);
  });

  it("reads a page whose spinner gives way to the data, not the spinner", async () => {
    await open(fx, "unsettled/spinner.html");
    const { pageText } = await fx.dh.extract();
    expect(pageText).toContain("Account balance: 42");
    expect(pageText).not.toContain("Loading");
  });
});
