// observe: every interactive element with no model, or the model's picks for an instruction,
// as Actions whose XPath act() takes as they are.

import { match } from "@deckhand/testkit";
import { ServiceTimeoutError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { idOf, MODES, type OpsFixture, open, opsFixture, textOf } from "./helpers.ts";

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

  type Pick = { line: string; description: string; method?: string; arguments?: string[] };

  /** The model answers observe requests with the elements on these outline lines, in this order. */
  function observeAnswers(picks: Pick[]) {
    fx.model.on(match.schemaName("observe"), (request) => ({
      elements: picks.map((p) => ({
        elementId: idOf(request, p.line),
        description: p.description,
        ...(p.method ? { method: p.method } : {}),
        ...(p.arguments ? { arguments: p.arguments } : {}),
      })),
    }));
  }

  describe("observe() without an instruction", () => {
    it("lists every interactive element, with the method each takes, and asks no model", async () => {
      await open(fx, "form.html");
      const calls = fx.model.callCount;
      const actions = await fx.dh.observe();
      expect(fx.model.callCount).toBe(calls);
      expect(actions.map((a) => [a.description, a.method])).toEqual([
        ["textbox: Username", "fill"],
        ["textbox: Password", "fill"],
        ["checkbox: Remember me", "check"],
        ["button: Sign in", "click"],
      ]);
      for (const action of actions) expect(action.selector).toMatch(/^\/html\[1\]\/body\[1\]\//);
    });

    it("gives selectors that act() takes as they are", async () => {
      const page = await open(fx, "form.html");
      const actions = await fx.dh.observe();
      const field = actions.find((a) => a.description === "textbox: Username")!;
      const button = actions.find((a) => a.description === "button: Sign in")!;
      expect((await fx.dh.act({ ...field, arguments: ["dora"] })).success).toBe(true);
      expect((await fx.dh.act(button)).success).toBe(true);
      expect(await textOf(page, "#result")).toContain('"username":"dora"');
    });

    it("lists only the elements under `selector`", async () => {
      await open(fx, "overlay.html");
      const actions = await fx.dh.observe({ selector: "#cookie-banner" });
      expect(actions.map((a) => a.description)).toEqual(["button: Accept cookies"]);
    });
  });

  describe("observe(instruction)", () => {
    it("returns the model's picks, most relevant first", async () => {
      await open(fx, "form.html");
      observeAnswers([
        { line: "button: Sign in", description: "submits the form", method: "click" },
        { line: "textbox: Username", description: "the user name field", method: "fill", arguments: ["x"] },
      ]);
      const actions = await fx.dh.observe("how do I sign in?");
      expect(actions).toEqual([
        {
          selector: "/html[1]/body[1]/form[1]/p[4]/button[1]",
          description: "submits the form",
          method: "click",
          arguments: [],
        },
        {
          selector: "/html[1]/body[1]/form[1]/p[1]/input[1]",
          description: "the user name field",
          method: "fill",
          arguments: ["x"],
        },
      ]);
      expect(fx.model.lastRequest?.lastUserText).toContain("Instruction: how do I sign in?");
    });

    it("returns an empty array when nothing matches", async () => {
      await open(fx, "form.html");
      fx.model.on(match.schemaName("observe"), { elements: [] });
      expect(await fx.dh.observe("find the shopping cart")).toEqual([]);
    });

    it("leaves out ids that are not on the page, and duplicates", async () => {
      await open(fx, "form.html");
      fx.model.on(match.schemaName("observe"), (request) => {
        const button = idOf(request, "button: Sign in");
        return {
          elements: [
            { elementId: 999, description: "invented" },
            { elementId: button, description: "sign in" },
            { elementId: button, description: "sign in again" },
          ],
        };
      });
      const actions = await fx.dh.observe("find the sign in button");
      expect(actions.map((a) => a.description)).toEqual(["sign in"]);
    });

    it("names methods the way act() does, and falls back to the element's usual method", async () => {
      await open(fx, "select.html");
      observeAnswers([
        { line: "combobox: Country", description: "country", method: "select_option_from_dropdown" },
        { line: "button: Choose a color", description: "colors", method: "levitate" },
      ]);
      const actions = await fx.dh.observe("find the pickers");
      expect(actions.map((a) => a.method)).toEqual(["selectOption", "click"]);
    });

    it("with variables, shows the model only names and keeps the %name% tokens in arguments", async () => {
      const page = await open(fx, "form.html");
      const secret = "s3cret-user-8841";
      observeAnswers([
        { line: "textbox: Username", description: "user name", method: "fill", arguments: ["%user%"] },
      ]);
      const variables = { user: { value: secret, description: "the login name" } };
      const [action] = await fx.dh.observe("fill in the user name", { variables });
      expect(action?.arguments).toEqual(["%user%"]);
      expect(JSON.stringify(fx.model.lastRequest?.body)).not.toContain(secret);
      expect(fx.model.lastRequest?.lastUserText).toContain("%user%: the login name");
      // The action goes to act as it is; the value is put in there.
      expect((await fx.dh.act(action!, { variables })).success).toBe(true);
      expect(await page.locator("#username").inputValue()).toBe(secret);
    });

    it("shows the model only the part of the page under `selector`", async () => {
      await open(fx, "overlay.html");
      observeAnswers([{ line: "button: Accept cookies", description: "accept" }]);
      const actions = await fx.dh.observe("find the accept button", { selector: "#cookie-banner" });
      expect(actions.map((a) => a.selector)).toEqual(["/html[1]/body[1]/div[2]/button[1]"]);
      const shown = fx.model.lastRequest!.lastUserText;
      expect(shown).toContain("Accept cookies");
      expect(shown).not.toContain("Covered button");
    });

    it("hides the parts of the page under `ignoreSelectors` from the model", async () => {
      await open(fx, "overlay.html");
      fx.model.on(match.schemaName("observe"), { elements: [] });
      await fx.dh.observe("find every button", {
        ignoreSelectors: ["#cookie-banner", "//button[@id='free']"],
      });
      const shown = fx.model.lastRequest!.lastUserText;
      expect(shown).toContain("Covered button");
      expect(shown).not.toContain("Accept cookies");
      expect(shown).not.toContain("Free button");
    });

    it("observes the page given as `page`, not the active one", async () => {
      const first = await open(fx, "form.html");
      const second = await fx.dh.context.newPage(fx.site.url("index.html"));
      try {
        expect(fx.dh.page).toBe(second);
        observeAnswers([{ line: "button: Sign in", description: "sign in" }]);
        const [action] = await fx.dh.observe("find sign in", { page: first });
        expect(action?.description).toBe("sign in");
        expect(fx.model.lastRequest?.lastUserText).toContain("textbox: Username");
      } finally {
        await second.close();
      }
    });

    it("accepts serverCache: false", async () => {
      await open(fx, "form.html");
      observeAnswers([{ line: "button: Sign in", description: "sign in" }]);
      const actions = await fx.dh.observe("find sign in", { serverCache: false });
      expect(actions.map((a) => a.description)).toEqual(["sign in"]);
    });

    it("abandons the call at `timeout` with ServiceTimeoutError", async () => {
      await open(fx, "form.html");
      // The model answers only after the call has ended: its deadline alone can end it.
      let release!: () => void;
      const released = new Promise<object>((resolve) => {
        release = () => resolve({ elements: [] });
      });
      fx.model.on(match.schemaName("observe"), () => released);
      try {
        await expect(fx.dh.observe("anything", { timeout: 200 })).rejects.toThrow(ServiceTimeoutError);
      } finally {
        release();
      }
    });
  });
});
