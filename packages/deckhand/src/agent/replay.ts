// Replay without a model. A successful run is stored (with `cacheDir` or `actionCache`) under its
// task, start URL, mode, model name, variable names, output schema and maxSteps, as the
// deterministic steps it took: the Actions act performed (XPath, method, arguments with %name%,
// never values), the URLs it opened, the keys it pressed, its scrolls and waits. The same execute
// later replays them with no call to the agent's model: each Action goes through act(action),
// which checks that its element is still what it was (and, with selfHeal, finds a moved element
// again, once; the healed step is written back). When a step no longer fits the page, the run
// falls back to the model from where the replay stopped.

import { createHash } from "node:crypto";
import type { Page } from "../browser/page.ts";
import { waitForSettled } from "../browser/settle.ts";
import type { Deadline } from "../deadline.ts";
import { substitute } from "../ops/variables.ts";
import type { Action, RecordedStep } from "../types.ts";
import { agentPageUrl } from "./agent-url.ts";
import { findByIdentity, identityAt } from "./facts.ts";
import type { AgentAction, AgentExecuteOptions, AgentHost, AgentResult } from "./types.ts";

export interface AgentRunRecord {
  instruction: string;
  url: string;
  mode: string;
  modelName: string;
  variables: string[];
  output: unknown;
  maxSteps: number;
}

/**
 * An Action act performed, with what its element was (role, name) when it was recorded: the
 * recorded step (types.ts RecordedStep); entries stored before it existed lack role and name.
 */
type StoredAction = Action & Partial<Pick<RecordedStep, "role" | "name" | "locators">>;

type ReplayStep =
  | { type: "act"; actions: StoredAction[] }
  | { type: "goto"; url: string }
  | { type: "keys"; method: "press" | "type"; value: string; repeat?: number }
  | { type: "navback" }
  | { type: "scroll"; direction: "up" | "down"; percentage: number }
  | { type: "wait"; timeMs: number };

interface AgentCacheEntry {
  kind: "deckhand-agent-run";
  version: 1;
  run: AgentRunRecord;
  steps: ReplayStep[];
  result: { message: string; output?: unknown };
  updatedAt: string;
}

export function agentCacheKey(record: AgentRunRecord): string {
  return createHash("sha256")
    .update(JSON.stringify(["agent", record]))
    .digest("hex")
    .slice(0, 40);
}

const KNOWN_STEPS = new Set([
  "act",
  "fillForm",
  "goto",
  "keys",
  "navback",
  "scroll",
  "wait",
  "ariaTree",
  "screenshot",
  "think",
  "extract",
  "done",
  "verify",
]);

/** The deterministic steps of a run; undefined when a step cannot be replayed without a model. */
function replayableSteps(actions: AgentAction[]): ReplayStep[] | undefined {
  const steps: ReplayStep[] = [];
  for (const action of actions) {
    const args = (action.arguments ?? {}) as Record<string, unknown>;
    // A coordinate tool, a custom tool or an MCP tool: not replayable without the model.
    if (!KNOWN_STEPS.has(action.type)) return undefined;
    if (action.success === false) continue;
    switch (action.type) {
      case "act":
      case "fillForm": {
        const performed = action.playwrightArguments as Action[] | undefined;
        if (!Array.isArray(performed) || performed.length === 0) return undefined;
        steps.push({ type: "act", actions: performed });
        break;
      }
      case "goto":
        steps.push({ type: "goto", url: String(args.url) });
        break;
      case "keys":
        steps.push({
          type: "keys",
          method: args.method === "type" ? "type" : "press",
          value: String(args.value),
          ...(typeof args.repeat === "number" ? { repeat: args.repeat } : {}),
        });
        break;
      case "navback":
        steps.push({ type: "navback" });
        break;
      case "scroll":
        steps.push({
          type: "scroll",
          direction: args.direction === "up" ? "up" : "down",
          percentage: Number(args.percentage ?? 80),
        });
        break;
      case "wait":
        steps.push({ type: "wait", timeMs: Number(args.timeMs ?? 0) });
        break;
      case "ariaTree":
      case "screenshot":
      case "think":
      case "extract":
      case "done":
      case "verify":
        break;
      default:
        // A coordinate tool, a custom tool or an MCP tool: not replayable without the model.
        return undefined;
    }
  }
  return steps;
}

