// SessionExtract: the page text (no instruction), a text answer (instruction), or data shaped by a
// JSON Schema (instruction and schema); the latter two through the server cache when it is in play.

import { createHash, randomUUID } from "node:crypto";
import { checkJsonSchemaLimits, type ExtractOptions, type JSONSchema } from "deckhand";
import { cacheKey, ProjectCache } from "../cache/server-cache.ts";
import { ApiError } from "../errors.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionExtractBody, SessionExtractData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { callModel, guardModel, modelNameOf } from "../sessions/model-config.ts";
import { cacheInPlay, modelKeyOf, modelWarning, timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

// Keys by which the library tells a JSON Schema from an options object.
const SCHEMA_KEYS = ["type", "properties", "items", "$schema", "anyOf", "oneOf", "allOf", "$ref", "enum"];

function checkSchema(schema: Record<string, unknown> | undefined, instruction: string | undefined): void {
  if (schema === undefined) return;
  if (!instruction) {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      "Invalid request: body field `instruction`: a schema needs an instruction that says what to extract.",
    );
  }
  if (!SCHEMA_KEYS.some((key) => key in schema)) {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      "Invalid request: body field `schema`: not a JSON Schema (expected keywords such as type and properties, " +
        'e.g. { "type": "object", "properties": { "price": { "type": "number" } } }).',
    );
  }
  // Before anything walks the schema (the cache key, the library, the model request): a 400
  // naming the limit (JsonSchemaLimitError, INVALID_ARGUMENT) for one too large, deep or recursive.
  checkJsonSchemaLimits(schema);
}

export async function sessionExtract(
  context: OperationContext<SessionExtractBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionExtractData> {
  const { schema, options = {} } = context.body;
  const instruction = context.body.instruction?.trim() ? context.body.instruction : undefined;
  checkSchema(schema, instruction);
  const { model, endpoint: modelEndpoint } = await guardModel(
    callModel(options.model, live.defaults.modelName, context.modelApiKey, modelWarning(context)),
    deps.modelEgress,
  );
  const useCache = instruction !== undefined && cacheInPlay(context, live, options.serverCache);

  const result = await runRecorded<unknown>(context, live, deps, {
    method: "extract",
    secrets: [modelKeyOf(options.model)],
    modelName: modelNameOf(model, live.defaults.modelName),
    modelEndpoint,
    recordAs: (data) =>
      data !== null && typeof data === "object" && !Array.isArray(data)
        ? (data as Record<string, unknown>)
        : { value: data },
    run: async ({ dh, page, signal, log }) => {
      const callOptions: ExtractOptions & { signal: AbortSignal } = {
        page,
        signal,
        timeout: timeoutOf(options.timeout, undefined, deps.operationTimeoutMs),
        ...(options.selector !== undefined ? { selector: options.selector } : {}),
        ...(options.ignoreSelectors ? { ignoreSelectors: options.ignoreSelectors } : {}),
        ...(options.screenshot !== undefined ? { screenshot: options.screenshot } : {}),
        ...(model !== undefined ? { model } : {}),
      };
      if (instruction === undefined) return dh.extract(callOptions);
      const compute = () =>
        schema
          ? dh.extract(instruction, schema as JSONSchema, callOptions)
          : dh.extract(instruction, callOptions);
      if (!useCache) return compute();

      const cache = new ProjectCache(deps.store, live.projectId, (error) =>
        deps.log.warn({ err: error }, "server cache unavailable"),
      );
      // The entry is keyed on what the extraction reads: the outline the model would be shown (after
      // selector and ignoreSelectors) and, with screenshot, the viewport's pixels. A page whose
      // content changed under the same URL is a MISS.
      const read = createHash("sha256");
      const { pageText } = await dh.extract({
        page,
        signal,
        timeout: callOptions.timeout,
        ...(options.selector !== undefined ? { selector: options.selector } : {}),
        ...(options.ignoreSelectors ? { ignoreSelectors: options.ignoreSelectors } : {}),
      });
      read.update(pageText);
      if (options.screenshot) read.update(await page.screenshot({ type: "png" }));
      const key = cacheKey({
        method: "extract",
        instruction,
        url: page.url(),
        schema,
        content: read.digest("hex"),
        ...(options.selector !== undefined ? { selector: options.selector } : {}),
        ...(options.ignoreSelectors ? { ignoreSelectors: options.ignoreSelectors } : {}),
        ...(options.screenshot ? { screenshot: true } : {}),
      });
      const entry = await cache.get(key);
      if (entry?.kind === "extract") {
        log("server cache: HIT, the extraction is served without the model");
        context.reportCacheStatus("HIT");
        return entry.result;
      }
      context.reportCacheStatus("MISS");
      const data = await compute();
      await cache.put(key, { kind: "extract", result: data });
      return data;
    },
  });
  return { result, actionId: randomUUID() };
}
