// Models as the operations use them: configuration errors and unusable answers surface from
// act, extract and observe as the spec's error classes; a per-call `model`, a custom `llmClient`
// and the `systemPrompt` reach every operation.

import { match, type ScriptedRequest } from "@deckhand/testkit";
import {
  type Deckhand,
  InvalidAISDKModelFormatError,
  type LLMClient,
  type LLMRequest,
  type LLMResponse,
  LLMResponseError,
  MissingLLMConfigurationError,
  ServiceError,
  UnsupportedModelError,
} from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY,
  anotherDeckhand,
  idOf,
  MODES,
  modelConfig,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  step,
  textOf,
} from "./helpers.ts";

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

  type Operation = "act" | "extract" | "observe";
  const operations: Operation[] = ["act", "extract", "observe"];

  /** Runs one operation that needs a model, with these per-call options. */
  function run(dh: Deckhand, operation: Operation, options: Record<string, unknown> = {}): Promise<unknown> {
    if (operation === "act") return dh.act("click the increment button", options);
    if (operation === "extract") return dh.extract("what is the count?", options);
    return dh.observe("find the increment button", options);
  }

  describe("configuration errors surface from every operation", () => {
    beforeAll(async () => {
      await open(fx, "index.html");
    });

    it.each(operations)(
      "%s: a model string that is not provider/model (nor a known bare name) gives InvalidAISDKModelFormatError",
      async (op) => {
        const calls = fx.model.callCount;
        const error = await run(fx.dh, op, { model: "mystery-model-7" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidAISDKModelFormatError);
        expect(error).toBeInstanceOf(ServiceError);
        expect(fx.model.callCount).toBe(calls);
      },
    );

    it.each(operations)("%s: an unknown provider gives UnsupportedModelError", async (op) => {
      await expect(run(fx.dh, op, { model: "nosuchprovider/model-1" })).rejects.toThrow(
        UnsupportedModelError,
      );
    });

    describe("with no model, no key and no llmClient", () => {
      let bare: Deckhand;
      let saved: string | undefined;
      beforeAll(async () => {
        saved = process.env.OPENAI_API_KEY;
        delete process.env.OPENAI_API_KEY;
        bare = await anotherDeckhand(fx, { model: undefined });
        await open(fx, "index.html", bare);
      });
      afterAll(async () => {
        await bare?.close();
        if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
      });

      it.each(operations)("%s gives MissingLLMConfigurationError", async (op) => {
        const calls = fx.model.callCount;
        await expect(run(bare, op)).rejects.toThrow(MissingLLMConfigurationError);
        expect(fx.model.callCount).toBe(calls);
      });

      it("still runs what needs no model: observe(), extract() and act(action)", async () => {
        expect((await bare.observe()).map((a) => a.description)).toContain("button: Increment");
        expect((await bare.extract()).pageText).toContain("button: Increment");
        expect((await bare.act({ selector: "#increment", description: "Increment" })).success).toBe(true);
      });
    });
  });

  describe("unusable answers", () => {
    beforeAll(async () => {
      await open(fx, "index.html");
    });

    it.each(operations)("%s: an answer that is not JSON, twice, gives LLMResponseError", async (op) => {
      const before = fx.model.callCount;
      fx.model.on(match.always(), "Sure! The button is over there.");
      const error = await run(fx.dh, op).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LLMResponseError);
      expect((error as Error).message).toContain("asked twice");
      expect(fx.model.callCount - before).toBe(2);
    });

    it.each(["act", "observe"] as const)(
      "%s: an answer of the wrong shape, twice, gives LLMResponseError (not a schema error of the caller's)",
      async (op) => {
        fx.model.on(match.always(), { element: "the increment button" });
        const error = await run(fx.dh, op).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LLMResponseError);
        expect((error as Error).message).toMatch(/does not match the (act|observe) answer schema/);
      },
    );

    it("recovers when only the first answer is unusable", async () => {
      const page = await open(fx, "index.html");
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Increment"), method: "click" }));
      fx.model.once(match.schemaName("act"), "{broken");
      expect((await fx.dh.act("click the increment button")).success).toBe(true);
      expect(await textOf(page, "#count")).toBe("1");
    });
  });

  describe("which model answers", () => {
    beforeAll(async () => {
      await open(fx, "index.html");
    });

    it.each(operations)("%s: a per-call `model` replaces the instance's model", async (op) => {
      fx.model.on(match.model("gpt-4.1-nano"), (request: ScriptedRequest) => {
        if (request.schemaName === "act")
          return step({ elementId: idOf(request, "button: Increment"), method: "click" });
        if (request.schemaName === "observe") return { elements: [] };
        return { extraction: "1" };
      });
      await run(fx.dh, op, {
        model: { ...modelConfig(fx.model), modelName: "openai/gpt-4.1-nano", apiKey: "sk-test-per-call-42" },
      });
      expect(fx.model.lastRequest?.model).toBe("gpt-4.1-nano");
      expect(fx.model.lastRequest?.apiKey).toBe("sk-test-per-call-42");
    });

    it("uses the instance's model otherwise, with its key", async () => {
      fx.model.on(match.schemaName("extract"), { extraction: "0" });
      await fx.dh.extract("what is the count?");
      expect(fx.model.lastRequest?.model).toBe("gpt-4.1-mini");
      expect(fx.model.lastRequest?.apiKey).toBe(API_KEY);
    });
  });

  // LOCAL only: the client's code cannot travel to the service, which calls the model itself
  // (test/remote/options.test.ts checks that REMOTE refuses an llmClient).
  describe.skipIf(mode === "REMOTE")("a custom llmClient", () => {
    const requests: LLMRequest[] = [];
    const llmClient: LLMClient = {
      modelName: "house/ranker-1",
      async generate<T>(request: LLMRequest): Promise<LLMResponse<T>> {
        requests.push(request);
        const text = request.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
        const increment = Number(/\[(\d+)\] button: Increment/.exec(text)?.[1]);
        const data =
          request.operation === "act"
            ? {
                elementId: increment,
                method: "click",
                arguments: [],
                description: "click Increment",
                completed: true,
              }
            : request.operation === "observe"
              ? { elements: [{ elementId: increment, description: "the Increment button" }] }
              : { extraction: "the count is 0" };
        return { data: data as T, usage: { promptTokens: 7, completionTokens: 2 } };
      },
    };
    let dh: Deckhand;
    beforeAll(async () => {
      dh = await anotherDeckhand(fx, { model: undefined, llmClient });
    });
    afterAll(async () => {
      await dh?.close();
    });

    it("answers act, observe and extract, and no request reaches a provider", async () => {
      const page = await open(fx, "index.html", dh);
      const calls = fx.model.callCount;
      expect(await dh.extract("what is the count?")).toEqual({ extraction: "the count is 0" });
      const [action] = await dh.observe("find the increment button");
      expect(action?.description).toBe("the Increment button");
      expect((await dh.act("click the increment button")).success).toBe(true);
      expect(await textOf(page, "#count")).toBe("1");
      expect(requests.map((r) => r.operation)).toEqual(["extract", "observe", "act"]);
      expect(fx.model.callCount).toBe(calls);
      // Its usage is counted like any model's.
      expect((await dh.metrics).totalPromptTokens).toBe(21);
    });
  });

  describe("systemPrompt", () => {
    it("reaches the system message of act, extract and observe", async () => {
      const marker = "House rule 7731: prefer buttons to links.";
      const dh = await anotherDeckhand(fx, { systemPrompt: marker });
      try {
        await open(fx, "index.html", dh);
        onAct(fx.model, (request) =>
          step({ elementId: idOf(request, "button: Increment"), method: "click" }),
        );
        fx.model.on(match.schemaName("observe"), { elements: [] });
        fx.model.on(match.schemaName("extract"), { extraction: "1" });
        const before = fx.model.requests.length;
        await dh.act("click increment");
        await dh.observe("find the link");
        await dh.extract("what is the count?");
        const asked = fx.model.requests.slice(before);
        expect(asked.map((r) => r.schemaName)).toEqual(["act", "observe", "extract"]);
        for (const request of asked) {
          expect(request.system).toContain(marker);
          // Added to the operation's own instructions, not instead of them.
          expect(request.system).toContain("The page is given as an outline");
        }
      } finally {
        await dh.close();
      }
    });
  });
});
