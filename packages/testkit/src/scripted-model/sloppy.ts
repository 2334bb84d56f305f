// The "sloppy model": what small and local models (7-14B instruct models on Ollama, vLLM, LM
// Studio, llama.cpp) and their servers really do to an answer, one switch per habit, applied to the
// perfect answer a test scripts. A test turns on the quirks it is about; `mixed` rolls them per
// request from a seed, so a run can be repeated exactly.

import type { ScriptedRequest } from "./types.ts";

/** What is done to the text of an answer. */
export type SloppyTextQuirk =
  /** In a Markdown ```json fence. */
  | "fence"
  /** A sentence before and after the JSON. */
  | "prose"
  /** Single quotes around keys and strings. */
  | "singleQuotes"
  /** A comma after the last item of every object and list. */
  | "trailingCommas"
  /** A `//` comment inside the object. */
  | "comments"
  /** A `<think>` block first, holding a decoy JSON object. */
  | "think"
  /**
   * The server's own output limit (the one it uses when the request gives none, like an old
   * Ollama's `num_predict` of 128) is smaller than the answer: cut off in the middle of the JSON,
   * finish reason `length`. A request that gives `max_tokens` is cut at that limit only, as a real
   * server does (see {@link SloppyLayer.answer}).
   */
  | "truncate";

/** What is done to the values of an answer. */
export type SloppyValueQuirk =
  /** elementId as "12". */
  | "idAsString"
  /** elementId as "[12]". */
  | "idInBrackets"
  /** elementId as "#12". */
  | "idWithHash"
  /** elementId replaced by one that is not in the outline. */
  | "idNotInOutline"
  /** The method by another word: input/enter/write for fill, tap (or press, on a button) for click, choose for selectOption. */
  | "methodSynonym"
  /** `arguments` as a string instead of a list. */
  | "argumentsAsString"
  /** Keys the schema does not have. */
  | "extraKeys"
  /** Keys in another case (ElementId, element_id, Price). */
  | "keyCase"
  /** Numbers (other than element ids) as strings: "$24.00", "1,234", "12 kg". */
  | "numbersAsStrings"
  /** Dates (YYYY-MM-DD) written as "November 26, 2026". */
  | "datesOtherForm"
  /** A list of one item given as the item. */
  | "singleItemList"
  /** null for the first required field of an extract answer. */
  | "nullRequired";

/** What the server does with the request. */
export type SloppyServerQuirk =
  /** Answers as if no response_format was sent (the answer is still scripted). */
  | "ignoreJsonSchema"
  /** 400 for response_format json_schema (json_object works). */
  | "rejectJsonSchema"
  /** 400 for any response_format. */
  | "rejectResponseFormat"
  /** 400 for a request with `tools`. */
  | "rejectTools"
  /** 400 for tool_choice "required" (or a named tool). */
  | "rejectRequiredToolChoice"
  /** Tool calls written in the content as `<tool_call>{...}</tool_call>` instead of `tool_calls`. */
  | "textToolCalls"
  /** Tool calls written in the content as a bare JSON object naming the function. */
  | "bareToolCalls";

export type SloppyQuirk = SloppyTextQuirk | SloppyValueQuirk | SloppyServerQuirk;

export const SLOPPY_TEXT_QUIRKS: readonly SloppyTextQuirk[] = [
  "fence",
  "prose",
  "singleQuotes",
  "trailingCommas",
  "comments",
  "think",
  "truncate",
];
export const SLOPPY_VALUE_QUIRKS: readonly SloppyValueQuirk[] = [
  "idAsString",
  "idInBrackets",
  "idWithHash",
  "idNotInOutline",
  "methodSynonym",
  "argumentsAsString",
  "extraKeys",
  "keyCase",
  "numbersAsStrings",
  "datesOtherForm",
  "singleItemList",
  "nullRequired",
];

