// Operations read pages that are not still yet as a user would see them once they are: content a
// timer renders after load, a single-page app's route change after a click, results that arrive
// over the network, a spinner that gives way to the data. The scripted model answers from the
// outline it is shown (an element that is not in it is "nothing fits"), so a test fails if an
// operation read the page too early.

import type { ScriptedRequest } from "@deckhand/testkit";
import { match } from "@deckhand/testkit";
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

  it("looks once more when the model finds nothing on a young page, and acts on what appears", async () => {
    // Rendered later than the first second, when nothing pending announces it.
    const page = await open(fx, "unsettled/timer.html?ms=1300");
    onAct(fx.model, clickIfShown(/button: Continue/));
    const [result, questions] = await asked(fx, "act", () => fx.dh.act("click Continue"));
    expect(result.success).toBe(true);
    expect(await textOf(page, "#result")).toBe("continued");
    expect(questions).toHaveLength(2);
    expect(questions[0]!.lastUserText).not.toContain("button: Continue");
  });

  // Retried: its premise is that observe's first look comes before the page's 1.3 s timer, and now
  // and then (LOCAL and REMOTE, on a busy 2-core machine) the first look itself comes ~1.9 s after
  // goto(), when the button is already there. Not understood yet; see the closing note of issue 9.
  it("observe looks once more too, and finds what a young page rendered late", { retry: 2 }, async () => {
    await open(fx, "unsettled/timer.html?ms=1300");
    fx.model.on(match.schemaName("observe"), (request) => {
      const found = /\[(\d+)\] button: Continue/.exec(request.lastUserText);
      return { elements: found ? [{ elementId: Number(found[1]), description: "Continue" }] : [] };
    });
    const [actions, questions] = await asked(fx, "observe", () => fx.dh.observe("find the Continue button"));
    expect(actions.map((a) => a.description)).toEqual(["Continue"]);
    expect(questions).toHaveLength(2);
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
