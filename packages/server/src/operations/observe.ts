// SessionObserve: candidate actions for an instruction (through the server cache when it is in
// play), or every interactive element (no instruction, no model).

import { randomUUID } from "node:crypto";
import { type Action, type ObserveOptions, type Page, variableValues } from "deckhand";
import { cacheKey, ProjectCache } from "../cache/server-cache.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionObserveBody, SessionObserveData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { callModel, guardModel, modelNameOf } from "../sessions/model-config.ts";
import { cacheInPlay, modelKeyOf, modelWarning, timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

/** Whether every cached action's selector still leads to an element of the page. */
async function stillOnPage(page: Page, actions: readonly Action[]): Promise<boolean> {
  for (const action of actions) {
    const count = await page
      .deepLocator(action.selector)
      .count()
      .catch(() => 0);
    if (count === 0) return false;
  }
  return true;
}

export async function sessionObserve(
  context: OperationContext<SessionObserveBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionObserveData> {
  const { options = {} } = context.body;
  const instruction = context.body.instruction?.trim() ? context.body.instruction : undefined;
  const { model, endpoint: modelEndpoint } = await guardModel(
    callModel(options.model, live.defaults.modelName, context.modelApiKey, modelWarning(context)),
    deps.modelEgress,
  );
  const useCache = instruction !== undefined && cacheInPlay(context, live, options.serverCache);

  const result = await runRecorded<Action[]>(context, live, deps, {
    method: "observe",
    secrets: [...variableValues(options.variables), modelKeyOf(options.model)],
    pageValues: variableValues(options.variables),
    modelName: modelNameOf(model, live.defaults.modelName),
    modelEndpoint,
    recordAs: (actions) => ({ actions }),
    run: async ({ dh, page, signal, log }) => {
      const callOptions: ObserveOptions & { signal: AbortSignal } = {
        page,
        signal,
        timeout: timeoutOf(options.timeout, undefined, deps.operationTimeoutMs),
        ...(options.variables ? { variables: options.variables } : {}),
        ...(options.selector !== undefined ? { selector: options.selector } : {}),
        ...(options.ignoreSelectors ? { ignoreSelectors: options.ignoreSelectors } : {}),
        ...(model !== undefined ? { model } : {}),
      };
      const observe = async (input?: string) => {
        const actions =
          input === undefined ? await dh.observe(callOptions) : await dh.observe(input, callOptions);
        return actions;
      };
      if (instruction === undefined) return observe();
      if (!useCache) return observe(instruction);

      const cache = new ProjectCache(deps.store, live.projectId, (error) =>
        deps.log.warn({ err: error }, "server cache unavailable"),
      );
      const key = cacheKey({
        method: "observe",
        instruction,
        url: page.url(),
        variableNames: Object.keys(options.variables ?? {}),
        ...(options.selector !== undefined ? { selector: options.selector } : {}),
        ...(options.ignoreSelectors ? { ignoreSelectors: options.ignoreSelectors } : {}),
      });
      const entry = await cache.get(key);
      if (entry?.kind === "observe" && (await stillOnPage(page, entry.actions))) {
        log("server cache: HIT, the actions are served without the model");
        context.reportCacheStatus("HIT");
        return entry.actions;
      }
      if (entry) log("server cache: the cached actions no longer match the page; asking the model");
      context.reportCacheStatus("MISS");
      const actions = await observe(instruction);
      if (actions.length > 0) await cache.put(key, { kind: "observe", actions });
      return actions;
    },
  });
  return { result, actionId: randomUUID() };
}
