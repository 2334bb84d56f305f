// SessionAct: an instruction (the model picks the element; through the server cache when it is in
// play) or an Action (no model).

import { randomUUID } from "node:crypto";
import type { Action, ActOptions, ActResult } from "deckhand";
import { ProjectCache } from "../cache/server-cache.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionActBody, SessionActData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { callModel, guardModel, modelNameOf } from "../sessions/model-config.ts";
import { cacheInPlay, modelKeyOf, timeoutOf, variableValues } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

export async function sessionAct(
  context: OperationContext<SessionActBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionActData> {
  const { input, options = {} } = context.body;
  const { model, endpoint: modelEndpoint } = await guardModel(
    callModel(options.model, live.defaults.modelName, context.modelApiKey),
    deps.modelEgress,
  );
  const byInstruction = typeof input === "string";
  const useCache = byInstruction && cacheInPlay(context, live, options.serverCache);

  const result = await runRecorded<ActResult>(context, live, deps, {
    method: "act",
    secrets: [...variableValues(options.variables), modelKeyOf(options.model)],
    // act(action) needs no model, but may use one to find a moved element again (self-heal).
    modelName: modelNameOf(model, live.defaults.modelName),
    modelEndpoint,
    recordAs: (actResult) => ({ ...actResult }),
    run: async ({ dh, page, signal, log }) => {
      const callOptions: ActOptions & { signal: AbortSignal } = {
        page,
        signal,
        timeout: timeoutOf(options.timeout, live.defaults.actTimeoutMs, deps.operationTimeoutMs),
        ...(options.variables ? { variables: options.variables } : {}),
        ...(model !== undefined ? { model } : {}),
      };
      // An Action observe returned is checked against the element it was observed on.
      if (!byInstruction)
        return dh.act(live.observed.original(input as Action) ?? (input as Action), callOptions);
      if (!useCache) return dh.act(input, callOptions);
      const cache = new ProjectCache(deps.store, live.projectId, (error) =>
        deps.log.warn({ err: error }, "server cache unavailable"),
      );
      const outcome = await live.actionCache.during(cache, () => dh.act(input, callOptions));
      log(`server cache: ${outcome.cacheStatus}`);
      context.reportCacheStatus(outcome.cacheStatus);
      return { ...outcome.result, cacheStatus: outcome.cacheStatus };
    },
  });
  return { result: onTheWire(result), actionId: randomUUID() };
}

/** Spec 2.8's ActResult, whose actions carry every field of spec 2.7 (act result: all required). */
function onTheWire(result: ActResult & { cacheStatus?: "HIT" | "MISS" }): SessionActData["result"] {
  const { actions, ...rest } = result;
  if (!actions) return rest;
  return {
    ...rest,
    actions: actions.map((action) => ({
      selector: action.selector,
      description: action.description,
      method: action.method ?? "click",
      arguments: action.arguments ?? [],
    })),
  };
}
