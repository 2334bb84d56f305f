// SessionAgentExecute: the library's agent runs on the session's page. Each step is a log event of
// the stream; the act/extract calls its tools make are recorded in the replay under their own
// methods (so that a client's metrics, read from the replay, match a LOCAL run: the agent's own
// model calls under agent*, its tools' under act* and extract*); the per-project server cache
// replays a stored run with no model call, as it does acts.

import {
  type AgentResult,
  COMPUTER_USE_MODELS,
  type DeckhandMetrics,
  type ModelConfiguration,
  RECORDED,
  supportsComputerUse,
  variableValues,
} from "deckhand";
import { ProjectCache } from "../cache/server-cache.ts";
import { ApiError } from "../errors.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionAgentExecuteBody, SessionAgentExecuteData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { callModel, guardModel, modelNameOf } from "../sessions/model-config.ts";
import { cacheInPlay, modelKeyOf, modelWarning, timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

/** The agent's model: `model`; a bare model name with the legacy `provider` becomes "provider/model". */
function agentModel(
  body: SessionAgentExecuteBody["agentConfig"],
): SessionAgentExecuteBody["agentConfig"]["model"] {
  const { model, provider } = body;
  if (!provider || model === undefined) return model;
  if (typeof model === "string") return model.includes("/") ? model : `${provider}/${model}`;
  return model.modelName.includes("/") ? model : { ...model, modelName: `${provider}/${model.modelName}` };
}

export async function sessionAgentExecute(
  context: OperationContext<SessionAgentExecuteBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionAgentExecuteData> {
  const { agentConfig, executeOptions, shouldCache } = context.body;
  // `mode` wins over the deprecated `cua` flag when both are given, as in the reference.
  const mode = agentConfig.mode ?? (agentConfig.cua === true ? "cua" : "dom");
  const requested = agentModel(agentConfig);
  if (mode === "cua") {
    const name = modelNameOf(requested as ModelConfiguration | undefined, live.defaults.modelName);
    if (!supportsComputerUse(name))
      throw new ApiError(
        422,
        "UNSUPPORTED_MODEL",
        `${name} cannot do computer use (agentConfig.mode "cua"). Use a computer-use model such as ` +
          `${COMPUTER_USE_MODELS.join(", ")}, or mode "dom" / "hybrid".`,
      );
  }
  const { model, endpoint } = await guardModel(
    callModel(
      requested,
      live.defaults.modelName,
      context.modelApiKey,
      modelWarning(context),
      "agentConfig.model",
    ),
    deps.modelEgress,
  );
  const execution =
    agentConfig.executionModel !== undefined
      ? await guardModel(
          callModel(
            agentConfig.executionModel,
            live.defaults.modelName,
            context.modelApiKey,
            modelWarning(context),
            "agentConfig.executionModel",
          ),
          deps.modelEgress,
        )
      : undefined;
  const useCache = shouldCache === true || cacheInPlay(context, live, undefined);
  let cacheStatus: "HIT" | "MISS" | undefined;

  const result = await runRecorded<AgentResult>(context, live, deps, {
    method: "agentExecute",
    secrets: [
      ...variableValues(executeOptions.variables),
      modelKeyOf(agentConfig.model),
      modelKeyOf(agentConfig.executionModel),
    ],
    pageValues: variableValues(executeOptions.variables),
    modelName: modelNameOf(model, live.defaults.modelName),
    modelEndpoint: endpoint ?? execution?.endpoint,
    // The agent's own model calls are this record's; its tools' go under their own methods.
    usageGroup: "agent",
    // With where the run went (RECORDED): the script export reads the run's steps from this row.
    recordAs: (result) => {
      const { messages: _messages, ...rest } = result;
      const recorded = (result as { [RECORDED]?: unknown })[RECORDED];
      return recorded ? { ...rest, recorded } : { ...rest };
    },
    run: async ({ dh, page, signal, log }) => {
      const agent = dh.agent({
        mode,
        ...(model !== undefined ? { model: model as ModelConfiguration } : {}),
        ...(execution?.model !== undefined ? { executionModel: execution.model as ModelConfiguration } : {}),
        ...(agentConfig.systemPrompt ? { systemPrompt: agentConfig.systemPrompt } : {}),
      });
      const before: DeckhandMetrics = await dh.metrics;
      const execute = () =>
        agent.execute({
          instruction: executeOptions.instruction,
          page,
          signal,
          ...(executeOptions.maxSteps !== undefined ? { maxSteps: executeOptions.maxSteps } : {}),
          toolTimeout: timeoutOf(
            executeOptions.toolTimeout,
            undefined,
            Math.min(45_000, deps.operationTimeoutMs),
          ),
          ...(executeOptions.variables ? { variables: executeOptions.variables } : {}),
          callbacks: {
            onStepFinish: (step) => {
              log(
                `agent step ${step.stepNumber + 1}: ${step.actions
                  .map((a) => `${a.type}${a.success === false ? " (failed)" : ""}`)
                  .join(", ")}`,
              );
            },
          },
        });
      let outcome: AgentResult;
      if (useCache) {
        const cache = new ProjectCache(deps.store, live.projectId, (error) =>
          deps.log.warn({ err: error }, "server cache unavailable"),
        );
        const cached = await live.actionCache.during(cache, execute);
        // HIT: the whole run was replayed from a stored one, with no call to the agent's model.
        cacheStatus = cached.result.metadata?.cacheHit === true ? "HIT" : "MISS";
        log(`server cache: ${cacheStatus}`);
        context.reportCacheStatus(cacheStatus);
        outcome = cached.result;
      } else outcome = await execute();
      await recordToolUsage(deps, live, before, await dh.metrics, page.url());
      return outcome;
    },
  });
  const { messages: _messages, ...wire } = result;
  return {
    result: wire as SessionAgentExecuteData["result"],
    ...(shouldCache
      ? { cacheEntry: { cacheStatus: cacheStatus ?? "MISS", instruction: executeOptions.instruction } }
      : {}),
  };
}

/**
 * The tokens the agent's tools spent (act, extract, observe) go to the replay as records of their
 * own method, so that metrics read from the replay put them where a LOCAL run does.
 */
async function recordToolUsage(
  deps: OperationDeps,
  live: LiveSession,
  before: DeckhandMetrics,
  after: DeckhandMetrics,
  pageUrl: string,
): Promise<void> {
  const now = Date.now();
  for (const method of ["act", "extract", "observe"] as const) {
    const inputTokens = after[`${method}PromptTokens`] - before[`${method}PromptTokens`];
    const outputTokens = after[`${method}CompletionTokens`] - before[`${method}CompletionTokens`];
    const timeMs = Math.round(after[`${method}InferenceTimeMs`] - before[`${method}InferenceTimeMs`]);
    if (inputTokens + outputTokens + timeMs === 0) continue;
    try {
      await deps.store.appendAction(live.id, {
        method,
        parameters: { by: "agentExecute" },
        result: { success: true },
        timestamp: now,
        endTime: now,
        pageUrl,
        tokenUsage: { inputTokens, outputTokens, timeMs },
      });
    } catch (error) {
      deps.log.error(
        { sessionId: live.id, err: error },
        "could not record the agent's tool usage in the replay",
      );
    }
  }
}
