// The tolerant reader's rules, one by one (docs/tolerant-reader.md): what it repairs, and what it
// refuses because it could be read in more than one way.

import { describe, expect, it } from "vitest";
import {
  coerceToSchema,
  dateIn,
  numberIn,
  readJsonAnswer,
  splitThinking,
} from "../../src/llm/answer-reader.ts";

function read(text: string) {
  const result = readJsonAnswer(text);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result;
}

function refused(text: string): string {
  const result = readJsonAnswer(text);
  if (result.ok) throw new Error(`read as ${JSON.stringify(result.value)}`);
  return result.reason;
}

describe("readJsonAnswer", () => {
  it("reads clean JSON with no repairs", () => {
    expect(read('{"a": 1}')).toEqual({ ok: true, value: { a: 1 }, repairs: [] });
  });

  it("takes the object out of a Markdown fence with prose before and after", () => {
    const result = read(
      'Sure! Here is the answer:\n```json\n{"elementId": 12, "method": "click"}\n```\nHope this helps.',
    );
    expect(result.value).toEqual({ elementId: 12, method: "click" });
    expect(result.repairs).toContain("took the JSON out of a code fence");
  });

  it("takes the object out of prose without a fence", () => {
    const result = read('The element is {"elementId": 3} as you asked.');
    expect(result.value).toEqual({ elementId: 3 });
    expect(result.repairs).toContain("left out the prose around the JSON");
  });

  it("repairs single quotes, trailing commas, comments and Python constants", () => {
    const result = read("{'a': 'x', // the a\n 'b': [1, 2,], /* done */ 'c': True, 'd': None,}");
    expect(result.value).toEqual({ a: "x", b: [1, 2], c: true, d: null });
    expect(result.repairs).toContain("repaired the JSON syntax");
  });

  it("leaves out a <think> block, even one that mentions JSON", () => {
    const result = read('<think>Maybe {"elementId": 4}? No, the button is 7.</think>\n{"elementId": 7}');
    expect(result.value).toEqual({ elementId: 7 });
    expect(result.repairs).toContain("left out the reasoning block");
    expect(splitThinking("reasoning without its opening tag</think>{}").reasoning).toBe(
      "reasoning without its opening tag",
    );
  });

  it("refuses an answer that is only reasoning, or a think block never closed", () => {
    expect(refused("<think>The button is [12], so")).toMatch(/only reasoning/);
  });

  it("refuses an object cut off at the token limit instead of completing it", () => {
    expect(refused('{"elementId": 12, "method": "cl')).toMatch(/cut off/);
    expect(refused('```json\n{"items": [{"name": "Tea", "price": 3.5}, {"name": "Cof')).toMatch(/cut off/);
  });

  it("refuses two objects: which one was meant cannot be known", () => {
    expect(refused('{"elementId": 3}\nor maybe\n{"elementId": 4}')).toMatch(/2 JSON objects/);
    expect(refused('```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```')).toMatch(/2 JSON code blocks/);
  });

  it("refuses an empty answer and prose with no JSON", () => {
    expect(refused("   ")).toMatch(/empty/);
    expect(refused("I cannot find that button.")).toMatch(/not valid JSON/);
  });
});

describe("numberIn and dateIn", () => {
  it.each([
    ["$24.00", 24],
    ["1,234", 1234],
    ["12 kg", 12],
    ["-3.5", -3.5],
    ["€1.234,56", 1234.56],
    ["[12]", 12],
    ["#12", 12],
  ])("%s holds exactly the number %d", (text, n) => {
    expect(numberIn(text)).toBe(n);
  });

  it.each(["3 to 5", "1,5", "twelve", "", "12.5.3 and 4"])("%j is not read as a number", (text) => {
    expect(numberIn(text)).toBeUndefined();
  });

  it.each([
    ["2026-11-26T10:00:00Z", "2026-11-26"],
    ["2026/11/26", "2026-11-26"],
    ["November 26, 2026", "2026-11-26"],
    ["Thu, 26 Nov 2026", "2026-11-26"],
    ["26/11/2026", "2026-11-26"],
    ["11/26/2026", "2026-11-26"],
  ])("reads the date %s as %s", (text, iso) => {
    expect(dateIn(text)).toBe(iso);
  });

  it.each(["03/04/2026", "next Tuesday", "2026-02-30"])("does not read %j as a date", (text) => {
    expect(dateIn(text)).toBeUndefined();
  });
});

describe("coerceToSchema", () => {
  const product = {
    type: "object",
    properties: {
      name: { type: "string" },
      price: { type: "number" },
      stock: { type: "integer" },
      inStock: { type: "boolean" },
      released: { type: "string", format: "date" },
      tags: { type: "array", items: { type: "string" } },
      size: { type: "string", enum: ["small", "large"] },
      note: { anyOf: [{ type: "number" }, { type: "null" }] },
    },
    required: ["name", "price"],
    additionalProperties: false,
  };

  it("brings a sloppy answer to the schema where it reads one way, and notes each repair", () => {
    const { value, repairs } = coerceToSchema(
      {
        Name: "Tea",
        price: "$24.00",
        stock: "1,234",
        in_stock: "yes",
        released: "November 26, 2026",
        tags: "green",
        size: "Large",
        note: "7 left",
        colour: "green",
      },
      product,
    );
    expect(value).toEqual({
      name: "Tea",
      price: 24,
      stock: 1234,
      inStock: true,
      released: "2026-11-26",
      tags: ["green"],
      size: "large",
      note: 7,
    });
    expect(repairs).toHaveLength(10);
  });

  it("leaves alone what is already right, and what reads two ways", () => {
    const right = { name: "Tea", price: 3.5 };
    expect(coerceToSchema(right, product)).toEqual({ value: right, repairs: [] });
    const ambiguous = {
      name: "Tea",
      price: "3 to 5",
      stock: "2.5",
      released: "03/04/2026",
      inStock: "maybe",
    };
    expect(coerceToSchema(ambiguous, product).value).toEqual(ambiguous);
  });

  it("keeps null for a required field as null (the schema check refuses it; nothing is made up)", () => {
    expect(coerceToSchema({ name: "Tea", price: null }, product).value).toEqual({ name: "Tea", price: null });
  });

  it("reads a list of one given as the object, through $ref", () => {
    const schema = {
      type: "object",
      properties: { items: { type: "array", items: { $ref: "#/$defs/item" } } },
      $defs: { item: { type: "object", properties: { price: { type: "number" } } } },
    };
    expect(coerceToSchema({ items: { price: "4" } }, schema).value).toEqual({ items: [{ price: 4 }] });
  });

  it("reads a list written as a JSON string", () => {
    const schema = {
      type: "object",
      properties: { arguments: { type: "array", items: { type: "string" } } },
    };
    expect(coerceToSchema({ arguments: '["a", "b"]' }, schema).value).toEqual({ arguments: ["a", "b"] });
    expect(coerceToSchema({ arguments: "hello" }, schema).value).toEqual({ arguments: ["hello"] });
  });
});
