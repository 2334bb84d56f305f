// URL fields in an answer schema. A model copying a link out of a page outline mangles it often
// (truncates, "fixes", invents); asking for the element's id instead and looking the link up
// afterwards gives the page's real URL. This file finds those fields, shows them to the model as
// id fields, and maps the ids in the answer back to URLs.

import type { JSONSchema } from "./client.ts";
import { formatPath, type ResponseSchema, type SchemaCheck } from "./schema.ts";

export type UrlFieldStep = { property: string } | { items: true };

export interface UrlField {
  /** Steps from the root of the answer (inside any `{ value }` wrapping) to the field. */
  steps: UrlFieldStep[];
  /** Readable form, e.g. `items[].url`. */
  path: string;
  /** `format`: declared `format: uri/url` (zod `.url()`); `name`: a field called url, href, link, ... */
  reason: "format" | "name";
}

const URL_FORMATS = new Set(["uri", "url", "iri", "uri-reference", "iri-reference"]);
/** `url`, `href`, `link`, `uri`, and names ending in them: `imageUrl`, `product_url`, `homepageLink`. */
const URL_NAME = /^(url|href|link|uri)$|[-_](url|href|link|uri)$|[a-z0-9](Url|URL|Href|Link|Uri)$/i;
const URL_LIST_NAME = /^(urls|hrefs|links|uris)$|[-_](urls|hrefs|links)$|[a-z0-9](Urls|URLs|Hrefs|Links)$/;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typesOf(node: Node): string[] {
  if (typeof node.type === "string") return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === "string");
  return [];
}

function isStringNode(node: Node): boolean {
  const types = typesOf(node);
  return types.includes("string") && types.every((t) => t === "string" || t === "null");
}

function displayPath(steps: UrlFieldStep[]): string {
  let out = "";
  for (const step of steps) {
    if ("items" in step) out += "[]";
    else out += out ? `.${step.property}` : step.property;
  }
  return out || "(root)";
}

function resolveLocalRef(root: Node, ref: string): Node | undefined {
  const match = ref.match(/^#\/(\$defs|definitions)\/(.+)$/);
  if (!match) return undefined;
  const defs = root[match[1] as string];
  const target = isNode(defs)
    ? defs[(match[2] as string).replace(/~1/g, "/").replace(/~0/g, "~")]
    : undefined;
  return isNode(target) ? target : undefined;
}

function replaceContents(target: Node, replacement: Node): void {
  if (replacement === target) return;
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, replacement);
}

/**
 * Visits every URL field of `root`, in place. `replace` gets each URL string node and returns
 * what stands there instead (or the node itself to leave it).
 */
function visitUrlFields(root: Node, replace: (node: Node, field: UrlField) => Node): UrlField[] {
  const found = new Map<string, UrlField>();
  const activeRefs = new Set<string>();

  const visit = (
    node: Node,
    steps: UrlFieldStep[],
    name: string | undefined,
    listName: string | undefined,
  ): Node => {
    if (typeof node.$ref === "string") {
      if (activeRefs.has(node.$ref)) return node; // recursive schema: fields are found at the first level only
      const target = resolveLocalRef(root, node.$ref);
      if (target) {
        activeRefs.add(node.$ref);
        replaceContents(target, visit(target, steps, name, listName));
        activeRefs.delete(node.$ref);
      }
      return node;
    }
    for (const key of ["anyOf", "oneOf", "allOf"] as const) {
      const branches = node[key];
      if (Array.isArray(branches)) {
        node[key] = branches.map((b) => (isNode(b) ? visit(b, steps, name, listName) : b));
      }
    }
    if (isStringNode(node)) {
      const byFormat = typeof node.format === "string" && URL_FORMATS.has(node.format);
      const byName =
        (name !== undefined && URL_NAME.test(name)) ||
        (listName !== undefined && URL_LIST_NAME.test(listName));
      if (byFormat || byName) {
        const field: UrlField = { steps, path: displayPath(steps), reason: byFormat ? "format" : "name" };
        found.set(field.path, field);
        return replace(node, field);
      }
      return node;
    }
    if (isNode(node.properties)) {
      for (const [property, child] of Object.entries(node.properties)) {
        if (isNode(child))
          node.properties[property] = visit(child, [...steps, { property }], property, undefined);
      }
    }
    if (isNode(node.items)) node.items = visit(node.items, [...steps, { items: true }], undefined, name);
    return node;
  };

  replaceContents(root, visit(root, [], undefined, undefined));
  return [...found.values()];
}