export async function storeRun(
  host: AgentHost,
  record: AgentRunRecord,
  actions: AgentAction[],
  outcome: { message: string; output?: unknown },
): Promise<void> {
  const store = host.cacheStore;
  if (!store) return;
  const steps = replayableSteps(actions);
  if (!steps) {
    host.log.info("cache", "this agent run used steps that cannot be replayed without a model; not stored");
    return;
  }
  const entry: AgentCacheEntry = {
    kind: "deckhand-agent-run",
    version: 1,
    run: record,
    steps,
    result: { message: outcome.message, ...(outcome.output !== undefined ? { output: outcome.output } : {}) },
    updatedAt: new Date().toISOString(),
  };
  try {
    await store.put(agentCacheKey(record), entry as never);
    host.log.info("cache", `agent run stored for replay (${steps.length} step(s))`);
  } catch (error) {
    host.log.warn("cache", `could not store the agent run: ${(error as Error).message}`);
  }
}

/**
 * The Action to replay: the stored one when its element is still what it was (role and name);
 * else, once, the one element of the page with that role and name (healed); undefined when the
 * page no longer has it.
 */
async function checkedTarget(
  host: AgentHost,
  page: Page,
  stored: StoredAction,
  deadline: Deadline,
): Promise<StoredAction | undefined> {
  if (!stored.selector || stored.role === undefined || stored.name === undefined) return stored;
  const now = await identityAt(page, stored.selector, host.redactor, deadline, 1_000);
  if (now && now.role === stored.role && now.name === stored.name) return stored;
  const found = await findByIdentity(
    page,
    { role: stored.role, name: stored.name },
    host.redactor,
    deadline,
    host.domSettleTimeout,
  );
  if (!found) return undefined;
  host.log.info(
    "cache",
    `healed a replayed step: "${stored.description}" moved from ${stored.selector} to ${found}`,
  );
  return { ...stored, selector: found };
}

function isEntry(value: unknown): value is AgentCacheEntry {
  const entry = value as AgentCacheEntry | null;
  return (
    typeof entry === "object" &&
    entry !== null &&
    entry.kind === "deckhand-agent-run" &&
    entry.version === 1 &&
    Array.isArray(entry.steps) &&
    typeof entry.result === "object" &&
    entry.result !== null
  );
}

/**
 * Replays the stored run of this task, if there is one and the page still fits it. Undefined:
 * no entry, or a step no longer fits (the caller runs the model).
 */
