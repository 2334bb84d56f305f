// SessionAct: an instruction (the model picks the element; through the server cache when it is in
// play) or an Action (no model).

import { randomUUID } from "node:crypto";
import {
  type Action,
  type ActOptions,
  type ActResult,
  actResultOnTheWire,
  RECORDED,
  variableValues,
} from "deckhand";
import { ProjectCache } from "../cache/server-cache.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionActBody, SessionActData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { callModel, guardModel, modelNameOf } from "../sessions/model-config.ts";
import { cacheInPlay, modelKeyOf, modelWarning, timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

export async function sessionAct(
  context: OperationContext<SessionActBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionActData> {
  const { input, options = {} } = context.body;
  const { model, endpoint: modelEndpoint } = await guardModel(
    callModel(options.model, live.defaults.modelName, context.modelApiKey, modelWarning(context)),
    deps.modelEgress,
  );
  const byInstruction = typeof input === "string";
  const useCache = byInstruction && cacheInPlay(context, live, options.serverCache);

  const result = await runRecorded<ActResult>(context, live, deps, {
    method: "act",
    secrets: [...variableValues(options.variables), modelKeyOf(options.model)],
    pageValues: variableValues(options.variables),
    // act(action) needs no model, but may use one to find a moved element again (self-heal).
    modelName: modelNameOf(model, live.defaults.modelName),
    modelEndpoint,
    // The replay record keeps where the act ran and its recorded steps (the script export reads them).
    recordAs: (actResult) => {
      const recorded = (actResult as { [RECORDED]?: unknown })[RECORDED];
      return recorded ? { ...actResult, recorded } : { ...actResult };
    },
    run: async ({ dh, page, signal, log }) => {
      const callOptions: ActOptions & { signal: AbortSignal } = {
        page,
        signal,
        timeout: timeoutOf(options.timeout, live.defaults.actTimeoutMs, deps.operationTimeoutMs),
        ...(options.variables ? { variables: options.variables } : {}),
        ...(model !== undefined ? { model } : {}),
      };
      // An Action observe returned is checked against the element it was observed on: the library
      // knows it by its content, so the copy that came over HTTP gets the same check.
      if (!byInstruction) {
        const { backendNodeId: _unused, ...action } = input as Action & { backendNodeId?: number };
        return dh.act(action, callOptions);
      }
      if (!useCache) return dh.act(input, callOptions);
      const cache = new ProjectCache(deps.store, live.projectId, (error) =>
        deps.log.warn({ err: error }, "server cache unavailable"),
      );
      const outcome = await live.actionCache.during(cache, () => dh.act(input, callOptions));
      log(`server cache: ${outcome.cacheStatus}`);
      context.reportCacheStatus(outcome.cacheStatus);
      // The library's record of the act (RECORDED) is not an enumerable field: carried over by hand.
      return Object.defineProperty({ ...outcome.result, cacheStatus: outcome.cacheStatus }, RECORDED, {
        value: (outcome.result as { [RECORDED]?: unknown })[RECORDED],
      });
    },
  });
  // Spec 2.8's ActResult, whose actions carry every field of spec 2.7.
  return { result: actResultOnTheWire(result), actionId: randomUUID() };
}
