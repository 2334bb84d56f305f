// The agent's instructions. The model sees variable names and descriptions, never values.

import { describeVariables } from "../ops/variables.ts";
import type { Variables } from "../types.ts";
import type { AgentMode } from "./types.ts";

export function agentSystemPrompt(options: {
  mode: AgentMode;
  url: string;
  variables: Variables | undefined;
  customInstructions: string | undefined;
  hasOutput: boolean;
  tools: string[];
}): string {
  const lines = [
    "You are a web agent operating a real browser for a user. Complete the user's task by calling tools, one step at a time.",
    `The browser is on ${options.url}.`,
    "",
    "How to work:",
    "- Read the page with ariaTree before acting, and again after anything that changes it.",
    "- act performs ONE action on ONE element, described in plain words with the element's visible name, for example " +
      '"click the Sign in button" or "type %password% into the Password field".',
  ];
  if (options.tools.includes("fillForm"))
    lines.push("- fillForm fills several fields at once: one { action } per field.");
  if (options.mode === "hybrid")
    lines.push(
      "- click, type, dragAndDrop, clickAndHold and scroll also work at x/y coordinates of the screenshot; each answers with a new screenshot.",
    );
  lines.push(
    "- extract reads information from the page; goto opens a URL; navback goes back; keys presses or types keys; scroll scrolls; wait waits.",
    "- When the task is done, call done with taskComplete: true and say what you saw that shows it. If it cannot be done, call done with taskComplete: false and say why.",
    "- Never claim the task is complete unless the page shows it. Do not repeat an action that did not work: try something else.",
  );
  if (options.hasOutput)
    lines.push("- The user wants a final answer: pass it as `output` of done, in the required shape.");
  const variables = describeVariables(options.variables);
  if (variables) lines.push("", variables);
  if (options.customInstructions)
    lines.push("", "Custom instructions from the user:", options.customInstructions);
  return lines.join("\n");
}

/** The question that checks a claimed success against the page (no tool, a structured answer). */
export function verifyInstruction(task: string, claim: string): string {
  return (
    `An agent was given this task: "${task}". It says the task is complete: "${claim}". ` +
    "Look only at the current page: does it show that the task was completed? Answer goalReached false when the page " +
    "shows an error, the task's result is missing, or the page is not where the task should have ended; give the " +
    "evidence you see."
  );
}