export async function replayRun(
  host: AgentHost,
  page: Page,
  record: AgentRunRecord,
  options: AgentExecuteOptions,
  deadline: Deadline,
): Promise<AgentResult | undefined> {
  const store = host.cacheStore;
  if (!store) return undefined;
  const key = agentCacheKey(record);
  let entry: unknown;
  try {
    entry = await store.get(key);
  } catch (error) {
    host.log.warn("cache", `could not read the agent cache entry ${key}: ${(error as Error).message}`);
    return undefined;
  }
  if (entry === undefined || entry === null) return undefined;
  if (!isEntry(entry)) {
    host.log.warn("cache", `ignoring the agent cache entry ${key}: it is not a stored agent run`);
    return undefined;
  }
  const started = performance.now();
  const before = host.metrics.snapshot();
  const actions: AgentAction[] = [];
  let healed = false;
  for (const [index, step] of entry.steps.entries()) {
    deadline.check();
    const stepStarted = performance.now();
    let ok = true;
    let result: unknown;
    switch (step.type) {
      case "act": {
        const performed: StoredAction[] = [];
        for (const stored of step.actions) {
          const target = await checkedTarget(host, page, stored, deadline);
          if (!target) {
            ok = false;
            result = {
              success: false,
              message: `the element of "${stored.description}" is no longer on the page`,
            };
            break;
          }
          const { role: _role, name: _name, locators: _locators, ...action } = target;
          const outcome = await host.act(action, {
            page,
            deadline,
            variables: options.variables,
          });
          if (!outcome.success) {
            ok = false;
            result = { success: false, message: outcome.message };
            break;
          }
          if (target.selector !== stored.selector) healed = true;
          performed.push(target);
        }
        if (ok) {
          step.actions = performed;
          result = { success: true };
        }
        break;
      }
      case "goto": {
        // A stored run is a record anyone with the cache directory could have written: its URL
        // meets the agent's rule like the model's does, and one that does not is a step that
        // no longer fits.
        let url: string;
        try {
          url = agentPageUrl(substitute(step.url, options.variables));
        } catch (error) {
          ok = false;
          result = { success: false, message: (error as Error).message };
          break;
        }
        const status = await page.goto(url, { deadline });
        ok = status === null || status < 400;
        result = { status };
        break;
      }
      case "keys":
        if (step.method === "type") await page.type(substitute(step.value, options.variables));
        else for (let i = 0; i < (step.repeat ?? 1); i++) await page.keyPress(step.value);
        break;
      case "navback":
        await page.goBack({ deadline });
        break;
      case "scroll":
        await page.evaluate(
          ({ down, share }: { down: boolean; share: number }) =>
            window.scrollBy(0, ((down ? 1 : -1) * window.innerHeight * share) / 100),
          { down: step.direction === "down", share: step.percentage },
        );
        break;
      case "wait":
        await deadline.sleep(step.timeMs);
        break;
    }
    actions.push({
      type: step.type,
      arguments: host.redactor.maskValue({ ...step, type: undefined }),
      result,
      success: ok,
      pageUrl: page.url(),
      durationMs: Math.round(performance.now() - stepStarted),
      replayed: true,
    });
    if (!ok) {
      host.log.info(
        "cache",
        `the stored agent run no longer fits the page at step ${index + 1} (${step.type}); asking the model`,
      );
      return undefined;
    }
  }
  // The last step may have started a navigation (a form that submits): the run ends where it lands.
  await waitForSettled(page, Math.min(host.domSettleTimeout ?? 5_000, 5_000), deadline);
  if (healed) {
    try {
      await store.put(key, { ...entry, updatedAt: new Date().toISOString() } as never);
      host.log.info("cache", "a replayed step found its element again; the healed step was written back");
    } catch (error) {
      host.log.warn("cache", `could not write back the healed agent run: ${(error as Error).message}`);
    }
  }
  const after = host.metrics.snapshot();
  host.log.info(
    "cache",
    `agent run replayed from the cache (${entry.steps.length} step(s), no agent model call)`,
  );
  return {
    success: true,
    message: entry.result.message,
    actions,
    completed: true,
    ...(entry.result.output !== undefined ? { output: entry.result.output } : {}),
    metadata: {
      cacheHit: true,
      cacheTimestamp: entry.updatedAt,
      durationMs: Math.round(performance.now() - started),
      ...(healed ? { healed: true } : {}),
    },
    usage: {
      input_tokens: after.totalPromptTokens - before.totalPromptTokens,
      output_tokens: after.totalCompletionTokens - before.totalCompletionTokens,
      reasoning_tokens: after.totalReasoningTokens - before.totalReasoningTokens,
      cached_input_tokens: after.totalCachedInputTokens - before.totalCachedInputTokens,
      inference_time_ms: Math.round(after.totalInferenceTimeMs - before.totalInferenceTimeMs),
    },
  };
}
