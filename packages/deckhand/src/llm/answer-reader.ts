// The tolerant reader of model answers. Small and local models answer less cleanly than the big
// hosted ones: the JSON comes in a Markdown fence, after a sentence of prose, with single quotes,
// trailing commas or comments, behind a `<think>` block; a number field holds "$24.00"; a list of
// one is given as the item itself; a key comes in another case. What can be read in exactly one
// way is read that way (and the repair is noted); what cannot (two JSON objects, an answer cut off
// before it closed, "1,5" for a number) is refused with words the model can act on when it is
// asked again. Nothing here guesses. The rules are listed in docs/tolerant-reader.md.

import { jsonrepair } from "jsonrepair";

export type ReadResult = { ok: true; value: unknown; repairs: string[] } | { ok: false; reason: string };

const THINK_TAGS = ["think", "thinking", "reasoning"];

/**
 * Splits a reasoning model's `<think>...</think>` (or `<thinking>`, `<reasoning>`) blocks from its
 * answer. An opening tag that is never closed makes the rest reasoning; a closing tag with no
 * opening one (templates that put the opening tag in the prompt) makes what precedes it reasoning.
 */
export function splitThinking(text: string): { answer: string; reasoning: string } {
  let answer = text;
  const reasoning: string[] = [];
  for (const tag of THINK_TAGS) {
    const open = `<${tag}>`;
    const close = `</${tag}>`;
    const lower = () => answer.toLowerCase();
    const closeAt = lower().indexOf(close);
    const openAt = lower().indexOf(open);
    if (closeAt >= 0 && (openAt < 0 || openAt > closeAt)) {
      reasoning.push(answer.slice(0, closeAt));
      answer = answer.slice(closeAt + close.length);
    }
    for (;;) {
      const start = lower().indexOf(open);
      if (start < 0) break;
      const end = lower().indexOf(close, start + open.length);
      if (end < 0) {
        reasoning.push(answer.slice(start + open.length));
        answer = answer.slice(0, start);
        break;
      }
      reasoning.push(answer.slice(start + open.length, end));
      answer = answer.slice(0, start) + answer.slice(end + close.length);
    }
  }
  return { answer: answer.trim(), reasoning: reasoning.join("\n").trim() };
}

/**
 * Where the JSON object that starts at `start` ends (the index after its closing brace), or -1
 * when it never closes (an answer cut off at the token limit). Strings in double or single quotes
 * and comments are skipped.
 */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === "\\" ? 2 : 1;
      if (i >= text.length) return -1;
    } else if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl;
      continue;
    } else if (c === "/" && text[i + 1] === "*") {
      const endComment = text.indexOf("*/", i + 2);
      if (endComment < 0) return -1;
      i = endComment + 2;
      continue;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

function parseLoose(
  candidate: string,
): { ok: true; value: unknown; repaired: boolean } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(candidate), repaired: false };
  } catch {
    // Not strict JSON: single quotes, trailing commas, comments, unquoted keys, Python's True/None.
  }
  try {
    return { ok: true, value: JSON.parse(jsonrepair(candidate)), repaired: true };
  } catch (error) {
    return {
      ok: false,
      reason: `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

/** The JSON objects that start outside strings in `text`, as [start, end) ranges (end -1: not closed). */
function objectRanges(text: string): [number, number][] {
  const ranges: [number, number][] = [];
  let i = text.indexOf("{");
  while (i >= 0) {
    const end = objectEnd(text, i);
    ranges.push([i, end]);
    if (end < 0) break;
    i = text.indexOf("{", end);
  }
  return ranges;
}

/**
 * Reads the one JSON object a model answered with, however it was wrapped. Refuses an empty
 * answer, an object that was cut off before it closed, and an answer that holds two objects
 * (which one was meant cannot be known).
 */
export function readJsonAnswer(text: string): ReadResult {
  const repairs: string[] = [];
  const { answer, reasoning } = splitThinking(text);
  if (reasoning) repairs.push("left out the reasoning block");
  if (answer === "") {
    return {
      ok: false,
      reason: reasoning
        ? "the answer holds only reasoning (a <think> block) and no JSON object"
        : "the model returned an empty answer",
    };
  }
  let body = answer;
  const fences = [...answer.matchAll(/```[A-Za-z0-9_-]*[ \t]*\n?([\s\S]*?)```/g)].filter((m) =>
    m[1]!.includes("{"),
  );
  if (fences.length > 1) {
    return {
      ok: false,
      reason: `the answer holds ${fences.length} JSON code blocks; answer with exactly one JSON object`,
    };
  }
  if (fences.length === 1) {
    body = fences[0]![1]!;
    repairs.push("took the JSON out of a code fence");
  } else {
    const open = /```[A-Za-z0-9_-]*[ \t]*\n?/.exec(answer);
    if (open && !answer.slice(open.index + open[0].length).includes("```")) {
      body = answer.slice(open.index + open[0].length);
      repairs.push("took the JSON out of a code fence");
    }
  }
  const ranges = objectRanges(body);
  const first = ranges[0];
  if (!first) {
    const trimmed = body.trim();
    // A bare value (a list, a string) is passed on as it is: the schema check says what is wrong.
    if (trimmed.startsWith("[") || trimmed.startsWith('"')) {
      const parsed = parseLoose(trimmed);
      if (parsed.ok) return { ok: true, value: parsed.value, repairs };
    }
    return { ok: false, reason: "the answer is not valid JSON: it holds no JSON object" };
  }
  if (first[1] < 0) {
    return {
      ok: false,
      reason:
        "the answer was cut off before its JSON object closed (at the output token limit?); answer again, more briefly",
    };
  }
  const parsed = parseLoose(body.slice(first[0], first[1]));
  if (!parsed.ok) return parsed;
  const others = ranges.slice(1).filter(([s, e]) => e > 0 && parseLoose(body.slice(s, e)).ok);
  if (others.length > 0) {
    return {
      ok: false,
      reason: `the answer holds ${others.length + 1} JSON objects; answer with exactly one`,
    };
  }
  if (parsed.repaired) repairs.push("repaired the JSON syntax");
  if (body.slice(0, first[0]).trim() !== "" || body.slice(first[1]).trim() !== "")
    repairs.push("left out the prose around the JSON");
  return { ok: true, value: parsed.value, repairs };
}

