// act never claims a success it did not have: a covered click is a failure, an observed Action
// is checked against what it pointed at, selfHeal retries once (and says so) when the page
// changed under the chosen element, and a deadline abandons the call with a typed error.

import { match } from "@deckhand/testkit";
import { type Action, type Deckhand, ServiceError, ServiceTimeoutError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  anotherDeckhand,
  idOf,
  MODES,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  requestsOf,
  step,
  textOf,
} from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  /** The same browser and model, with selfHeal off. */
  let strict: Deckhand;
  beforeAll(async () => {
    fx = await opsFixture(mode);
    strict = await anotherDeckhand(fx, { selfHeal: false });
  });
  afterAll(async () => {
    await strict?.close();
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  describe("clicks that would land elsewhere", () => {
    it("reports a click swallowed by an overlay as a failure", async () => {
      const page = await open(fx, "overlay.html");
      // First the covered button; told why that failed, the model gives up.
      onAct(fx.model, (request) =>
        request.lastUserText.includes("failed")
          ? step({ elementId: -1, method: "click", description: "nothing clickable fits" })
          : step({ elementId: idOf(request, "button: Covered button"), method: "click" }),
      );
      const result = await fx.dh.act("click the covered button");
      expect(result.success).toBe(false);
      expect(await textOf(page, "#log")).toBe("");
      // The model was told what covers the button.
      expect(fx.model.lastRequest?.lastUserText).toMatch(/covered by another element: <div id="overlay">/);
    });

    it("clicks the chosen button, not the banner that takes its place as the pointer arrives", async () => {
      await fx.dh.page.mouse.move(0, 0);
      const page = await open(fx, "moving.html?moves=once");
      // The banner opens above the button on the pointer's first move, just before the press.
      await page.evaluate(() => (window as unknown as { armMoves(on: boolean): void }).armMoves(true));
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Target"), method: "click" }));
      const result = await fx.dh.act("click the target button");
      expect(result.success).toBe(true);
      expect(await textOf(page, "#log")).toBe("target pointerdown\ntarget mousedown\ntarget click\n");
    });

    it("reaches a covered button once the model has cleared what covers it", async () => {
      const page = await open(fx, "overlay.html");
      onAct(fx.model, (request) => {
        if (request.lastUserText.includes("Steps already done"))
          return step({ elementId: idOf(request, "button: Behind banner"), method: "click" });
        if (request.lastUserText.includes("failed"))
          return step({
            elementId: idOf(request, "button: Accept cookies"),
            method: "click",
            completed: false,
          });
        return step({ elementId: idOf(request, "button: Behind banner"), method: "click" });
      });
      const result = await fx.dh.act("click the button behind the banner");
      expect(result.success).toBe(true);
      expect(result.message).toContain("Self-healed");
      expect(await textOf(page, "#log")).toBe("cookies accepted\nbehind-banner clicked\n");
    });
  });

  describe("act(action) checks its target", () => {
    /** observe's Action for the Increment button of index.html. */
    async function observeIncrement(dh: Deckhand) {
      fx.model.on(match.schemaName("observe"), (request) => ({
        elements: [{ elementId: idOf(request, "button: Increment"), description: "the Increment button" }],
      }));
      const [action] = await dh.observe("find the increment button");
      fx.model.clear();
      return action!;
    }

    /** Puts a different button where the Increment button was (its XPath now leads there). */
    function insertButtonBefore(dh: Deckhand) {
      return dh.page.evaluate(() => {
        const other = document.createElement("button");
        other.textContent = "Delete everything";
        other.addEventListener("click", () => {
          document.title = "deleted";
        });
        document.getElementById("increment")!.before(other);
      });
    }

    it("acts on a look-alike that replaced the observed element (same role and name)", async () => {
      const page = await open(fx, "dynamic.html");
      fx.model.on(match.schemaName("observe"), (request) => ({
        elements: [{ elementId: idOf(request, "button: Replace me"), description: "Replace me button" }],
      }));
      const [action] = await fx.dh.observe("find the replace me button");
      // The page swaps the button for a clone of itself.
      await page.locator("#replace-me").click();
      const calls = fx.model.callCount;
      const result = await fx.dh.act(action!);
      expect(result.success).toBe(true);
      expect(await textOf(page, "#log")).toBe("original clicked\nreplacement clicked\n");
      expect(fx.model.callCount).toBe(calls);
    });

    it("refuses to act when the selector now leads to a different element", async () => {
      const page = await open(fx, "index.html", strict);
      const action = await observeIncrement(strict);
      await insertButtonBefore(strict);
      const result = await strict.act(action);
      expect(result.success).toBe(false);
      expect(result.message).toContain('now leads to button "Delete everything", not button "Increment"');
      expect(await page.title()).not.toBe("deleted");
      expect(await textOf(page, "#count")).toBe("0");
    });

    it.each([
      ["a spread copy", (a: Action) => ({ ...a })],
      ["a JSON copy", (a: Action) => JSON.parse(JSON.stringify(a)) as Action],
    ])("checks %s of the observed Action the same way (the check is keyed by content)", async (_, copy) => {
      const page = await open(fx, "index.html", strict);
      const action = await observeIncrement(strict);
      await insertButtonBefore(strict);
      const result = await strict.act(copy(action));
      expect(result.success).toBe(false);
      expect(result.message).toContain('now leads to button "Delete everything", not button "Increment"');
      expect(await page.title()).not.toBe("deleted");
    });

    it("finds the element again from its description with selfHeal", async () => {
      const page = await open(fx, "index.html");
      const action = await observeIncrement(fx.dh);
      await insertButtonBefore(fx.dh);
      fx.model.on(match.schemaName("observe"), (request) => ({
        elements: [{ elementId: idOf(request, "button: Increment"), description: "the Increment button" }],
      }));
      const result = await fx.dh.act(action);
      expect(result.success).toBe(true);
      expect(result.message).toContain("Self-healed");
      expect(result.actions?.[0]?.selector).toBe("/html[1]/body[1]/button[2]");
      expect(await textOf(page, "#count")).toBe("1");
      expect(await page.title()).not.toBe("deleted");
      // Healing asked the model about the description, not the stale selector.
      expect(fx.model.lastRequest?.lastUserText).toContain("Find: the Increment button");
    });
  });

  describe("selfHeal in act(instruction)", () => {
    /** The model answers with the Increment button, but the page re-renders it before the click. */
    function scriptReplacedBeforeClick(dh: Deckhand) {
      let replaced = false;
      onAct(fx.model, async (request) => {
        const answer = step({ elementId: idOf(request, "button: Increment"), method: "click" });
        if (!replaced) {
          replaced = true;
          await dh.page.evaluate(() => {
            const old = document.getElementById("increment")!;
            const fresh = old.cloneNode(true);
            fresh.addEventListener("click", () => {
              const count = document.getElementById("count")!;
              count.textContent = String(Number(count.textContent) + 1);
            });
            old.replaceWith(fresh);
          });
        }
        return answer;
      });
    }

    it("reads the page again and retries once when the chosen element was replaced", async () => {
      const page = await open(fx, "index.html");
      scriptReplacedBeforeClick(fx.dh);
      const before = requestsOf(fx.model, "act").length;
      const result = await fx.dh.act("click increment");
      expect(result.success).toBe(true);
      expect(result.message).toMatch(/Self-healed: the first attempt failed/);
      expect(await textOf(page, "#count")).toBe("1");
      const asked = requestsOf(fx.model, "act").slice(before);
      expect(asked).toHaveLength(2);
      expect(asked[1]!.lastUserText).toContain("The previous attempt");
    });

    it("reports the failure instead when selfHeal is off", async () => {
      const page = await open(fx, "index.html", strict);
      scriptReplacedBeforeClick(strict);
      const result = await strict.act("click increment");
      expect(result.success).toBe(false);
      expect(result.message).toContain("the element left the page after the snapshot");
      expect(await textOf(page, "#count")).toBe("0");
    });
  });

  describe("timeout", () => {
    it("abandons act at the deadline with ServiceTimeoutError, and does nothing afterwards", async () => {
      const page = await open(fx, "index.html");
      // The model answers only once the test lets it: the act can end by its deadline alone.
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let lateAnswer: Promise<unknown> | undefined;
      onAct(fx.model, (request) => {
        lateAnswer = released.then(() =>
          step({ elementId: idOf(request, "button: Increment"), method: "click" }),
        );
        return lateAnswer as Promise<object>;
      });
      const error = await fx.dh.act("click increment", { timeout: 250 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceTimeoutError);
      expect(error).toBeInstanceOf(ServiceError);
      // The model's late answer is not carried out.
      release();
      await lateAnswer;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await textOf(page, "#count")).toBe("0");
    });

    it("stops waiting for a covered target by the deadline, and does not click after it", async () => {
      const page = await open(fx, "overlay.html", strict);
      let answeredAt: number | undefined;
      onAct(fx.model, (request) => {
        answeredAt = Date.now();
        return step({ elementId: idOf(request, "button: Behind banner"), method: "click" });
      });
      // Either outcome is fine (a timeout, or the failed click reported just before the deadline)...
      const outcome = await strict
        .act("click the button behind the banner", { timeout: 2_500 })
        .catch((error: unknown) => error);
      const endedAt = Date.now();
      if (!(outcome instanceof ServiceTimeoutError)) expect(outcome).toMatchObject({ success: false });
      // ...as long as the click was waiting for the banner when it ended,
      expect(answeredAt).toBeDefined();
      // and the deadline, not the click's own 3-second wait for its target, ended it: measured from
      // the model's answer, so that a slow snapshot or model call on a busy machine moves both.
      expect(endedAt - answeredAt!).toBeLessThan(3_000);
      // and does not land once the banner goes away.
      await page.evaluate(() => document.getElementById("cookie-banner")!.remove());
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await textOf(page, "#log")).toBe("");
    });

    it("leaves the page usable: the next act works", async () => {
      const page = await open(fx, "index.html");
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }), {
        latencyMs: 2_000,
      });
      await expect(fx.dh.act("click increment", { timeout: 200 })).rejects.toThrow(ServiceTimeoutError);
      fx.model.clear();
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }));
      expect((await fx.dh.act("click increment", { timeout: 5_000 })).success).toBe(true);
      expect(await textOf(page, "#count")).toBe("1");
    });
  });

  // What an act waits for, and what it does not wait for twice. A still cookie banner over the
  // chosen element is reported, and the self-heal's second try on the same element (the model
  // chose it again, the page is unchanged) is told at once: two questions to the model, no click.
  // An element the page re-renders (gone for a moment) is still waited for, not healed.
  describe("waits", () => {
    it("reports the banner over the chosen button after asking the model twice, and clicks nothing", async () => {
      const page = await open(fx, "overlay.html");
      // The model insists on the covered button, even when told why it failed.
      onAct(fx.model, (request) =>
        step({ elementId: idOf(request, "button: Behind banner"), method: "click" }),
      );
      const asked = requestsOf(fx.model, "act").length;
      // A minute for the act, and 30 s for the test: only an act that stops early passes.
      const result = await fx.dh.act("click the button behind the banner", { timeout: 60_000 });
      expect(result.success).toBe(false);
      expect(result.message).toMatch(/covered by another element: <div id="cookie-banner"/);
      expect(requestsOf(fx.model, "act").length - asked).toBe(2);
      expect(fx.model.lastRequest?.lastUserText).toMatch(
        /failed: .*covered by another element: <div id="cookie-banner"/,
      );
      expect(await textOf(page, "#log")).toBe("");
    }, 30_000);

    it("acts on an element the page takes away and puts back a moment later, without a self-heal", async () => {
      const page = await open(fx, "index.html", strict);
      fx.model.on(match.schemaName("observe"), (request) => ({
        elements: [{ elementId: idOf(request, "button: Increment"), description: "the Increment button" }],
      }));
      const [action] = await strict.observe("find the increment button");
      // A re-render: the button leaves, and comes back to the same place 100 ms later.
      await page.evaluate(() => {
        const button = document.getElementById("increment")!;
        const [parent, next] = [button.parentNode!, button.nextSibling];
        button.remove();
        setTimeout(() => parent.insertBefore(button, next), 100);
      });
      const result = await strict.act(action!);
      expect(result.success).toBe(true);
      expect(result.message).not.toContain("Self-healed");
      expect(await textOf(page, "#count")).toBe("1");
    });
  });
});
