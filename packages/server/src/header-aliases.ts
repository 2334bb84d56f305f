// The reference service's header names, accepted beside the spec's so that its SDKs in other
// languages work with only a new base URL. An alias is folded into the spec's name before anything
// else reads the headers (auth, secrets, the routes), so every rule written for the spec's name
// (never logged, removed from text, checked) holds for the alias too.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors.ts";

/** alias -> the spec's name. */
export const HEADER_ALIASES: Readonly<Record<string, string>> = {
  "x-bb-api-key": "x-platform-api-key",
  "x-bb-project-id": "x-platform-project-id",
  "browserbase-cache-bypass": "x-platform-cache-bypass",
};

/** Response headers sent under both names. */
export const RESPONSE_HEADER_ALIASES: Readonly<Record<string, string>> = {
  "x-platform-cache-status": "browserbase-cache-status",
};

type Headers = FastifyRequest["headers"];

/**
 * Copies each alias into the spec's name. The same header under both names with different values
 * is refused: which one was meant cannot be told.
 */
export function foldHeaderAliases(headers: Headers): void {
  for (const [alias, name] of Object.entries(HEADER_ALIASES)) {
    const value = headers[alias];
    if (value === undefined) continue;
    const primary = headers[name];
    if (primary === undefined) headers[name] = value;
    else if (String(primary) !== String(value)) {
      throw new ApiError(
        400,
        "INVALID_REQUEST",
        `Invalid request: headers \`${name}\` and \`${alias}\` (its alias) differ; send one of the two.`,
      );
    }
  }
}

export function installHeaderAliases(app: FastifyInstance): void {
  app.addHook("onRequest", async (request) => foldHeaderAliases(request.headers));
  app.addHook("onSend", async (_request, reply, payload) => {
    for (const [name, alias] of Object.entries(RESPONSE_HEADER_ALIASES)) {
      const value = reply.getHeader(name);
      if (value !== undefined && !reply.hasHeader(alias)) reply.header(alias, value);
    }
    return payload;
  });
}
