// Limits on an answer's JSON Schema, checked before it is compiled or sent to a model. A schema
// comes from the caller (over HTTP, from any tenant of the service), and everything done with it
// afterwards (ajv's compilation, the URL-field rewrite, the model request, cache keys, logs) walks
// it, some of it recursively and some following every `$ref`. Unchecked, a 60,000-value enum took a
// minute of one CPU and a schema 3,000 levels deep or referring to itself overflowed the stack.
// ajv compiles a schema into code, at a cost that grows with its size (and, for the members of one
// anyOf, faster than that): the size, property and alternative limits keep one compilation within
// tens of milliseconds on a small machine (npm run bench -- --only=schema).
//
// The check itself is one iterative pass (it stops as soon as a limit is crossed, so it cannot be
// made to run long or deep), plus work on the `$ref`s that is bounded by their number.

import { ServiceInvalidArgumentError } from "../errors.ts";

export interface JsonSchemaLimits {
  /** Characters of the schema written as JSON (about). */
  maxSize: number;
  /** Nesting of objects and arrays. */
  maxDepth: number;
  /** Values of one `enum`. */
  maxEnumValues: number;
  /** Properties declared by all `properties` objects together. */
  maxProperties: number;
  /** Members of all `anyOf`, `oneOf` and `allOf` lists together. */
  maxAlternatives: number;
  /** `$ref`s in the schema. */
  maxRefs: number;
  /** JSON values of the schema with every `$ref` replaced by what it points to. */
  maxExpandedSize: number;
}

/** The limits Deckhand holds every JSON Schema to (the service's too). */
export const JSON_SCHEMA_LIMITS: Readonly<JsonSchemaLimits> = Object.freeze({
  maxSize: 32_000,
  maxDepth: 64,
  maxEnumValues: 1000,
  maxProperties: 500,
  maxAlternatives: 200,
  maxRefs: 100,
  maxExpandedSize: 50_000,
});

export type JsonSchemaLimitName = keyof JsonSchemaLimits | "ref";

/** A JSON Schema over one of Deckhand's limits, or with a `$ref` it cannot follow. */
export class JsonSchemaLimitError extends ServiceInvalidArgumentError {
  /** Which limit (`maxEnumValues`, ...), or `ref` for a reference that is recursive or not local. */
  readonly limit: JsonSchemaLimitName;
  /** The limit's value; 0 for `ref`. */
  readonly max: number;
  /** Where in the schema, e.g. `properties.tags.items.enum` (empty: the whole schema). */
  readonly path: string;