export interface SloppyOptions {
  /** Quirks applied to every request (server quirks) or every answer. */
  quirks?: SloppyQuirk[];
  /**
   * Quirks rolled per answer from this seed: each text and value quirk with probability `rate`
   * (default 0.3), except the ones that force Deckhand to ask again (truncate, idNotInOutline,
   * nullRequired), which come at `rate / 3`. Server quirks are not rolled: give them in `quirks`.
   */
  mixed?: { seed: number; rate?: number };
}

/** What the sloppy layer did to one answer (for tests and the benchmark). */
export interface SloppyRecord {
  request: number;
  quirks: SloppyQuirk[];
}

/** A small seeded generator (mulberry32): the same seed gives the same run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NEEDS_REASK: ReadonlySet<SloppyQuirk> = new Set(["truncate", "idNotInOutline", "nullRequired"]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function serialize(value: unknown, quote: string, trailing: boolean): string {
  if (Array.isArray(value)) {
    const items = value.map((v) => serialize(v, quote, trailing));
    return `[${items.join(", ")}${trailing && items.length ? "," : ""}]`;
  }
  if (isObject(value)) {
    const entries = Object.entries(value).map(
      ([k, v]) => `${str(k, quote)}: ${serialize(v, quote, trailing)}`,
    );
    return `{${entries.join(", ")}${trailing && entries.length ? "," : ""}}`;
  }
  if (typeof value === "string") return str(value, quote);
  return JSON.stringify(value) ?? "null";
}

function str(text: string, quote: string): string {
  const json = JSON.stringify(text);
  if (quote === '"') return json;
  return `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

const FILL_WORDS = ["input", "enter", "write"];

/** The largest id the outline in the request shows. */
function largestId(request: ScriptedRequest): number {
  let max = 0;
  for (const m of request.text.matchAll(/\[(\d+)\]/g)) max = Math.max(max, Number(m[1]));
  return max;
}

function roleOf(request: ScriptedRequest, id: number): string | undefined {
  return new RegExp(`\\[${id}\\] ([\\w-]+)`).exec(request.text)?.[1];
}

function formatNumber(n: number, random: () => number): string {
  const pick = random();
  if (pick < 0.34) return `$${n.toFixed(2)}`;
  if (pick < 0.67) return Math.abs(n) >= 1000 ? n.toLocaleString("en-US") : `${n}`;
  return `${n} units`;
}

function otherDate(iso: string): string {
  const [y, m, d] = iso.split("-").map(Number);
  const months = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
  ];
  return `${months[(m ?? 1) - 1]} ${d}, ${y}`;
}

/** Applies value quirks to a copy of a perfect answer. */
function sloppyValues(
  answer: unknown,
  quirks: ReadonlySet<SloppyQuirk>,
  request: ScriptedRequest,
  random: () => number,
): unknown {
  if (!isObject(answer)) return answer;
  let out: Json = structuredClone(answer);
  const isAct = "elementId" in out && "method" in out;
  if (isAct) {
    const id = out.elementId;
    if (typeof id === "number" && id >= 0) {
      if (quirks.has("idNotInOutline"))
        out.elementId = largestId(request) + 1000 + Math.floor(random() * 100);
      else if (quirks.has("idInBrackets")) out.elementId = `[${id}]`;
      else if (quirks.has("idWithHash")) out.elementId = `#${id}`;
      else if (quirks.has("idAsString")) out.elementId = String(id);
    }
    if (quirks.has("methodSynonym")) {
      const method = out.method;
      if (method === "fill") out.method = FILL_WORDS[Math.floor(random() * FILL_WORDS.length)];
      else if (method === "selectOption") out.method = "choose";
      else if (method === "click")
        out.method =
          typeof id === "number" && roleOf(request, id) === "button" && random() < 0.5 ? "press" : "tap";
    }
    if (quirks.has("argumentsAsString") && Array.isArray(out.arguments) && out.arguments.length === 1)
      out.arguments = out.arguments[0];
  } else {
    const schemaName = request.schemaName ?? "";
    if (quirks.has("idNotInOutline") && schemaName === "observe" && Array.isArray(out.elements)) {
      const first = out.elements[0];
      if (isObject(first)) first.elementId = largestId(request) + 1000;
    }
    if (quirks.has("idAsString") && Array.isArray(out.elements)) {
      for (const e of out.elements)
        if (isObject(e) && typeof e.elementId === "number") e.elementId = String(e.elementId);
    }
    if (quirks.has("methodSynonym") && Array.isArray(out.elements)) {
      for (const e of out.elements) if (isObject(e) && e.method === "click") e.method = "tap";
    }
    if (quirks.has("numbersAsStrings"))
      out = mapValues(out, (v) => (typeof v === "number" ? formatNumber(v, random) : v)) as Json;
    if (quirks.has("datesOtherForm"))
      out = mapValues(out, (v) =>
        typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v) ? otherDate(v) : v,
      ) as Json;
    if (quirks.has("singleItemList"))
      out = mapValues(out, (v) => (Array.isArray(v) && v.length === 1 && isObject(v[0]) ? v[0] : v)) as Json;
    if (quirks.has("nullRequired")) {
      const target = firstLeafHolder(out);
      if (target) (target.holder as Record<string | number, unknown>)[target.key] = null;
    }
    if (quirks.has("keyCase")) out = recase(out) as Json;
  }
  if (quirks.has("keyCase") && isAct) {
    const { elementId, ...rest } = out;
    out = { element_id: elementId, ...rest };
  }
  if (quirks.has("extraKeys")) out = { ...out, confidence: 0.9, reasoning: "It matches the instruction." };
  return out;
}