// ---------- values against the schema ----------

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The number a string holds when it holds exactly one: "$24.00" -> 24, "1,234" -> 1234,
 * "12 kg" -> 12, "-3.5" -> -3.5, "1.234,56" -> 1234.56. Undefined for none, two ("3 to 5"), or one
 * that reads two ways ("1,5").
 */
export function numberIn(text: string): number | undefined {
  const tokens = text.match(/[-\u2212]?\d+(?:[.,]\d+)*/g);
  if (tokens?.length !== 1) return undefined;
  let token = tokens[0]!.replace("\u2212", "-");
  const sign = token.startsWith("-") ? -1 : 1;
  token = token.replace(/^-/, "");
  let digits: string;
  if (/^\d+$/.test(token) || /^\d+\.\d+$/.test(token)) digits = token;
  else if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(token)) digits = token.replace(/,/g, "");
  else if (/^\d{1,3}(\.\d{3})+,\d+$/.test(token) || /^\d{1,3}(\.\d{3}){2,}$/.test(token))
    digits = token.replace(/\./g, "").replace(",", ".");
  else return undefined;
  const value = sign * Number(digits);
  return Number.isFinite(value) ? value : undefined;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

function isoDate(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return undefined;
  return date.toISOString().slice(0, 10);
}

function monthOf(word: string): number | undefined {
  const index = MONTHS.indexOf(word.slice(0, 3).toLowerCase());
  return index >= 0 ? index + 1 : undefined;
}

/**
 * A date written another way, as YYYY-MM-DD, when it reads one way only: "2026-11-26T10:00Z",
 * "2026/11/26", "November 26, 2026", "26 Nov 2026", "26/11/2026" (26 cannot be a month). Undefined
 * for "03/04/2026" (March 4 or April 3?) and anything else.
 */
export function dateIn(text: string): string | undefined {
  const s = text.trim();
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ].*)?$/.exec(s);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(?:[A-Za-z]+,?\s+)?([A-Za-z]{3,})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$/.exec(s);
  if (m) {
    const month = monthOf(m[1]!);
    return month ? isoDate(Number(m[3]), month, Number(m[2])) : undefined;
  }
  m = /^(?:[A-Za-z]+,?\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,})\.?,?\s+(\d{4})$/.exec(s);
  if (m) {
    const month = monthOf(m[2]!);
    return month ? isoDate(Number(m[3]), month, Number(m[1])) : undefined;
  }
  m = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(s);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    if (a > 12 && b <= 12) return isoDate(Number(m[3]), b, a);
    if (b > 12 && a <= 12) return isoDate(Number(m[3]), a, b);
    return a === b ? isoDate(Number(m[3]), a, b) : undefined;
  }
  return undefined;
}

function fits(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return true;
  }
}

function typesOf(schema: Json): string[] {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === "string");
  if (isObject(schema.properties)) return ["object"];
  if (schema.items !== undefined) return ["array"];
  return [];
}

function resolveRef(schema: Json, root: Json): Json {
  let current = schema;
  for (let hops = 0; hops < 16 && typeof current.$ref === "string"; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith("#")) return current;
    let target: unknown = root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      target = isObject(target) ? target[key] : undefined;
    }
    if (!isObject(target)) return current;
    current = target;
  }
  return current;
}

/** A key compared loosely: case, `_`, `-` and spaces do not count. */
function looseKey(key: string): string {
  return key.replace(/[\s_-]+/g, "").toLowerCase();
}

class Coercer {
  readonly repairs: string[] = [];
  private readonly root: Json;
  constructor(root: Json) {
    this.root = root;
  }

  private note(path: string, what: string): void {
    this.repairs.push(`${path || "(root)"}: ${what}`);
  }

