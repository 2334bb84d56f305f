// JSON bodies. An empty body is no body: clients send `content-type: application/json` with nothing
// after it on body-less calls such as SessionEnd. Otherwise the text is parsed, then walked once
// (iteratively, so no nesting can overflow the stack) to refuse what no request of this API needs
// and what would hurt the code after it:
//
// - nesting deeper than MAX_BODY_DEPTH: JSON.parse copes, but every recursive step later on
//   (validation, redaction, logging, JSON.stringify into the store) would overflow the stack;
// - keys named `__proto__`, and `constructor` objects holding `prototype`: merged into another
//   object they change its prototype (prototype poisoning).
//
// Each refusal is a 400 that says which rule and where, not "not valid JSON".

import type { FastifyInstance } from "fastify";
import { ApiError } from "./errors.ts";

/** Deepest nesting of objects and arrays a request body may have (an extract schema's limit is 64). */
export const MAX_BODY_DEPTH = 100;

function fieldPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out || "(root)";
}

interface Visit {
  value: unknown;
  depth: number;
  /** Where it sits, kept as a parent link so that a wide, deep body costs no path copies. */
  parent: Visit | undefined;
  key: string | number | undefined;
}

function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

/** Throws the 400 for the first nesting or key rule the parsed body breaks. */
export function checkJsonBody(value: unknown): void {
  const stack: Visit[] = [{ value, depth: 0, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const node = visit.value;
    if (node === null || typeof node !== "object") continue;
    if (visit.depth >= MAX_BODY_DEPTH) {
      throw new ApiError(
        400,
        "BODY_TOO_DEEP",
        `Invalid request: the body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep (at ` +
          `\`${fieldPath(pathOf(visit).slice(0, 6))}...\`). Flatten the data.`,
      );
    }
    const depth = visit.depth + 1;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], depth, parent: visit, key: i });
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const poisoned =
        key === "__proto__" ||
        (key === "constructor" &&
          child !== null &&
          typeof child === "object" &&
          Object.hasOwn(child as object, "prototype"));
      if (poisoned) {
        throw new ApiError(
          400,
          "FORBIDDEN_JSON_KEY",
          `Invalid request: body field \`${fieldPath([...pathOf(visit), key])}\`: keys named __proto__ (and ` +
            "constructor objects with a prototype key) are refused, because they can change the prototype of " +
            "the objects they are merged into. Rename the key.",
        );
      }
      stack.push({ value: child, depth, parent: visit, key });
    }
  }
}

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      done(new ApiError(400, "INVALID_JSON", "The request body is not valid JSON."), undefined);
      return;
    }
    try {
      checkJsonBody(value);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    done(null, value);
  });
}
