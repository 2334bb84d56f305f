// act, observe and extract with the answers small and local models really give (issue 23): the
// sloppy model server (testkit) makes the scripted, perfect answers sloppy one quirk at a time, on
// the real OpenAI-compatible wire, reached through the real provider code as `ollama/...`. Each
// quirk is either read the one way it can be read, or refused after asking once more: never a
// guess, never a success that did not happen.

import {
  type FixtureServer,
  match,
  requestedOutputLimit,
  type ScriptedModel,
  ScriptedReply,
  type ScriptedRequest,
  type SloppyQuirk,
  startScriptedModel,
} from "@deckhand/testkit";
import { type Deckhand, LLMResponseError, ZodSchemaValidationError } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { idOf, MODES, type OpsFixture, opsFixture, step, textOf } from "./helpers.ts";

let dh: Deckhand;
let site: FixtureServer;
const servers: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A sloppy server with these quirks, and the model object that reaches it as a local Ollama model. */
async function sloppy(quirks: SloppyQuirk[]) {
  const server = await startScriptedModel({ sloppy: { quirks } });
  servers.push(server);
  return { server, model: { modelName: "ollama/qwen2.5:7b", baseURL: server.baseURL } };
}

/** Act's requests, whether or not the response format carries the schema's name. */
const ACT = match.any(match.schemaName("act"), match.system("You operate a web page"));

function isFirstAsk(request: ScriptedRequest): boolean {
  return !request.messages.some((m) => m.role === "assistant");
}

async function open(path: string) {
  await dh.page.goto(site.url(path));
  return dh.page;
}

async function count(): Promise<string> {
  return textOf(dh.page, "#count");
}

