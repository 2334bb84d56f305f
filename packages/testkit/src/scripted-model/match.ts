// Matchers for the common ways a test tells requests apart. Combine them with `match.all`.

import type { ScriptedMatcher, ScriptedRequest } from "./types.ts";

function textTest(pattern: string | RegExp): (text: string) => boolean {
  if (typeof pattern === "string") {
    const needle = pattern.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  return (text) => {
    pattern.lastIndex = 0;
    return pattern.test(text);
  };
}

function toPredicate(matcher: ScriptedMatcher): (request: ScriptedRequest) => boolean {
  if (typeof matcher === "function") return matcher;
  const test = textTest(matcher);
  return (request) => test(request.text);
}

function schemaProperties(schema: Record<string, unknown> | undefined): string[] {
  const properties = schema?.properties;
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
}

export const match = {
  /** Any message's text contains `pattern` (substring, case-insensitive, or a RegExp). */
  text: (pattern: string | RegExp): ScriptedMatcher => toPredicate(pattern),
  /** The last user message contains `pattern`. */
  lastUser: (pattern: string | RegExp) => {
    const test = textTest(pattern);
    return (request: ScriptedRequest) => test(request.lastUserText);
  },
  /** The system (or developer) messages contain `pattern`. */
  system: (pattern: string | RegExp) => {
    const test = textTest(pattern);
    return (request: ScriptedRequest) => test(request.system);
  },
  /** The request asks for structured output under this schema name. Deckhand names the schema after
   * the operation (`act`, `extract`, `observe`, `agent`) unless the operation gives another name. */
  schemaName: (name: string | RegExp) => {
    const test = typeof name === "string" ? (n: string) => n === name : textTest(name);
    return (request: ScriptedRequest) => request.schemaName !== undefined && test(request.schemaName);
  },
  /** The requested schema has this property at its root. */
  schemaProperty: (property: string) => (request: ScriptedRequest) =>
    schemaProperties(request.schema).includes(property),
  /** The request asks for plain text (no schema, no JSON mode). */
  textAnswer: () => (request: ScriptedRequest) =>
    request.responseFormat === "text" && request.forcedTool === undefined,
  /** The request was made for this model id. */
  model: (model: string) => (request: ScriptedRequest) => request.model === model,
  /** The request carries at least one image. */
  withImage: () => (request: ScriptedRequest) => request.imageCount > 0,
  /** Every matcher accepts the request. */
  all: (...matchers: ScriptedMatcher[]) => {
    const predicates = matchers.map(toPredicate);
    return (request: ScriptedRequest) => predicates.every((p) => p(request));
  },
  /** At least one matcher accepts the request. */
  any: (...matchers: ScriptedMatcher[]) => {
    const predicates = matchers.map(toPredicate);
    return (request: ScriptedRequest) => predicates.some((p) => p(request));
  },
  /** Every request. */
  always: () => () => true,
};