function mapValues(value: unknown, f: (v: unknown) => unknown): unknown {
  const mapped = f(value);
  if (mapped !== value) return mapped;
  if (Array.isArray(value)) return value.map((v) => mapValues(v, f));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapValues(v, f)]));
  return value;
}

function recase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(recase);
  if (isObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k === "value" ? k : k.charAt(0).toUpperCase() + k.slice(1),
        recase(v),
      ]),
    );
  return value;
}

/** The first primitive field, depth first (under `value` or an object's own fields). */
function firstLeafHolder(value: unknown): { holder: Json | unknown[]; key: string | number } | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v !== null && typeof v !== "object") return { holder: value, key: i };
      const inner = firstLeafHolder(v);
      if (inner) return inner;
    }
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v !== null && typeof v !== "object") return { holder: value, key: k };
      const inner = firstLeafHolder(v);
      if (inner) return inner;
    }
  }
  return undefined;
}

/**
 * Output tokens of a text as the sloppy server counts them: four characters a token, about what a
 * BPE tokenizer gives for JSON and English. The limit a request gives is applied in these tokens.
 */
export function sloppyTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The output token limit a request gives (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), if any. */
export function requestedOutputLimit(request: ScriptedRequest): number | undefined {
  for (const key of ["max_tokens", "max_completion_tokens", "max_output_tokens"]) {
    const limit = request.body[key];
    if (typeof limit === "number" && limit > 0) return limit;
  }
  return undefined;
}

/** What the server sends for one answer: its text, whether it was cut off, and its output tokens. */
export interface SloppyText {
  text: string;
  truncated: boolean;
  completionTokens: number;
}

/**
 * The text of an answer with the text quirks applied, cut where a real server would cut it: at
 * the limit the request gives when it gives one, else (the `truncate` quirk: the server's own
 * limit is too small) in the middle of the JSON, after whatever the model wrote before it.
 */
function sloppyText(value: unknown, quirks: ReadonlySet<SloppyQuirk>, limit: number | undefined): SloppyText {
  let json = serialize(value, quirks.has("singleQuotes") ? "'" : '"', quirks.has("trailingCommas"));
  if (quirks.has("comments") && json.startsWith("{")) json = `{\n  // the answer\n  ${json.slice(1)}`;
  let before = "";
  let after = "";
  if (quirks.has("fence")) {
    before = "```json\n";
    after = "\n```";
  }
  if (quirks.has("prose")) {
    before = `Sure! Here is the answer:\n${before}`;
    after = `${after}\nLet me know if you need anything else.`;
  }
  if (quirks.has("think"))
    before = `<think>\nThe user wants this. A first guess was {"elementId": 99999, "value": "guess"}, but looking again the answer is below.\n</think>\n${before}`;
  const whole = `${before}${json}${after}`;
  let text = whole;
  if (limit !== undefined) {
    if (sloppyTokens(whole) > limit) text = whole.slice(0, limit * 4);
  } else if (quirks.has("truncate")) {
    text = `${before}${json.slice(0, Math.max(1, Math.floor(json.length * 0.6)))}`;
  }
  return { text, truncated: text !== whole, completionTokens: sloppyTokens(text) };
}

