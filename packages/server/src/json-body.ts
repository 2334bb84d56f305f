// JSON bodies, parsed by Fastify's own parser (prototype-poisoning protection included), except
// that an empty body is no body: clients send `content-type: application/json` with nothing after
// it on body-less calls such as SessionEnd.

import type { FastifyInstance } from "fastify";

export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (typeof body === "string" && body.trim() === "") {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
}
