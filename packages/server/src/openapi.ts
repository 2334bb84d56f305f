// The OpenAPI 3.1 document, generated from the same zod schemas that validate the requests, and
// served without authentication at GET /v1/openapi.json.

import fastifySwagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from "fastify-type-provider-zod";
import { SECURITY, SECURITY_SCHEMES } from "./routes/route-schema.ts";
import { apiSchemas } from "./schemas/registry.ts";

export const API_VERSION = "3.1.0";

const DESCRIPTION = [
  "Deckhand drives a real Chromium browser with AI: act, extract and observe on a session's page, and an agent for",
  "multi-step tasks. Every endpoint except /v1/sessions/start needs an active session id.",
  "",
  "Authentication: the `x-platform-api-key` header. Every 200 JSON body is `{ success: true, data }` (SessionEnd's",
  "is `{ success: true }`, as the reference's); every error",
  "body is `{ success: false, error, message, code }` (`message` repeats `error`).",
  "",
  "Streaming: with the header `x-stream-response: true` (or `streamResponse: true` in the body) an operation",
  "answers with Server-Sent Events (see StreamEvent).",
  "",
  "Units: timestamps are milliseconds since the Unix epoch (UTC); durations, timeouts and timeMs are milliseconds.",
  "",
  "Clients of the reference service: its header names are accepted as aliases (`x-bb-api-key`, `x-bb-project-id`,",
  "`browserbase-cache-bypass`; the cache status is also answered as `browserbase-cache-status`); bare legacy model",
  "names of known families (`gpt-4.1-nano`, `claude-3-7-sonnet-latest`) are mapped to their provider with a",
  "deprecation warning; `verbose` may be a string; an Action's `method` defaults to `click` and `arguments` to `[]`;",
  "`frameId` empty or null is the active page. Stream blocks are an `event: <status>` line and a `data:` line (the",
  "`data:` line alone for the reference's hand-written TypeScript client). Remaining differences: errors are",
  "`{ success: false, error, message, code, details? }` with the statuses documented per operation; a key belongs to one project, so",
  "`x-bb-project-id` is not checked; the model key goes in `x-model-api-key` or the model object; navigate answers",
  "a summary of the main response, not a serialised Response; launch options that would change the service's",
  "shared browsers (another executable, new arguments, a visible window, a profile, a port) are refused;",
  "`sessionUrl` and `debugUrl` are this service's own pages; a replay of an unknown session is 404, the same answer",
  "as for another project's (the reference's local server answers 200 with no pages); a `browser.cdpUrl` where",
  "nothing answers yet is attached when the session is first used (502 CDP_URL_UNREACHABLE until it answers), and",
  "the start answers the service's own CDP proxy URL, where the session's allow-list is enforced.",
  "",
  "This API is ALPHA software and is not production ready.",
].join("\n");

type JsonObject = { [key: string]: unknown };

/** Names of the component schemas that the paths reach, directly or through other components. */
function reachableSchemas(document: JsonObject): Set<string> {
  const schemas = ((document.components as JsonObject | undefined)?.schemas ?? {}) as JsonObject;
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/schemas/")) {
          const name = child.slice("#/components/schemas/".length);
          if (!reached.has(name)) {
            reached.add(name);
            visit(schemas[name]);
          }
        } else visit(child);
      }
    }
  };
  visit(document.paths);
  return reached;
}

// The zod transform adds every registered schema in both its request (`...Input`) and response
// form; only the ones the API really uses belong in the document.
const transformObject: ReturnType<typeof createJsonSchemaTransformObject> = (input) => {
  const document = createJsonSchemaTransformObject({ schemaRegistry: apiSchemas })(input) as JsonObject;
  const components = (document.components ?? {}) as JsonObject;
  const schemas = (components.schemas ?? {}) as JsonObject;
  const used = reachableSchemas(document);
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  dropBodilessContent(document);
  return { ...document, components: { ...components, schemas: kept } } as ReturnType<typeof transformObject>;
};

/** A response documented by its description alone (the CDP endpoint's 101: no body). */
function isDescriptionOnly(schema: unknown): boolean {
  return (
    schema !== null &&
    typeof schema === "object" &&
    Object.keys(schema).length === 1 &&
    typeof (schema as { description?: unknown }).description === "string"
  );
}

/** A description-only response has no body: the generator's `content` for it goes. */
function dropBodilessContent(document: JsonObject): void {
  for (const item of Object.values((document.paths ?? {}) as Record<string, JsonObject>)) {
    for (const operation of Object.values(item) as JsonObject[]) {
      for (const response of Object.values((operation.responses ?? {}) as Record<string, JsonObject>)) {
        const content = response.content as Record<string, { schema?: unknown }> | undefined;
        const schemas = Object.values(content ?? {}).map((media) => media.schema);
        if (schemas.length > 0 && schemas.every(isDescriptionOnly)) delete response.content;
      }
    }
  }
}

const zodTransform = createJsonSchemaTransform({ schemaRegistry: apiSchemas });

// The zod transform accepts only zod schemas; description-only responses go round it.
const transform: typeof zodTransform = (input) => {
  const response = (input.schema as { response?: Record<string, unknown> } | undefined)?.response;
  const plain = Object.entries(response ?? {}).filter(([, schema]) => isDescriptionOnly(schema));
  if (plain.length === 0) return zodTransform(input);
  const rest = Object.fromEntries(
    Object.entries(response ?? {}).filter(([, schema]) => !isDescriptionOnly(schema)),
  );
  const out = zodTransform({ ...input, schema: { ...input.schema, response: rest } });
  const outSchema = out.schema as { response?: Record<string, unknown> };
  return {
    ...out,
    schema: { ...outSchema, response: { ...Object.fromEntries(plain), ...outSchema.response } },
  } as ReturnType<typeof zodTransform>;
};

/** Must be registered before the routes, so that it sees them. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Deckhand API (ALPHA)", description: DESCRIPTION, version: API_VERSION },
      components: { securitySchemes: SECURITY_SCHEMES },
      security: SECURITY,
      tags: [
        { name: "sessions", description: "Browser sessions and their operations" },
        { name: "health", description: "Liveness and readiness probes (no key)" },
      ],
    },
    transform,
    transformObject,
  });
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get("/v1/openapi.json", { config: { public: true }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
