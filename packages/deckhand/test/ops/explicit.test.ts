// Explicit instructions next to a model: one that names a single visible element is carried out
// with no model call (0 tokens in metrics, marked in the history); one that is not plain, or whose
// target is not unique, goes to the model; `explicitInstructions: false` sends everything to the
// model. With no model at all, the error says why the instruction needs one.

import { Deckhand, MissingLLMConfigurationError } from "deckhand";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { startDeckhand } from "../support/browser.ts";
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
} from "./helpers.ts";

const EMAIL = "ann.secret@example.com";

function fieldValue(dh: Deckhand, selector: string): Promise<string> {
  return dh.page.evaluate((s: string) => (document.querySelector(s) as HTMLInputElement).value, selector);
}

function hitIds(dh: Deckhand): Promise<string[]> {
  return dh.page.evaluate(() =>
    (window as unknown as { __hits: { type: string; id: string | null }[] }).__hits
      .filter((h) => h.type === "click" && h.id)
      .map((h) => h.id!),
  );
}

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  /** Act requests the model received since the test began. */
  let asked = 0;
  const actRequests = () => requestsOf(fx.model, "act").length - asked;
  beforeAll(async () => {
    fx = await opsFixture(mode, { explicitInstructions: true });
  });
  afterAll(async () => {
    await fx?.close();
  });
  beforeEach(() => {
    asked = requestsOf(fx.model, "act").length;
  });
  afterEach(() => {
    fx.model.clear();
  });

  it("carries out an explicit instruction with no model call and no tokens", async () => {
    await open(fx, "explicit/login.html");
    const before = await fx.dh.metrics;
    const result = await fx.dh.act("click the Sign in button");
    expect(result.success).toBe(true);
    expect(result.message).toMatch(/^Done without a model/);
    expect(result.actions?.[0]?.method).toBe("click");
    expect(await hitIds(fx.dh)).toEqual(["sign-in"]);
    expect(actRequests()).toBe(0);
    const after = await fx.dh.metrics;
    expect(after.actPromptTokens).toBe(before.actPromptTokens);
    expect(after.totalPromptTokens).toBe(before.totalPromptTokens);
  });

  it("types a variable's value into the field without showing it anywhere", async () => {
    await open(fx, "explicit/login.html");
    const result = await fx.dh.act("type %email% into the Email field", { variables: { email: EMAIL } });
    expect(result.success).toBe(true);
    expect(await fieldValue(fx.dh, "#email")).toBe(EMAIL);
    expect(JSON.stringify(result)).not.toContain(EMAIL);
    expect(JSON.stringify(await fx.dh.history)).not.toContain(EMAIL);
    expect(actRequests()).toBe(0);
  });

  it("asks the model when the instruction is not plain", async () => {
    await open(fx, "explicit/login.html");
    onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Sign in"), method: "click" }));
    const result = await fx.dh.act("log in to the site");
    expect(result.success).toBe(true);
    expect(actRequests()).toBe(1);
    expect(await hitIds(fx.dh)).toEqual(["sign-in"]);
  });

  it("asks the model when more than one visible element fits, and does what it chose", async () => {
    await open(fx, "explicit/sections.html");
    onAct(fx.model, (request) => {
      // The second "Save" in the outline is the shipping section's.
      const ids = [...request.text.matchAll(/\[(\d+)\] button: Save\b(?! all)/g)].map((m) => Number(m[1]));
      return step({ elementId: ids[1]!, method: "click" });
    });
    const result = await fx.dh.act("click the Save button in the Shipping section");
    expect(result.success).toBe(true);
    expect(actRequests()).toBe(1);
    expect(await hitIds(fx.dh)).toEqual(["shipping-save"]);
  });

  it("after a refusal that read the page, the model reads the outline it would have read anyway", async () => {
    // "click Target": the word is on the page ("Target button"), so the explicit attempt reads the
    // whole outline of 12,000 elements, finds no element named so, and hands the instruction on.
    // The model's first look is that outline, cut to the token budget for the instruction: the
    // same text as when there is no explicit attempt at all.
    const page = "generated/large?elements=12000";
    const seen: string[] = [];
    onAct(fx.model, (request) => {
      seen.push(request.text);
      return step({ elementId: idOf(request, "button: Target button"), method: "click" });
    });
    await open(fx, page);
    const result = await fx.dh.act("click Target");
    expect(result.success).toBe(true);
    expect(await fx.dh.page.evaluate(() => document.getElementById("target-result")!.textContent)).toBe(
      "clicked",
    );
    const strict = await anotherDeckhand(fx, { explicitInstructions: false });
    try {
      await open(fx, page, strict);
      expect((await strict.act("click Target")).success).toBe(true);
    } finally {
      await strict.close();
    }
    expect(seen).toHaveLength(2);
    expect(seen[0]).toContain("Target button");
    expect(seen[0]).toContain("outline cut to fit the token budget");
    expect(seen[0]).toBe(seen[1]);
  });

  it.runIf(mode === "LOCAL")(
    "a refusal that read the page makes no call into it that the model path would not make",
    async () => {
      // What the zero-token path may add to an instruction that needs the model: the methods of
      // Deckhand's in-page scripts called before the model is asked, with explicit instructions on
      // and off, counted on the browser's connection (a count, which does not depend on the
      // machine's load). The look-up by role comes with the outline's capture, in the same call.
      const connection = fx.dh.context.browser.connection;
      const rawSend = connection.rawSend.bind(connection);
      let calls: string[] | undefined;
      connection.rawSend = (session, method, params) => {
        const { functionDeclaration, arguments: args } = (params ?? {}) as {
          functionDeclaration?: string;
          arguments?: { value?: unknown }[];
        };
        if (calls && functionDeclaration?.startsWith("function(method,"))
          calls.push(String(args?.[0]?.value));
        return rawSend(session, method, params);
      };
      const before: Record<string, string[]> = {};
      const strict = await anotherDeckhand(fx, { explicitInstructions: false });
      try {
        for (const [path, dh] of [
          ["on", fx.dh],
          ["off", strict],
        ] as const) {
          const rule = onAct(fx.model, (request) => {
            before[path] ??= calls ?? [];
            calls = undefined;
            return step({ elementId: idOf(request, "button: Target button"), method: "click" });
          });
          await open(fx, "generated/large?elements=5000", dh);
          calls = [];
          expect((await dh.act("click Target")).success).toBe(true);
          rule.remove();
        }
      } finally {
        delete (connection as { rawSend?: unknown }).rawSend;
        await strict.close();
      }
      // "quiet" is the wait for a page that was not calm yet, in either path as it happens.
      const work = (path: string) => new Set(before[path]!.filter((m) => m !== "quiet"));
      expect(before.off).toContain("capture");
      expect(work("on")).toEqual(work("off"));
    },
  );

  it("carries out the explicit steps of an instruction, then asks the model only for the rest", async () => {
    await open(fx, "explicit/widgets.html");
    const before = await fx.dh.metrics;
    let prompt = "";
    onAct(fx.model, (request) => {
      prompt = request.text;
      return step({
        elementId: idOf(request, "button: Add to cart"),
        method: "click",
        description: "click the Add to cart button",
      });
    });
    const result = await fx.dh.act("type 'Ann' into the First name field, then click the cheapest option");
    expect(result.success, result.message).toBe(true);
    expect(actRequests()).toBe(1);
    // The model saw the step done and was asked for the rest only.
    expect(prompt).toContain('Steps already done:\n1. type "Ann" into the First name field');
    expect(prompt).toContain("Do only the rest: click the cheapest option");
    // The result lists every step; the page got both.
    expect(result.actions?.map((a) => a.description)).toEqual([
      'type "Ann" into the First name field',
      "click the Add to cart button",
    ]);
    expect(await fieldValue(fx.dh, "#first-name")).toBe("Ann");
    expect(await hitIds(fx.dh)).toEqual(["add-to-cart"]);
    expect((await fx.dh.metrics).actPromptTokens).toBeGreaterThan(before.actPromptTokens);
  });

  it("carries out every step of an explicit multi-step instruction without a model", async () => {
    await open(fx, "explicit/login.html");
    const result = await fx.dh.act(
      "type %email% into the Email field, check Remember me, then click Sign in",
      { variables: { email: EMAIL } },
    );
    expect(result.success, result.message).toBe(true);
    expect(result.message).toMatch(/^Done without a model/);
    expect(result.actions?.map((a) => a.method)).toEqual(["fill", "check", "click"]);
    expect(JSON.stringify(result)).not.toContain(EMAIL);
    expect(await fieldValue(fx.dh, "#email")).toBe(EMAIL);
    expect(actRequests()).toBe(0);
  });

  it("asks the model when the one element that fits cannot take the step", async () => {
    await open(fx, "explicit/decoys.html");
    onAct(fx.model, () => step({ elementId: -1, method: "click", description: "the button is disabled" }));
    const result = await fx.dh.act("click Submit order");
    expect(result.success).toBe(false);
    expect(actRequests()).toBeGreaterThanOrEqual(1);
  });

  it("with explicitInstructions: false, asks the model even for an explicit instruction", async () => {
    const strict = await anotherDeckhand(fx, { explicitInstructions: false });
    try {
      await open(fx, "explicit/login.html", strict);
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Sign in"), method: "click" }));
      const result = await strict.act("click the Sign in button");
      expect(result.success).toBe(true);
      expect(result.message).not.toMatch(/without a model/);
      expect(actRequests()).toBe(1);
    } finally {
      await strict.close();
    }
  });
});