/** The sloppy layer of one server: which quirks apply to a request, and what they do. */
export class SloppyLayer {
  readonly records: SloppyRecord[] = [];
  private readonly fixed: ReadonlySet<SloppyQuirk>;
  private readonly random: () => number;
  private readonly rate: number;
  private readonly mixed: boolean;

  constructor(options: SloppyOptions) {
    this.fixed = new Set(options.quirks ?? []);
    this.mixed = options.mixed !== undefined;
    this.random = seededRandom(options.mixed?.seed ?? 1);
    this.rate = options.mixed?.rate ?? 0.3;
  }

  has(quirk: SloppyServerQuirk): boolean {
    return this.fixed.has(quirk);
  }

  /** A 400 this server answers the request with, if its quirks refuse what it asks for. */
  refusal(request: ScriptedRequest): string | undefined {
    if (this.has("rejectResponseFormat") && request.responseFormat !== "text")
      return `Invalid parameter: response_format of type ${request.responseFormat} is not supported by this server.`;
    if (this.has("rejectJsonSchema") && request.responseFormat === "json_schema")
      return "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.";
    if (this.has("rejectTools") && request.tools.length > 0)
      return `registry.ollama.ai/library/${request.model} does not support tools`;
    const choice = request.body.tool_choice;
    if (this.has("rejectRequiredToolChoice") && (choice === "required" || isObject(choice)))
      return 'Invalid parameter: tool_choice "required" is not supported; use "auto" or "none".';
    return undefined;
  }

  /** The quirks for this answer: the fixed ones, and in mixed mode a roll of the others. */
  private quirksFor(): Set<SloppyQuirk> {
    const quirks = new Set(this.fixed);
    if (this.mixed) {
      for (const q of [...SLOPPY_TEXT_QUIRKS, ...SLOPPY_VALUE_QUIRKS]) {
        const p = NEEDS_REASK.has(q) ? this.rate / 3 : this.rate;
        if (this.random() < p) quirks.add(q);
      }
    }
    return quirks;
  }

  /**
   * A perfect JSON answer made sloppy: its text, whether it ends cut off (finish reason `length`),
   * and its output tokens. The output limit is the server's: the request's `max_tokens` when it
   * gives one (the answer is cut there if it is longer, whatever the quirks), else the server's own,
   * which is too small for this answer when `truncate` is rolled. So a question asked again with a
   * limit large enough is answered whole, as a real server would answer it; the other quirks of the
   * second answer are rolled afresh, as likely as on the first.
   */
  answer(request: ScriptedRequest, perfect: unknown): SloppyText {
    const quirks = this.quirksFor();
    const limit = requestedOutputLimit(request);
    const result = sloppyText(sloppyValues(perfect, quirks, request, this.random), quirks, limit);
    // What the answer really had: `truncate` under a limit the request gave is the limit's doing.
    if (limit !== undefined) {
      quirks.delete("truncate");
      if (result.truncated) quirks.add("truncate");
    }
    this.records.push({ request: request.index, quirks: [...quirks] });
    return result;
  }

  /** Tool calls written as text, when the server's quirks say so (or the request sent no tools). */
  toolCallsAsText(
    request: ScriptedRequest,
    calls: { name: string; arguments: string }[],
  ): string | undefined {
    const bare = this.has("bareToolCalls");
    if (!bare && !this.has("textToolCalls") && request.tools.length > 0) return undefined;
    return calls
      .map((c) => {
        const json = `{"name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments || "{}"}}`;
        return bare ? json : `<tool_call>\n${json}\n</tool_call>`;
      })
      .join("\n");
  }
}