  value(value: unknown, rawSchema: unknown, path: string, depth: number): unknown {
    if (!isObject(rawSchema) || depth > 64) return value;
    const schema = resolveRef(rawSchema, this.root);
    const branches = (
      Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []
    )
      .filter(isObject)
      .map((b) => resolveRef(b, this.root));
    if (branches.length > 0) {
      if (value === null && branches.some((b) => typesOf(b).includes("null"))) return value;
      const nonNull = branches.filter((b) => !(typesOf(b).length === 1 && typesOf(b)[0] === "null"));
      // Which branch a value that fits none was meant for is known only when there is one.
      if (nonNull.length === 1) return this.value(value, nonNull[0], path, depth + 1);
      return value;
    }
    const types = typesOf(schema);
    let out = value;
    if (types.length > 0 && !types.some((t) => fits(value, t)))
      out = this.convert(value, types, schema, path);
    if (typeof out === "string") out = this.stringValue(out, schema, path);
    if (Array.isArray(out) && schema.items !== undefined) {
      const items = schema.items;
      out = out.map((item, i) => this.value(item, items, `${path}[${i}]`, depth + 1));
    } else if (isObject(out) && isObject(schema.properties)) {
      out = this.object(out, schema, path, depth);
    }
    return out;
  }

  private convert(value: unknown, types: string[], schema: Json, path: string): unknown {
    for (const type of types) {
      if ((type === "number" || type === "integer") && typeof value === "string") {
        const n = numberIn(value);
        if (n !== undefined && (type === "number" || Number.isInteger(n))) {
          this.note(path, `read the number ${n} from ${JSON.stringify(value)}`);
          return n;
        }
      }
      if (type === "boolean" && typeof value === "string") {
        const word = value.trim().toLowerCase();
        if (word === "true" || word === "yes") {
          this.note(path, `read ${JSON.stringify(value)} as true`);
          return true;
        }
        if (word === "false" || word === "no") {
          this.note(path, `read ${JSON.stringify(value)} as false`);
          return false;
        }
      }
      if (type === "string" && (typeof value === "number" || typeof value === "boolean")) {
        this.note(path, `read ${String(value)} as the string ${JSON.stringify(String(value))}`);
        return String(value);
      }
      if (type === "array" && value !== null && value !== undefined) {
        if (typeof value === "string" && value.trim().startsWith("[")) {
          const parsed = parseLoose(value.trim());
          if (parsed.ok && Array.isArray(parsed.value)) {
            this.note(path, "read a list written as a string");
            return parsed.value;
          }
        }
        this.note(path, "read a single item as a list of one");
        return [value];
      }
      if (type === "object" && typeof value === "string" && value.trim().startsWith("{")) {
        const parsed = parseLoose(value.trim());
        if (parsed.ok && isObject(parsed.value)) {
          this.note(path, "read an object written as a string");
          return parsed.value;
        }
      }
    }
    void schema;
    return value;
  }

  private stringValue(value: string, schema: Json, path: string): unknown {
    if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
      const same = schema.enum.filter(
        (e): e is string => typeof e === "string" && e.toLowerCase() === value.trim().toLowerCase(),
      );
      if (same.length === 1) {
        this.note(path, `read ${JSON.stringify(value)} as ${JSON.stringify(same[0])}`);
        return same[0];
      }
    }
    if (schema.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      const date = dateIn(value);
      if (date) {
        this.note(path, `read the date ${JSON.stringify(value)} as ${date}`);
        return date;
      }
    }
    return value;
  }

  private object(value: Json, schema: Json, path: string, depth: number): Json {
    const properties = schema.properties as Json;
    const names = Object.keys(properties);
    const out: Json = {};
    for (const [key, item] of Object.entries(value)) {
      let name = key;
      if (!Object.hasOwn(properties, key)) {
        const loose = names.filter((n) => looseKey(n) === looseKey(key));
        if (loose.length === 1 && !Object.hasOwn(value, loose[0]!)) {
          name = loose[0]!;
          this.note(path, `read the key ${JSON.stringify(key)} as ${JSON.stringify(name)}`);
        } else if (schema.additionalProperties === false) {
          this.note(path, `left out the key ${JSON.stringify(key)}, which the schema does not have`);
          continue;
        }
      }
      out[name] = item;
    }
    for (const name of Object.keys(out)) {
      if (Object.hasOwn(properties, name)) {
        const sub = path ? `${path}.${name}` : name;
        out[name] = this.value(out[name], properties[name], sub, depth + 1);
      }
    }
    return out;
  }
}

/**
 * Brings a parsed answer to the schema where that can be done in one way only (see
 * {@link numberIn}, {@link dateIn}; "yes"/"no" for booleans; one item for a list; a key in another
 * case; a key the schema forbids left out). Values that already fit are left as they are; what
 * cannot be brought in line is left for the schema check to name.
 */
export function coerceToSchema(value: unknown, schema: Json): { value: unknown; repairs: string[] } {
  const coercer = new Coercer(schema);
  const out = coercer.value(value, schema, "", 0);
  return { value: out, repairs: coercer.repairs };
}