function clickIncrement(server: ScriptedModel) {
  server.on(ACT, (r) =>
    step({ elementId: idOf(r, "button: Increment"), method: "click", description: "click Increment" }),
  );
}

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
    dh = fx.dh;
    site = fx.site;
  });
  afterAll(async () => {
    await fx?.close();
  });

  describe("act reads sloppy answer text", () => {
    it.each<SloppyQuirk[]>([
      ["fence"],
      ["prose"],
      ["singleQuotes"],
      ["trailingCommas"],
      ["comments"],
      ["fence", "prose", "singleQuotes", "trailingCommas", "comments"],
      ["idAsString"],
      ["idInBrackets"],
      ["idWithHash"],
      ["extraKeys"],
      ["keyCase"],
      ["methodSynonym"],
    ])("%s: the click is done once, on the element the model named", async (...quirks) => {
      const { server, model } = await sloppy(quirks);
      clickIncrement(server);
      await open("index.html");
      const result = await dh.act("click the increment button", { model });
      expect(result.success).toBe(true);
      expect(await count()).toBe("1");
      expect(server.callCount).toBe(1);
    });

    it("think: the <think> block is not the answer (its decoy JSON is ignored), and its tokens count as reasoning tokens", async () => {
      const { server, model } = await sloppy(["think"]);
      clickIncrement(server);
      await open("index.html");
      const before = await dh.metrics;
      const result = await dh.act("click the increment button", { model });
      const after = await dh.metrics;
      expect(result.success).toBe(true);
      expect(await count()).toBe("1");
      // The server reports no reasoning tokens of its own; the think block is counted from its
      // length. (REMOTE: the metrics the service reports carry no reasoning tokens yet.)
      if (mode === "LOCAL") expect(after.actReasoningTokens - before.actReasoningTokens).toBeGreaterThan(0);
    });

    it("truncate: cut off at the server's own output limit, it is asked again for the JSON alone under a larger limit, and the whole answer is used", async () => {
      const { server, model } = await sloppy(["truncate"]);
      clickIncrement(server);
      await open("index.html");
      const result = await dh.act("click the increment button", { model });
      expect(result.success).toBe(true);
      expect(await count()).toBe("1");
      expect(server.callCount).toBe(2);
      // The first question leaves the limit to the server, whose own is too small for the answer.
      expect(requestedOutputLimit(server.requests[0]!)).toBeUndefined();
      expect(server.sloppy?.records[0]?.quirks).toContain("truncate");
      // The second gives a limit that holds the answer, and says what was wrong.
      expect(requestedOutputLimit(server.requests[1]!)).toBeGreaterThanOrEqual(4096);
      expect(server.sloppy?.records[1]?.quirks).not.toContain("truncate");
      expect(server.requests[1]?.lastUserText).toMatch(/cut off at the output token limit/);
      expect(server.requests[1]?.lastUserText).toMatch(
        /only the complete JSON object.*no reasoning, no prose/,
      );
      // Remembered for the session: the next question carries the raised limit from the start.
      expect((await dh.act("click the increment button", { model })).success).toBe(true);
      expect(await count()).toBe("2");
      expect(server.callCount).toBe(3);
      expect(requestedOutputLimit(server.requests[2]!)).toBe(requestedOutputLimit(server.requests[1]!));
    });

    it("cut off again under the larger limit: never completed by guessing; act fails with LLMResponseError and nothing is clicked", async () => {
      const { server, model } = await sloppy([]);
      server.on(ACT, (r) =>
        ScriptedReply.content(`{"elementId": ${idOf(r, "button: Increment")}, "method": "cl`, {
          finishReason: "length",
        }),
      );
      await open("index.html");
      const error = await dh.act("click the increment button", { model }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LLMResponseError);
      expect(String(error)).toMatch(/cut off/);
      expect(server.callCount).toBe(2);
      expect(await count()).toBe("0");
    });

    it("a server that refuses the larger limit (its context cannot hold it) is asked under its own limit", async () => {
      const { server, model } = await sloppy([]);
      clickIncrement(server);
      // Rules are tried newest first: this one answers the first question.
      server.once(ACT, (r) => {
        // vLLM's answer to prompt + max_tokens beyond the model's context.
        server.failNext(1, 400, {
          message:
            "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (4904 in the messages, 4096 in the completion).",
        });
        return ScriptedReply.content(`{"elementId": ${idOf(r, "button: Increment")}, "meth`, {
          finishReason: "length",
        });
      });
      await open("index.html");
      const result = await dh.act("click the increment button", { model });
      expect(result.success).toBe(true);
      expect(await count()).toBe("1");
      expect(server.callCount).toBe(3);
      expect(requestedOutputLimit(server.requests[1]!)).toBeGreaterThanOrEqual(4096);
      expect(requestedOutputLimit(server.requests[2]!)).toBeUndefined();
      expect(server.requests[2]?.lastUserText).toMatch(/cut off at the output token limit/);
      // Remembered too: the next question goes under the server's own limit, asked once.
      expect((await dh.act("click the increment button", { model })).success).toBe(true);
      expect(server.callCount).toBe(4);
      expect(requestedOutputLimit(server.requests[3]!)).toBeUndefined();
    });
  });

  describe("act with element ids and methods in other words", () => {
    it("an id that is not in the outline is asked again with the exact problem, and the second answer is used", async () => {
      const { server, model } = await sloppy([]);
      server.on(ACT, (r) =>
        step({ elementId: isFirstAsk(r) ? 4321 : idOf(r, "button: Increment"), method: "click" }),
      );
      await open("index.html");
      const result = await dh.act("click the increment button", { model });
      expect(result.success).toBe(true);
      expect(await count()).toBe("1");
      expect(server.callCount).toBe(2);
      const reask = server.requests[1]?.lastUserText ?? "";
      expect(reask).toContain("elementId 4321 is not in the page outline");
      // What the outline does show near it, in the outline's own words; nothing is chosen for it.
      const shown = [...(server.requests[0]?.lastUserText.matchAll(/\[(\d+)\]/g) ?? [])].map((m) =>
        Number(m[1]),
      );
      expect(reask).toContain(`its ids run from ${Math.min(...shown)} to ${Math.max(...shown)}`);
      expect(reask).toMatch(/the nearest it shows are \[\d+\] [\w-]+: .*; \[\d+\] [\w-]+: /);
    });

    it("idNotInOutline every time: never corrected to a nearby element; success false and nothing clicked", async () => {
      const { server, model } = await sloppy(["idNotInOutline"]);
      clickIncrement(server);
      await open("index.html");
      const result = await dh.act("click the increment button", { model });
      expect(result.success).toBe(false);
      expect(result.actions).toEqual([]);
      expect(result.message).toMatch(/not on the page/);
      expect(server.callCount).toBe(2);
      expect(await count()).toBe("0");
    });

    it("methodSynonym and argumentsAsString: input/enter/write fill the field with the text", async () => {
      const { server, model } = await sloppy(["methodSynonym", "argumentsAsString"]);
      server.on(ACT, (r) =>
        step({ elementId: idOf(r, "textbox: Username"), method: "fill", arguments: ["ada"] }),
      );
      const page = await open("form.html");
      const result = await dh.act("type ada into the username", { model });
      expect(result.success).toBe(true);
      expect(await page.locator("#username").inputValue()).toBe("ada");
      expect(server.requests[0]?.schemaName).toBe("act");
    });

    it("methodSynonym: choose selects the option", async () => {
      const { server, model } = await sloppy(["methodSynonym"]);
      server.on(ACT, (r) =>
        step({ elementId: idOf(r, /combobox: Country/), method: "selectOption", arguments: ["Japan"] }),
      );
      const page = await open("select.html");
      const result = await dh.act("choose Japan as the country", { model });
      expect(result.success).toBe(true);
      expect(await textOf(page, "#country-result")).toBe("jp:Japan");
    });

    it("press on a button with no key is the click it means", async () => {
      const { server, model } = await sloppy([]);
      server.on(ACT, (r) => ({
        elementId: String(idOf(r, "button: Increment")),
        method: "Press",
        description: "press the increment button",
        completed: true,
      }));
      await open("index.html");
      const result = await dh.act("press the increment button", { model });
      expect(result.success).toBe(true);
      expect(result.actions?.[0]?.method).toBe("click");
      expect(await count()).toBe("1");
    });

    it("a method no table knows is asked again, then refused", async () => {
      const { server, model } = await sloppy([]);
      server.on(ACT, (r) => step({ elementId: idOf(r, "button: Increment"), method: "activate" }));
      await open("index.html");
      await expect(dh.act("click the increment button", { model })).rejects.toBeInstanceOf(LLMResponseError);
      expect(server.callCount).toBe(2);
      expect(await count()).toBe("0");
    });
  });

  describe("observe with sloppy answers", () => {
    it("ids as strings, a list of one as the object, synonyms: the element is found", async () => {
      const { server, model } = await sloppy(["idAsString", "methodSynonym", "fence", "singleItemList"]);
      server.on(match.schemaName("observe"), (r) => ({
        elements: [
          {
            elementId: idOf(r, "button: Increment"),
            description: "the increment button",
            method: "click",
            arguments: [],
          },
        ],
      }));
      await open("index.html");
      const [action, ...rest] = await dh.observe("find the increment button", { model });
      expect(rest).toEqual([]);
      expect(action?.method).toBe("click");
      const done = await dh.act(action!);
      expect(done.success).toBe(true);
      expect(await count()).toBe("1");
    });

    it("an id not in the outline is asked again, then left out: never taken for a nearby element", async () => {
      const { server, model } = await sloppy(["idNotInOutline"]);
      server.on(match.schemaName("observe"), (r) => ({
        elements: [
          {
            elementId: idOf(r, "button: Increment"),
            description: "increment",
            method: "click",
            arguments: [],
          },
          {
            elementId: idOf(r, "link: Go to the login form"),
            description: "the form link",
            method: "click",
            arguments: [],
          },
        ],
      }));
      await open("index.html");
      const actions = await dh.observe("find the increment button and the link", { model });
      expect(server.callCount).toBe(2);
      expect(server.requests[1]?.lastUserText).toMatch(/not in the page outline/);
      // The first element was named by an id the page does not have: only the link is returned.
      expect(actions.map((a) => a.description)).toEqual(["the form link"]);
    });
  });

  describe("extract with sloppy values", () => {
    const Product = z.object({
      price: z.number(),
      stock: z.number().int(),
      weight: z.number(),
      available: z.boolean(),
      released: z.iso.date(),
    });
    const perfect = { price: 24, stock: 1234, weight: 12, available: true, released: "2026-11-26" };

    it("numbers, booleans and dates written as the page writes them are read as the schema's types", async () => {
      const { server, model } = await sloppy(["numbersAsStrings", "datesOtherForm", "keyCase", "prose"]);
      server.on(match.schemaName("extract"), (r) => {
        void r;
        return { ...perfect, available: "yes" };
      });
      await open("sloppy-shop.html");
      const data = await dh.extract("the product's figures", Product, { model });
      expect(data).toEqual(perfect);
      expect(server.callCount).toBe(1);
      const answerText = server.sloppy?.records[0]?.quirks;
      expect(answerText).toContain("numbersAsStrings");
    });

    it("a list of one given as an object is the list", async () => {
      const { server, model } = await sloppy(["singleItemList"]);
      server.on(match.schemaName("extract"), { reviews: [{ text: "Fresh and grassy", stars: 5 }] });
      await open("sloppy-shop.html");
      const data = await dh.extract(
        "the reviews",
        z.object({ reviews: z.array(z.object({ text: z.string(), stars: z.number() })) }),
        { model },
      );
      expect(data).toEqual({ reviews: [{ text: "Fresh and grassy", stars: 5 }] });
    });

    it("null for a required field is asked again, then refused with ZodSchemaValidationError: never filled in", async () => {
      const { server, model } = await sloppy(["nullRequired"]);
      server.on(match.schemaName("extract"), perfect);
      await open("sloppy-shop.html");
      const error = await dh.extract("the product's figures", Product, { model }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZodSchemaValidationError);
      expect(server.callCount).toBe(2);
      expect(server.requests[1]?.lastUserText).toMatch(/at `price`: .*received null/);
    });

    it("a number that reads two ways is not guessed", async () => {
      const { server, model } = await sloppy([]);
      server.on(match.schemaName("extract"), { ...perfect, price: "20 to 24" });
      await open("sloppy-shop.html");
      await expect(dh.extract("the product's figures", Product, { model })).rejects.toBeInstanceOf(
        ZodSchemaValidationError,
      );
      expect(server.callCount).toBe(2);
    });
  });

  it("structuredOutputs configured: json_object from the first request, for a server that refuses json_schema", async () => {
    const { server, model } = await sloppy(["rejectJsonSchema"]);
    clickIncrement(server);
    await open("index.html");
    const result = await dh.act("click the increment button", {
      model: { ...model, structuredOutputs: "json_object" },
    });
    expect(result.success).toBe(true);
    expect(server.requests.map((r) => r.responseFormat)).toEqual(["json_object"]);
    expect(await count()).toBe("1");
  });

  // REMOTE: the service keeps what a caller's own model endpoint answered out of its errors (no
  // probing of addresses through it), so the 400's words never reach the client and it cannot tell
  // a refused format from another 400; there, `structuredOutputs` is configured (test above).
  describe.skipIf(mode === "REMOTE")(
    "structured output the server supports, detected from its own 400",
    () => {
      it("rejectJsonSchema: steps down to json_object and stays there for the rest of the session", async () => {
        const { server, model } = await sloppy(["rejectJsonSchema"]);
        clickIncrement(server);
        await open("index.html");
        expect((await dh.act("click the increment button", { model })).success).toBe(true);
        expect((await dh.act("click the increment button", { model })).success).toBe(true);
        expect(await count()).toBe("2");
        expect(server.requests.map((r) => r.responseFormat)).toEqual([
          "json_schema",
          "json_object",
          "json_object",
        ]);
        // Without the response format the schema is in the prompt.
        expect(server.requests[1]?.system).toContain('"elementId"');
      });

      it("rejectResponseFormat: steps down to the schema in the prompt only", async () => {
        const { server, model } = await sloppy(["rejectResponseFormat", "fence"]);
        server.on(match.system("JSON Schema"), (r) =>
          step({ elementId: idOf(r, "button: Increment"), method: "click" }),
        );
        await open("index.html");
        expect((await dh.act("click the increment button", { model })).success).toBe(true);
        expect(server.requests.map((r) => r.responseFormat)).toEqual(["json_schema", "json_object", "text"]);
        expect(await count()).toBe("1");
      });

      it("ignoreJsonSchema: a local server's model sees the schema in the prompt too", async () => {
        const { server, model } = await sloppy(["ignoreJsonSchema"]);
        clickIncrement(server);
        await open("index.html");
        expect((await dh.act("click the increment button", { model })).success).toBe(true);
        expect(server.requests[0]?.responseFormat).toBe("json_schema");
        expect(server.requests[0]?.system).toMatch(/It must match this JSON Schema/);
      });

      it("a 400 that is not about the response format is an error, not a step down", async () => {
        const { server, model } = await sloppy([]);
        server.on(match.always(), () => {
          throw new Error("unused");
        });
        server.failNext(1, 400, { message: "This model's maximum context length is 4096 tokens." });
        await open("index.html");
        await expect(dh.act("click the increment button", { model })).rejects.toThrow(
          /maximum context length/,
        );
        expect(server.callCount).toBe(1);
      });
    },
  );
});