  constructor(limit: JsonSchemaLimitName, max: number, path: string, message: string) {
    super(`The JSON Schema ${path ? `at \`${path}\` ` : ""}${message}`);
    this.limit = limit;
    this.max = max;
    this.path = path;
  }
}

// Keywords whose value is a schema, a list of schemas, or a map of names to schemas. Anything else
// in a schema (const, default, examples, enum values, annotations, unknown keywords) is data: it
// counts towards size and depth, but its keys mean nothing.
const SCHEMA_VALUE = new Set([
  "additionalItems",
  "additionalProperties",
  "contains",
  "else",
  "if",
  "items",
  "not",
  "propertyNames",
  "then",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
const SCHEMA_LIST = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);
const ALTERNATIVES = new Set(["allOf", "anyOf", "oneOf"]);
const SCHEMA_MAP = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** References only a resolver with recursion can follow; Deckhand's schemas have none. */
const RECURSIVE_REFS = new Set(["$dynamicRef", "$recursiveRef"]);

type Kind = "schema" | "schema-map" | "data";

interface Visit {
  value: unknown;
  kind: Kind;
  depth: number;
  parent: Visit | undefined;
  key: string | number | undefined;
}

/** `["items", 3, "enum"]` -> `items[3].enum`, as schema.ts writes answer paths. */
function formatPath(segments: readonly (string | number)[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function segmentsOf(visit: Visit): (string | number)[] {
  const segments: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) segments.unshift(at.key);
  return segments;
}

/** `["properties", "a/b", 0]` -> `/properties/a~1b/0`: the JSON pointer of a place in the schema. */
function pointerOf(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** The segments of a `#...` reference (percent-decoded, JSON pointer unescaped), or undefined. */
function refSegments(ref: string): string[] | undefined {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function resolve(root: unknown, segments: readonly string[]): unknown {
  let at: unknown = root;
  for (const segment of segments) {
    if (Array.isArray(at) && /^\d+$/.test(segment)) at = at[Number(segment)];
    else if (at !== null && typeof at === "object" && Object.hasOwn(at, segment))
      at = (at as Record<string, unknown>)[segment];
    else return undefined;
  }
  return at;
}

/** About the characters a primitive takes in JSON. */
function primitiveSize(value: unknown): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number") return String(value).length;
  if (typeof value === "boolean") return value ? 4 : 5;
  return 4;
}

/** A key under which equal JSON values (as enum members) collide. */
function memberKey(value: unknown): string {
  return value !== null && typeof value === "object"
    ? `o${JSON.stringify(value)}`
    : `${typeof value}:${value}`;
}

interface Ref {
  /** Where the `$ref` is: the JSON pointer of the schema that holds it. */
  at: string;
  path: string;
  /** The JSON pointer it points to, and its segments. */
  target: string;
  segments: string[];
}

/**
 * Checks a JSON Schema against Deckhand's limits: its size, depth, enums and properties, and its
 * `$ref`s (local `#/...` pointers that resolve, none recursive, with a bounded expansion). Throws a
 * {@link JsonSchemaLimitError} naming the limit and the place.
 */
export function checkJsonSchemaLimits(schema: unknown, limits: JsonSchemaLimits = JSON_SCHEMA_LIMITS): void {
  const refs: Ref[] = [];
  let size = 0;
  let nodes = 0;
  let alternatives = 0;
  let properties = 0;
  const stack: Visit[] = [{ value: schema, kind: "schema", depth: 0, parent: undefined, key: undefined }];
  const tooLarge = () =>
    new JsonSchemaLimitError(
      "maxSize",
      limits.maxSize,
      "",
      `is larger than ${limits.maxSize} characters of JSON (limit maxSize). Describe fewer fields, or extract ` +
        "in several calls.",
    );

  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    nodes++;
    if (value === null || typeof value !== "object") {
      size += primitiveSize(value);
      if (size > limits.maxSize) throw tooLarge();
      continue;
    }
    if (visit.depth >= limits.maxDepth) {
      throw new JsonSchemaLimitError(
        "maxDepth",
        limits.maxDepth,
        formatPath(segmentsOf(visit).slice(0, 8)),
        `nests objects and arrays more than ${limits.maxDepth} levels deep (limit maxDepth). Flatten the schema.`,
      );
    }
    const depth = visit.depth + 1;
    const child = (value: unknown, kind: Kind, key: string | number) =>
      stack.push({ value, kind, depth, parent: visit, key });

    if (Array.isArray(value)) {
      size += 2 + value.length;
      if (size > limits.maxSize) throw tooLarge();
      for (let i = value.length - 1; i >= 0; i--) child(value[i], visit.kind, i);
      continue;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    size += 2;
    for (const [key] of entries) size += key.length + 4;
    if (size > limits.maxSize) throw tooLarge();

    if (visit.kind === "schema-map") {
      for (const [key, v] of entries) child(v, "schema", key);
      continue;
    }
    if (visit.kind === "data") {
      for (const [key, v] of entries) child(v, "data", key);
      continue;
    }
    for (const [key, v] of entries) {
      if (key === "$ref") {
        const path = formatPath([...segmentsOf(visit), key]);
        const segments = typeof v === "string" ? refSegments(v) : undefined;
        if (!segments || resolve(schema, segments) === undefined) {
          throw new JsonSchemaLimitError(
            "ref",
            0,
            path,
            `has a $ref (${JSON.stringify(v)}) that is not a reference into this schema: use "#/$defs/<name>" ` +
              "(or another JSON pointer starting with #/) to a part that exists.",
          );
        }
        refs.push({ at: pointerOf(segmentsOf(visit)), path, target: pointerOf(segments), segments });
        if (refs.length > limits.maxRefs) {
          throw new JsonSchemaLimitError(
            "maxRefs",
            limits.maxRefs,
            "",
            `has more than ${limits.maxRefs} $refs (limit maxRefs).`,
          );
        }
        child(v, "data", key);
      } else if (RECURSIVE_REFS.has(key)) {
        throw new JsonSchemaLimitError(
          "ref",
          0,
          formatPath([...segmentsOf(visit), key]),
          `uses ${key}, which is recursive by design; Deckhand takes schemas without recursion.`,
        );
      } else if (key === "enum" && Array.isArray(v)) {
        const path = formatPath([...segmentsOf(visit), key]);
        if (v.length > limits.maxEnumValues) {
          throw new JsonSchemaLimitError(
            "maxEnumValues",
            limits.maxEnumValues,
            path,
            `has an enum of ${v.length} values; at most ${limits.maxEnumValues} are allowed (limit ` +
              "maxEnumValues). Use a string field and say in the instruction which values it may take.",
          );
        }
        const seen = new Set<string>();
        for (let i = 0; i < v.length; i++) {
          const member = memberKey(v[i]);
          if (seen.has(member)) {
            throw new ServiceInvalidArgumentError(
              `The JSON Schema is not valid: the enum at \`${path}\` has ${JSON.stringify(v[i])} twice ` +
                `(items ${[...seen].indexOf(member)} and ${i}); enum values must be unique.`,
            );
          }
          seen.add(member);
        }
        child(v, "data", key);
      } else if (SCHEMA_MAP.has(key) && v !== null && typeof v === "object" && !Array.isArray(v)) {
        if (key === "properties") {
          properties += Object.keys(v).length;
          if (properties > limits.maxProperties) {
            throw new JsonSchemaLimitError(
              "maxProperties",
              limits.maxProperties,
              formatPath([...segmentsOf(visit), key]),
              `brings the properties of the schema to more than ${limits.maxProperties} (limit ` +
                "maxProperties). Extract fewer fields per call.",
            );
          }
        }
        child(v, "schema-map", key);
      } else if (SCHEMA_VALUE.has(key) || (SCHEMA_LIST.has(key) && Array.isArray(v))) {
        if (ALTERNATIVES.has(key) && Array.isArray(v)) {
          alternatives += v.length;
          if (alternatives > limits.maxAlternatives) {
            throw new JsonSchemaLimitError(
              "maxAlternatives",
              limits.maxAlternatives,
              formatPath([...segmentsOf(visit), key]),
              `brings the members of the schema's anyOf, oneOf and allOf lists to more than ` +
                `${limits.maxAlternatives} (limit maxAlternatives). Use an enum for a choice of values.`,
            );
          }
        }
        child(v, "schema", key);
      } else {
        child(v, "data", key);
      }
    }
  }
  checkRefs(schema, refs, nodes, limits);
}

/** Whether the place `at` (a JSON pointer) lies inside the part `target` points to. */
function within(at: string, target: string): boolean {
  return at === target || at.startsWith(`${target}/`);
}

/**
 * `$ref` cycles and expansion. A reference is followed into the part it points to, where other
 * references may be: following them must end (no cycle), and the schema with everything followed
 * (what a resolver that inlines references would build) must stay within maxExpandedSize.
 */
function checkRefs(schema: unknown, refs: readonly Ref[], nodes: number, limits: JsonSchemaLimits): void {
  if (refs.length === 0) return;
  const targets = [...new Set(refs.map((ref) => ref.target))];
  const inside = new Map(targets.map((target) => [target, refs.filter((ref) => within(ref.at, target))]));
  const expanded = new Map<string, number>();
  const active = new Set<string>();

  // Values in the part a reference points to (the whole schema passed the size limit: this is bounded).
  const countNodes = (ref: Ref): number => {
    let count = 0;
    const stack: unknown[] = [resolve(schema, ref.segments)];
    while (stack.length > 0) {
      const value = stack.pop();
      count++;
      if (value !== null && typeof value === "object")
        for (const child of Object.values(value)) stack.push(child);
    }
    return count;
  };

  // Depth-first over the targets; the depth is at most the number of distinct targets (≤ maxRefs).
  const expand = (ref: Ref): number => {
    const { target } = ref;
    const known = expanded.get(target);
    if (known !== undefined) return known;
    if (active.has(target)) {
      throw new JsonSchemaLimitError(
        "ref",
        0,
        ref.path,
        `refers back to a part that contains it (${JSON.stringify(`#${target}`)}): recursive schemas are not ` +
          "supported. Describe the nesting to the depth you need instead.",
      );
    }
    active.add(target);
    let total = countNodes(ref);
    for (const nested of inside.get(target) ?? []) total += expand(nested);
    active.delete(target);
    expanded.set(target, total);
    return total;
  };

  let total = nodes;
  for (const ref of refs) {
    total += expand(ref);
    if (total > limits.maxExpandedSize) {
      throw new JsonSchemaLimitError(
        "maxExpandedSize",
        limits.maxExpandedSize,
        ref.path,
        `grows to more than ${limits.maxExpandedSize} values once its $refs are followed (limit ` +
          "maxExpandedSize). Refer to fewer or smaller definitions.",
      );
    }
  }
}
