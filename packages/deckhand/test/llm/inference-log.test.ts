import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { match, type ScriptedModel, startScriptedModel } from "@deckhand/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ModelCaller } from "../../src/llm/caller.ts";
import { collectingLog, OPTION_KEY, openaiModel, TINY_PNG } from "./helpers.ts";

let server: ScriptedModel;
let dir: string;

beforeAll(async () => {
  server = await startScriptedModel();
});

afterAll(async () => {
  await server.close();
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "deckhand-inference-"));
});

afterEach(async () => {
  server.clear();
  server.resetRequests();
  await rm(dir, { recursive: true, force: true });
});

/** A caller of the scripted model that writes each call to the test's directory. */
function loggingCaller(log: ReturnType<typeof collectingLog>["log"]): ModelCaller {
  return new ModelCaller({ model: openaiModel(server), log, logInferenceToFile: true, inferenceLogDir: dir });
}

async function readAll(): Promise<{ name: string; text: string }[]> {
  const names = (await readdir(dir)).sort();
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(join(dir, name), "utf8") })));
}

describe("logInferenceToFile", () => {
  it("writes one JSON file per model call with prompt, answer, usage, time and operation", async () => {
    server.on("the price", { price: 4 }, { usage: { promptTokens: 33, completionTokens: 5 } });
    server.on("say hi", "hi");
    const { log } = collectingLog(0);
    const caller = loggingCaller(log);
    await caller.call({
      operation: "extract",
      messages: [{ role: "user", content: "the price" }],
      schema: z.object({ price: z.number() }),
    });
    await caller.call({ operation: "act", messages: [{ role: "user", content: "say hi" }] });

    const files = await readAll();
    expect(files).toHaveLength(2);
    const extract = JSON.parse(files.find((f) => f.name.endsWith("-extract.json"))?.text ?? "{}");
    expect(extract).toMatchObject({
      operation: "extract",
      model: "openai/gpt-4.1-mini",
      attempt: 1,
      answer: { price: 4 },
      usage: { promptTokens: 33, completionTokens: 5 },
      messages: [{ role: "user", content: "the price" }],
    });
    expect(typeof extract.inferenceTimeMs).toBe("number");
    expect(extract.schema).toMatchObject({ type: "object" });
  });

  it("writes a file for each attempt, including the rejected answer", async () => {
    server.once("the price", { price: "four" });
    server.on("does not match", { price: 4 });
    const { log } = collectingLog(0);
    const caller = loggingCaller(log);
    await caller.call({
      operation: "extract",
      messages: [{ role: "user", content: "the price" }],
      schema: z.object({ price: z.number() }),
    });
    const records = (await readAll()).map((f) => JSON.parse(f.text));
    expect(records.map((r) => r.attempt).sort()).toEqual([1, 2]);
    expect(records.find((r) => r.attempt === 1)).toMatchObject({
      answer: { price: "four" },
      error: expect.stringContaining("price"),
    });
  });

  it("redacts secrets and variable values and replaces images, in every file", async () => {
    const secret = "hunter2-correct-horse-battery";
    server.on(match.always(), (request) => ({ value: `I saw ${request.lastUserText}` }));
    const { log } = collectingLog(0);
    log.redactor.add(secret); // what the operations layer does with variable values
    const caller = loggingCaller(log);
    await caller.call({
      operation: "extract",
      messages: [
        { role: "system", content: `Never reveal ${secret}.` },
        {
          role: "user",
          content: [
            { type: "text", text: `the password is ${secret}` },
            { type: "image", image: TINY_PNG },
          ],
        },
      ],
      schema: z.string(),
    });
    const files = await readAll();
    expect(files).toHaveLength(1);
    for (const file of files) {
      expect(file.text).not.toContain(secret);
      expect(file.text).not.toContain(OPTION_KEY);
      expect(file.text).toContain("[redacted]");
      expect(file.text).toContain("[image image/png, 16 bytes]");
      expect(file.text).not.toContain(Buffer.from(TINY_PNG).toString("base64"));
    }
  });

  it("writes nothing when it is off", async () => {
    server.on(match.always(), "ok");
    const { log } = collectingLog(0);
    const caller = new ModelCaller({ model: openaiModel(server), log, inferenceLogDir: dir });
    await caller.call({ operation: "act", messages: [{ role: "user", content: "x" }] });
    expect(await readAll()).toHaveLength(0);
    expect(caller.inferenceLogDir).toBeUndefined();
  });
});
