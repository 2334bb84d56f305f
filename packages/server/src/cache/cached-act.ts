// act through the server cache. A hit is not trusted blindly: before each cached step the page is
// listed (observe without an instruction: every interactive element with its XPath, role and name,
// no model call), and the step runs only when its XPath still leads to an element with the role
// and name it had when the step was first done. The step then runs as `act(action)`, which checks
// the element once more and uses real input events. Only when every step succeeds that way is the
// answer a HIT; otherwise the model does the instruction from where the page is, and it is a MISS.

import type { Action, ActOptions, ActResult, Deckhand, Page } from "deckhand";
import type { CachedActStep, ProjectCache } from "./server-cache.ts";

export type CacheStatus = "HIT" | "MISS";

export interface CachedActCall {
  dh: Deckhand;
  page: Page;
  instruction: string;
  /** What every library call of this act gets: page, signal, timeout, variables, model. */
  options: ActOptions & { signal: AbortSignal };
  cache: ProjectCache;
  key: string;
  log(message: string): void;
}

/** Every interactive element of the page, by XPath; empty when the page cannot be listed. */
async function listElements(call: CachedActCall): Promise<Map<string, Action>> {
  const { page, signal, timeout } = call.options;
  try {
    const listed = await call.dh.observe({ page, signal, ...(timeout !== undefined ? { timeout } : {}) });
    return new Map(listed.map((action) => [action.selector, action]));
  } catch (error) {
    if (signal.aborted) throw error;
    return new Map();
  }
}

type Replay = { outcome: "done"; healed: boolean; result: ActResult } | { outcome: "changed" | "failed" };

async function replaySteps(call: CachedActCall, steps: CachedActStep[]): Promise<Replay> {
  const { page, signal, timeout, variables } = call.options;
  const performed: Action[] = [];
  let healed = false;
  for (const step of steps) {
    let action: Action;
    if (step.selector) {
      const found = (await listElements(call)).get(step.selector);
      if (!found || (step.expect !== undefined && found.description !== step.expect))
        return { outcome: "changed" };
      // The listed object itself (act() knows which node it was listed for), told what to do.
      action = Object.assign(found, {
        method: step.method,
        arguments: [...step.arguments],
        description: step.description,
      });
    } else {
      action = {
        selector: "",
        method: step.method,
        arguments: [...step.arguments],
        description: step.description,
      };
    }
    const result = await call.dh.act(action, {
      page,
      signal,
      ...(timeout !== undefined ? { timeout } : {}),
      ...(variables ? { variables } : {}),
    });
    if (!result.success) return { outcome: "failed" };
    const done = result.actions?.[0];
    if (done && done.selector !== step.selector) healed = true;
    performed.push(done ?? action);
  }
  return {
    outcome: "done",
    healed,
    result: {
      success: true,
      message: `Done from the server cache: ${steps.map((s) => s.description).join(", then ")}.`,
      actionDescription: call.instruction,
      actions: performed.map((a) => ({
        selector: a.selector,
        description: a.description,
        method: a.method ?? "click",
        arguments: a.arguments ?? [],
      })),
    },
  };
}

function toSteps(actions: readonly Action[], listed: Map<string, Action>): CachedActStep[] {
  return actions.map((action) => {
    const before = action.selector ? listed.get(action.selector) : undefined;
    return {
      selector: action.selector,
      description: action.description,
      method: action.method ?? "click",
      arguments: action.arguments ?? [],
      ...(before ? { expect: before.description } : {}),
    };
  });
}

export async function actThroughCache(
  call: CachedActCall,
): Promise<ActResult & { cacheStatus: CacheStatus }> {
  const entry = await call.cache.get(call.key);
  if (entry?.kind === "act") {
    const replay = await replaySteps(call, entry.steps);
    if (replay.outcome === "done" && !replay.healed) {
      call.log(`server cache: HIT, ${entry.steps.length} cached step(s) replayed without the model`);
      return { ...replay.result, cacheStatus: "HIT" };
    }
    if (replay.outcome === "done") {
      // Done, but a step had to be found again with the model: not a hit. Remember the new selectors.
      call.log("server cache: the cached steps were redone after self-healing; the entry is updated");
      await call.cache.put(call.key, { kind: "act", steps: toSteps(replay.result.actions ?? [], new Map()) });
      return { ...replay.result, cacheStatus: "MISS" };
    }
    call.log("server cache: the cached steps no longer match the page; asking the model");
  }
  // What the page offers before acting, to remember what each step's element was.
  const listed = await listElements(call);
  const result = await call.dh.act(call.instruction, call.options);
  if (result.success && result.actions && result.actions.length > 0) {
    await call.cache.put(call.key, { kind: "act", steps: toSteps(result.actions, listed) });
  }
  return { ...result, cacheStatus: "MISS" };
}