/** The URL fields of a JSON Schema (zod schemas: use `toResponseSchema(schema).jsonSchema`). */
export function findUrlFields(schema: JSONSchema): UrlField[] {
  return visitUrlFields(structuredClone(schema), (node) => node);
}

export interface UrlIdOptions {
  /** JSON type of an element id. Default `"number"`. */
  idType?: "number" | "string";
  /** What the model is told an id field holds. */
  idDescription?: string;
}

/** Looks up the URL of the element with this id (undefined when there is no such element or link). */
export type UrlForId = (id: number | string, field: UrlField) => string | undefined;

const DEFAULT_ID_DESCRIPTION =
  "The id of the page element that carries this link (the number in [brackets] before it in the page outline), not the URL itself.";

function idNode(node: Node, idType: "number" | "string", description: string): Node {
  const types = typesOf(node);
  const own = typeof node.description === "string" ? ` Field: ${node.description}` : "";
  return {
    type: types.includes("null") ? [idType, "null"] : idType,
    description: `${description}${own}`,
  };
}

type Segment = string | number;

function mapField(
  value: unknown,
  steps: UrlFieldStep[],
  at: Segment[],
  field: UrlField,
  convert: (leaf: unknown, path: Segment[]) => SchemaCheck<unknown>,
): SchemaCheck<unknown> {
  const [step, ...rest] = steps;
  if (!step) return convert(value, at);
  if ("items" in step) {
    if (!Array.isArray(value)) return { ok: true, value };
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const mapped = mapField(value[i], rest, [...at, i], field, convert);
      if (!mapped.ok) return mapped;
      out.push(mapped.value);
    }
    return { ok: true, value: out };
  }
  if (!isNode(value) || !Object.hasOwn(value, step.property)) return { ok: true, value };
  const mapped = mapField(value[step.property], rest, [...at, step.property], field, convert);
  if (!mapped.ok) return mapped;
  return { ok: true, value: { ...value, [step.property]: mapped.value } };
}

/**
 * Shows the model each URL field of `schema` as an element-id field, and maps the ids in the
 * answer back through `urlForId` before validation, so the caller gets real URLs. An id with no
 * URL counts as a schema mismatch (the model is asked once more, like any other mismatch).
 * Returns `schema` itself when it has no URL fields.
 */
export function withUrlFieldsAsIds<T>(
  schema: ResponseSchema<T>,
  urlForId: UrlForId,
  options: UrlIdOptions = {},
): ResponseSchema<T> {
  const idType = options.idType ?? "number";
  const description = options.idDescription ?? DEFAULT_ID_DESCRIPTION;
  const rewritten = structuredClone(schema.jsonSchema);
  const fields = visitUrlFields(rewritten, (node) => idNode(node, idType, description));
  if (fields.length === 0) return schema;

  const toUrl =
    (field: UrlField) =>
    (leaf: unknown, path: Segment[]): SchemaCheck<unknown> => {
      if (leaf === null || leaf === undefined) return { ok: true, value: leaf };
      let id: number | string | undefined;
      if (typeof leaf === "number") id = leaf;
      else if (typeof leaf === "string" && leaf.trim() !== "")
        id = idType === "number" && /^\s*\d+\s*$/.test(leaf) ? Number(leaf) : leaf;
      if (id === undefined || (idType === "number" && typeof id !== "number")) {
        return {
          ok: false,
          path: formatPath(path),
          reason: `expected an element id (${idType}), got ${JSON.stringify(leaf)}`,
        };
      }
      const url = urlForId(id, field);
      if (url === undefined) {
        return {
          ok: false,
          path: formatPath(path),
          reason: `${JSON.stringify(id)} is not the id of a link on the page; use the id shown in [brackets] in the outline`,
        };
      }
      return { ok: true, value: url };
    };

  return schema.rewrite(rewritten, (answer) => {
    let current: unknown = answer;
    for (const field of fields) {
      const mapped = mapField(current, field.steps, [], field, toUrl(field));
      if (!mapped.ok) return mapped;
      current = mapped.value;
    }
    return { ok: true, value: current };
  });
}
