// Scripting the agent's model: its requests are the ones that offer the `done` tool; each answer
// is the next entry of a script (tool calls, or a function of the request). The act/extract calls
// its tools make are answered by their own rules (acting on the outline line the instruction names).

import {
  match,
  type ScriptedModel,
  ScriptedReply,
  type ScriptedRequest,
  type ScriptedToolCall,
} from "@deckhand/testkit";
import { idOf, onAct, step } from "../ops/helpers.ts";

export const isAgentRequest = (r: ScriptedRequest) => r.tools.some((t) => t.name === "done");

export type AgentTurn = ScriptedToolCall[] | ((request: ScriptedRequest) => ScriptedToolCall[]);

/** The agent's model answers its requests with these turns, in order (then: an error naming the request). */
export function scriptAgent(model: ScriptedModel, turns: AgentTurn[], options: { latencyMs?: number } = {}) {
  let next = 0;
  return model.on(
    isAgentRequest,
    (request) => {
      const turn = turns[next++];
      if (!turn) return ScriptedReply.httpError(400, `the agent script has no turn ${next}`);
      return ScriptedReply.toolCalls(...(typeof turn === "function" ? turn(request) : turn));
    },
    options,
  );
}

export const call = (name: string, args: object = {}): ScriptedToolCall => ({ name, arguments: args });

/** The agent's model requests received so far. */
export const agentRequests = (model: ScriptedModel) => model.requests.filter(isAgentRequest);

/**
 * act requests: the instruction names the element by its outline line after "on:" is not how
 * users write, so the rule table maps an instruction's words to an outline line and a method.
 */
export function actByRules(
  model: ScriptedModel,
  rules: { when: RegExp; line: string | RegExp; method: string; args?: string[] }[],
) {
  return onAct(model, (request) => {
    const instruction = /Instruction: (.*)/.exec(request.lastUserText)?.[1] ?? "";
    const rule = rules.find((r) => r.when.test(instruction));
    if (!rule) return step({ elementId: -1, method: "click", description: "nothing fits" });
    return step({
      elementId: idOf(request, rule.line),
      method: rule.method,
      arguments: rule.args ?? [],
      description: `${rule.method} ${String(rule.line)}`,
    });
  });
}

/** The check of a claimed success: answers goalReached with what `judge` says of the page. */
export function verifyWith(model: ScriptedModel, judge: (request: ScriptedRequest) => boolean) {
  return model.on(match.schemaProperty("goalReached"), (request) => ({
    goalReached: judge(request),
    evidence: judge(request) ? "the page shows it" : "the page shows an error",
  }));
}
