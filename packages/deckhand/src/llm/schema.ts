// The caller's answer schema (zod 4, zod 3, or plain JSON Schema) in the two forms Deckhand needs:
// the JSON Schema sent to the model, and a check of the model's answer that yields the typed value
// or the first mismatch (path and reason).

import { zodSchema } from "ai";
import { Ajv, type Options as AjvOptions, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { JSONSchema } from "./client.ts";
import { checkJsonSchemaLimits } from "./schema-limits.ts";

/** A zod 4 schema (classic or mini), described structurally so any copy of zod 4 fits. */
export interface Zod4Schema<Output = unknown> {
  readonly _zod: { readonly output: Output };
}

/** A zod 3 schema (zod 3.x, or `zod/v3` of zod 4). */
export interface Zod3Schema<Output = unknown> {
  readonly _def: unknown;
  readonly _output: Output;
}

/** Anything Deckhand accepts as an answer schema. */
export type SchemaInput = Zod4Schema | Zod3Schema | JSONSchema;

/** The value type a schema describes: zod's output type, or `unknown` for JSON Schema. */
export type InferSchema<S> =
  S extends ResponseSchema<infer T>
    ? T
    : S extends { readonly _zod: { readonly output: infer O } }
      ? O
      : S extends { readonly _output: infer O }
        ? O
        : unknown;

/** The first way an answer fails its schema. `path` looks like `items[3].price` ("" for the root). */
export interface SchemaMismatch {
  ok: false;
  path: string;
  reason: string;
  /** The validator's own issue list, for callers that want all of it. */
  issues?: unknown;
}

export type SchemaCheck<T> = { ok: true; value: T } | SchemaMismatch;

/** Turns the answer's model-facing shape into the shape of the schema below it. */
export type AnswerDecoder = (value: unknown) => SchemaCheck<unknown>;

export type SchemaSource = "zod4" | "zod3" | "json-schema";

type PathSegment = string | number;

/** `["items", 3, "price"]` -> `items[3].price`; keys that are not identifiers are quoted. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

export function isZod4Schema(value: unknown): value is Zod4Schema {
  return typeof value === "object" && value !== null && "_zod" in value;
}

export function isZod3Schema(value: unknown): value is Zod3Schema {
  return (
    typeof value === "object" &&
    value !== null &&
    "_def" in value &&
    !("_zod" in value) &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------- zod ----------

interface ZodIssueLike {
  path?: readonly (PropertyKey | { key: PropertyKey })[];
  message?: string;
}

type SafeParseResult =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ZodIssueLike[] } };

interface ZodParsing {
  safeParseAsync?: (value: unknown) => Promise<SafeParseResult>;
  safeParse?: (value: unknown) => SafeParseResult;
  "~standard"?: {
    validate: (
      value: unknown,
    ) =>
      | { value: unknown; issues?: undefined }
      | { issues: readonly ZodIssueLike[] }
      | Promise<{ value: unknown; issues?: undefined } | { issues: readonly ZodIssueLike[] }>;
  };
}

function issuePath(issue: ZodIssueLike | undefined): string {
  const segments: PathSegment[] = [];
  for (const step of issue?.path ?? []) {
    const key = typeof step === "object" && step !== null ? step.key : step;
    segments.push(typeof key === "number" ? key : String(key));
  }
  return formatPath(segments);
}

function zodValidator<T>(schema: ZodParsing): (value: unknown) => Promise<SchemaCheck<T>> {
  return async (value) => {
    let result: SafeParseResult;
    if (typeof schema.safeParseAsync === "function") result = await schema.safeParseAsync(value);
    else if (typeof schema.safeParse === "function") result = schema.safeParse(value);
    else if (schema["~standard"]) {
      const standard = await schema["~standard"].validate(value);
      result = standard.issues
        ? { success: false, error: { issues: [...standard.issues] } }
        : { success: true, data: (standard as { value: unknown }).value };
    } else {
      throw new ServiceInvalidArgumentError("The schema looks like zod but has no safeParse method.");
    }
    if (result.success) return { ok: true, value: result.data as T };
    const first = result.error.issues[0];
    return {
      ok: false,
      path: issuePath(first),
      reason: first?.message ?? "does not match",
      issues: result.error.issues,
    };
  };
}

function zodToJsonSchema(schema: Zod4Schema | Zod3Schema): JSONSchema {
  // The AI SDK converts both zod 4 (zod's own converter) and zod 3 (its bundled converter).
  const converted = zodSchema(schema as Parameters<typeof zodSchema>[0]).jsonSchema;
  if (!isPlainObject(converted)) {
    throw new ServiceInvalidArgumentError("This zod schema could not be converted to JSON Schema.");
  }
  return converted as JSONSchema;
}

// ---------- JSON Schema (ajv) ----------

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function isAbsoluteUrl(text: string): boolean {
  if (!URL_SCHEME.test(text)) return false;
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/** The formats a model answer is checked against; any other format is accepted unchecked. */
const FORMATS: Record<string, RegExp | ((text: string) => boolean)> = {
  uri: isAbsoluteUrl,
  url: isAbsoluteUrl,
  iri: isAbsoluteUrl,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  "date-time": (text) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/.test(text) && !Number.isNaN(Date.parse(text)),
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  hostname: /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
};

type AjvInstance = InstanceType<typeof Ajv>;
const ajvInstances = new Map<string, AjvInstance>();

function ajvFor(dialect: "draft-07" | "2019-09" | "2020-12"): AjvInstance {
  let ajv = ajvInstances.get(dialect);
  if (!ajv) {
    // The schema is checked against its meta-schema by compileJsonSchema, with enums shortened.
    // allErrors: with it ajv writes the checks of an object's properties one after the other, without
    // it nested one in the next, which costs compile time that grows with the square of their number.
    const options: AjvOptions = { strict: false, allErrors: true, logger: false, validateSchema: false };
    ajv =
      dialect === "2020-12"
        ? new Ajv2020(options)
        : dialect === "2019-09"
          ? new Ajv2019(options)
          : new Ajv(options);
    for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
    ajvInstances.set(dialect, ajv);
  }
  return ajv;
}

const compiled = new WeakMap<object, ValidateFunction>();
/** The last schemas compiled, by their text: a caller that sends the same schema again compiles it once. */
const compiledByText = new Map<string, ValidateFunction>();
const COMPILED_KEPT = 64;

function compileJsonSchema(schema: JSONSchema): ValidateFunction {
  const cached = compiled.get(schema);
  if (cached) return cached;
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  const dialect = declared.includes("2020-12")
    ? "2020-12"
    : declared.includes("2019-09")
      ? "2019-09"
      : "draft-07";
  // ajv's draft-07 class knows only draft-07's meta-schema; other declarations are dropped, not fatal.
  const { $schema: _declared, ...rest } = schema;
  const source = dialect === "draft-07" ? rest : schema;
  const text = `${dialect}\n${JSON.stringify(source)}`;
  let validate = compiledByText.get(text);
  if (validate) {
    compiledByText.delete(text);
  } else {
    const ajv = ajvFor(dialect);
    try {
      // Checking a schema against its meta-schema compares every pair of enum values (`uniqueItems`
      // of untyped items): quadratic. checkJsonSchemaLimits has checked enums (unique, bounded) in
      // linear time, so the meta-schema sees each enum cut to its first value.
      const metaCopy = JSON.parse(
        JSON.stringify(source, (key, value) =>
          key === "enum" && Array.isArray(value) ? value.slice(0, 1) : value,
        ),
      );
      if (!ajv.validateSchema(metaCopy)) throw new Error(ajv.errorsText(ajv.errors, { dataVar: "schema" }));
      validate = ajv.compile(source);
    } catch (error) {
      throw new ServiceInvalidArgumentError(
        `The JSON Schema is not valid: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      // ajv keeps every schema it compiled (and registers its $id) for the life of the instance,
      // which is the process's: one caller's schemas would pile up, and its $id would clash with
      // another caller's. The validate function needs none of that.
      try {
        ajv.removeSchema(source);
      } catch {
        // An $id ajv could not read: the compilation failed on it already.
      }
    }
    if (compiledByText.size >= COMPILED_KEPT) compiledByText.delete(compiledByText.keys().next().value!);
  }
  compiledByText.set(text, validate);
  compiled.set(schema, validate);
  return validate;
}

function valueAt(root: unknown, segments: readonly PathSegment[]): unknown {
  let current = root;
  for (const key of segments) {
    if (Array.isArray(current) && typeof key === "number") current = current[key];
    else if (isPlainObject(current)) current = current[String(key)];
    else return undefined;
  }
  return current;
}

/** Converts a JSON pointer into path segments, using the value to tell array indexes from keys. */
function pointerSegments(pointer: string, root: unknown): PathSegment[] {
  const segments: PathSegment[] = [];
  let current: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current) && /^\d+$/.test(key)) {
      segments.push(Number(key));
      current = current[Number(key)];
    } else {
      segments.push(key);
      current = isPlainObject(current) ? current[key] : undefined;
    }
  }
  return segments;
}

function ajvMismatch(error: ErrorObject, value: unknown, all: ErrorObject[]): SchemaMismatch {
  const segments = pointerSegments(error.instancePath, value);
  let reason = error.message ?? "does not match";
  if (error.keyword === "required") {
    segments.push(String((error.params as { missingProperty: string }).missingProperty));
    reason = "is required but missing";
  } else if (error.keyword === "additionalProperties") {
    segments.push(String((error.params as { additionalProperty: string }).additionalProperty));
    reason = "is not allowed by the schema";
  } else if (error.keyword === "enum") {
    reason = `must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`;
  } else if (error.keyword === "type" && valueAt(value, segments) === null) {
    // Said as zod says it: a model asked again must learn that it gave null, not only the type.
    reason = `${reason}, received null`;
  }
  return { ok: false, path: formatPath(segments), reason, issues: all };
}

function jsonSchemaValidator<T>(schema: JSONSchema): (value: unknown) => Promise<SchemaCheck<T>> {
  const validate = compileJsonSchema(schema);
  return async (value) => {
    if (validate(value)) return { ok: true, value: value as T };
    const errors = validate.errors ?? [];
    const first = errors[0];
    if (!first) return { ok: false, path: "", reason: "does not match the schema" };
    return ajvMismatch(first, value, [...errors]);
  };
}

// ---------- OpenAI strict mode ----------

const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "description",
  "title",
  "$ref",
  "$defs",
  "definitions",
  "$schema",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);
const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

/** Whether a schema fits OpenAI's strict structured outputs (every property required, no extra
 * properties, only supported keywords). Strict mode is used when it does; non-strict otherwise. */
export function isStrictCompatible(schema: unknown): boolean {
  if (!isPlainObject(schema)) return false;
  for (const key of Object.keys(schema)) if (!STRICT_KEYWORDS.has(key)) return false;
  if (typeof schema.format === "string" && !STRICT_FORMATS.has(schema.format)) return false;
  const typed = ["type", "anyOf", "$ref", "enum", "const"].some((key) => schema[key] !== undefined);
  if (!typed) return false;
  const properties = schema.properties;
  const isObjectNode =
    schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));
  if (isObjectNode || properties !== undefined) {
    if (schema.additionalProperties !== false) return false;
    const keys = isPlainObject(properties) ? Object.keys(properties) : [];
    const required = Array.isArray(schema.required) ? schema.required : [];
    if (!keys.every((k) => required.includes(k))) return false;
    if (isPlainObject(properties) && !Object.values(properties).every(isStrictCompatible)) return false;
  }
  if (schema.items !== undefined && !isStrictCompatible(schema.items)) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.every(isStrictCompatible)) return false;
  for (const defsKey of ["$defs", "definitions"]) {
    const defs = schema[defsKey];
    if (isPlainObject(defs) && !Object.values(defs).every(isStrictCompatible)) return false;
  }
  return true;
}

// ---------- the response schema ----------

function isObjectRoot(schema: JSONSchema): boolean {
  return (
    schema.type === "object" &&
    schema.anyOf === undefined &&
    schema.oneOf === undefined &&
    schema.allOf === undefined
  );
}

/** Providers want an object at the root: anything else travels as `{ value: ... }`. */
function wrapInValue(schema: JSONSchema): JSONSchema {
  const { $schema, $defs, definitions, ...inner } = schema;
  return {
    ...($schema !== undefined ? { $schema } : {}),
    type: "object",
    properties: { value: inner },
    required: ["value"],
    additionalProperties: false,
    ...($defs !== undefined ? { $defs } : {}),
    ...(definitions !== undefined ? { definitions } : {}),
  };
}

interface ResponseSchemaInit<T> {
  source: SchemaSource;
  jsonSchema: JSONSchema;
  validate: (value: unknown) => Promise<SchemaCheck<T>>;
  decode?: AnswerDecoder;
}

/**
 * One answer schema, ready for a model call: `wireSchema` goes to the model, `parse` checks what
 * came back. Build it with {@link toResponseSchema}.
 */
export class ResponseSchema<T = unknown> {
  readonly source: SchemaSource;
  /** The answer's shape as the model sees it, before any `{ value }` wrapping. */
  readonly jsonSchema: JSONSchema;
  /** What is sent to the model: `jsonSchema`, wrapped in `{ value }` unless it is an object. */
  readonly wireSchema: JSONSchema;
  /** Whether the answer comes wrapped in `{ value }`. */
  readonly wrapped: boolean;
  private readonly validate: (value: unknown) => Promise<SchemaCheck<T>>;
  private readonly decode: AnswerDecoder | undefined;
  private strict: boolean | undefined;

  constructor(init: ResponseSchemaInit<T>) {
    this.source = init.source;
    this.jsonSchema = init.jsonSchema;
    this.wrapped = !isObjectRoot(init.jsonSchema);
    this.wireSchema = this.wrapped ? wrapInValue(init.jsonSchema) : init.jsonSchema;
    this.validate = init.validate;
    this.decode = init.decode;
  }

  /** Whether `wireSchema` can be sent in OpenAI's strict mode. */
  get strictCompatible(): boolean {
    this.strict ??= isStrictCompatible(this.wireSchema);
    return this.strict;
  }

  /** Unwraps, decodes and validates a parsed answer. */
  async parse(answer: unknown): Promise<SchemaCheck<T>> {
    let value = answer;
    if (this.wrapped && isPlainObject(answer) && Object.hasOwn(answer, "value")) value = answer.value;
    if (this.decode) {
      const decoded = this.decode(value);
      if (!decoded.ok) return decoded;
      value = decoded.value;
    }
    return this.validate(value);
  }

  /**
   * A copy that shows the model `jsonSchema` instead, and passes each answer through `decode`
   * (back to this schema's shape) before the usual checks. Used to swap URL fields for element ids.
   */
  rewrite(jsonSchema: JSONSchema, decode: AnswerDecoder): ResponseSchema<T> {
    const previous = this.decode;
    return new ResponseSchema<T>({
      source: this.source,
      jsonSchema,
      validate: this.validate,
      decode: previous
        ? (value) => {
            const first = decode(value);
            return first.ok ? previous(first.value) : first;
          }
        : decode,
    });
  }
}

/**
 * Prepares a zod 4, zod 3 or JSON Schema for a model call. Zod answers are checked with zod's own
 * parser (so transforms and refinements apply); JSON Schema answers with ajv.
 */
export function toResponseSchema<S extends SchemaInput | ResponseSchema<unknown>>(
  schema: S,
): ResponseSchema<InferSchema<S>> {
  type T = InferSchema<S>;
  if (schema instanceof ResponseSchema) return schema as ResponseSchema<T>;
  if (isZod4Schema(schema)) {
    return new ResponseSchema<T>({
      source: "zod4",
      jsonSchema: zodToJsonSchema(schema),
      validate: zodValidator<T>(schema as ZodParsing),
    });
  }
  if (isZod3Schema(schema)) {
    return new ResponseSchema<T>({
      source: "zod3",
      jsonSchema: zodToJsonSchema(schema),
      validate: zodValidator<T>(schema as ZodParsing),
    });
  }
  if (isPlainObject(schema)) {
    const json = schema as JSONSchema;
    // JSON Schemas are data, often from elsewhere (the service's callers): held to limits before use.
    checkJsonSchemaLimits(json);
    return new ResponseSchema<T>({
      source: "json-schema",
      jsonSchema: json,
      validate: jsonSchemaValidator<T>(json),
    });
  }
  throw new ServiceInvalidArgumentError(
    "The schema must be a zod schema (zod 4, or zod 3 / `zod/v3`) or a JSON Schema object.",
  );
}