describe("LOCAL: the record of an explicit instruction", () => {
  let dh: Deckhand;
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture("LOCAL", { explicitInstructions: true });
    dh = fx.dh;
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("marks the history entry as done without a model", async () => {
    await open(fx, "explicit/widgets.html");
    await dh.act("select Germany from the Country dropdown");
    const entry = (await dh.history).at(-1)!;
    expect(entry.method).toBe("act");
    expect(entry.parameters).toMatchObject({ instruction: "select Germany from the Country dropdown" });
    expect(entry.result).toMatchObject({ success: true, resolvedWithoutModel: true });
    expect(await fieldValue(dh, "#country")).toBe("de");
  });

  it("logs it as an act with no model", async () => {
    const lines: { category?: string; message: string; auxiliary?: Record<string, unknown> }[] = [];
    const logged = await anotherDeckhand(fx, {
      explicitInstructions: true,
      verbose: 1,
      logger: (line) => lines.push(line as (typeof lines)[number]),
    });
    try {
      await open(fx, "explicit/login.html", logged);
      await logged.act("check Remember me");
      const line = lines.find((l) => l.category === "act" && /without a model/.test(l.message));
      expect(line).toBeDefined();
    } finally {
      await logged.close();
    }
  });
});

describe("with no model configured", () => {
  let dh: Deckhand;
  let fx: OpsFixture;
  beforeAll(async () => {
    vi.stubEnv("OPENAI_API_KEY", undefined);
    fx = await opsFixture("LOCAL");
    dh = await startDeckhand({}, {});
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await dh?.close();
    await fx?.close();
  });

  it("carries out explicit instructions end to end", async () => {
    await dh.page.goto(fx.site.url("explicit/login.html"));
    expect((await dh.act("type %email% into the Email field", { variables: { email: EMAIL } })).success).toBe(
      true,
    );
    expect((await dh.act("type 'pw-1234' into the Password field")).success).toBe(true);
    expect((await dh.act("check Remember me")).success).toBe(true);
    expect((await dh.act("click Sign in")).success).toBe(true);
    expect(await fieldValue(dh, "#email")).toBe(EMAIL);
    expect(
      await dh.page.evaluate(() => (document.querySelector("#remember") as HTMLInputElement).checked),
    ).toBe(true);
    const metrics = await dh.metrics;
    expect(metrics.totalPromptTokens + metrics.totalCompletionTokens).toBe(0);
  });

  it("says which instruction needs a model, and why", async () => {
    await dh.page.goto(fx.site.url("explicit/sections.html"));
    const error = await dh.act("click Save").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingLLMConfigurationError);
    expect((error as Error).message).toMatch(
      /"click Save" needs a model: 2 visible elements on the page fit "Save"/,
    );
    const vague = await dh.act("finish the checkout").catch((e: unknown) => e);
    expect((vague as Error).message).toMatch(/not a plain instruction/);
  });

  it("after explicit steps, says which were done and what is left for a model", async () => {
    await dh.page.goto(fx.site.url("explicit/sections.html"));
    const error = await dh
      .act("type 'Acme' into the Company field, then click Save")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingLLMConfigurationError);
    expect((error as Error).message).toMatch(
      /needs a model: 2 visible elements on the page fit "Save"\. Done before that, without a model: type "Acme" into the Company field; left for a model: click Save\./,
    );
    expect(await fieldValue(dh, "#billing-company")).toBe("Acme");
  });

  it("without the option, an explicit instruction needs a model too", async () => {
    const strict = new Deckhand({
      ...(await import("../support/browser.ts")).testOptions(),
      explicitInstructions: false,
    });
    await strict.init();
    try {
      await strict.page.goto(fx.site.url("explicit/login.html"));
      await expect(strict.act("click Sign in")).rejects.toBeInstanceOf(MissingLLMConfigurationError);
    } finally {
      await strict.close();
    }
  });
});
