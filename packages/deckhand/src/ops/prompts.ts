// What the model is told. Short on purpose: every token here is paid on every call. The methods
// come from their table (methods.ts).

import { ACT_METHODS, methodsPromptLine } from "./methods.ts";

export const OUTLINE_GUIDE =
  "The page is given as an outline: one line per element, indented by nesting. `[N]` is an element's id; " +
  "after it come the element's role, its name and its state (value=, checked, selected, disabled, expanded, ...). " +
  "Lines without an id are the page's text; table rows are cells joined by |. Use only ids that appear in the outline.";

export const ACT_SYSTEM = [
  "You operate a web page for a program, one action at a time.",
  OUTLINE_GUIDE,
  methodsPromptLine(),
  "If the instruction needs several steps (open a menu, then choose; close what covers the target, then click), give the next step and set completed to false; " +
    "set completed to true when this step finishes the instruction. If no element fits, answer elementId -1 and say why in description.",
].join("\n");

export const OBSERVE_SYSTEM = [
  "You find elements on a web page for a program.",
  OUTLINE_GUIDE,
  "List the elements that match the instruction, most relevant first (an empty list when none does). " +
    "For each: its elementId, a short description of what it is and what acting on it does, and the method a program would use " +
    `(${ACT_METHODS.join(", ")}) with its arguments.`,
].join("\n");

export const EXTRACT_SYSTEM = [
  "You extract information from a web page for a program.",
  OUTLINE_GUIDE,
  "Answer with JSON that matches the schema, using only what the page shows; use null (where allowed) or leave out what it does not show. " +
    "Copy text as it appears. Where a field asks for an element id, give the number in [brackets] of that element.",
].join("\n");

export function userMessage(parts: (string | undefined | false)[]): string {
  return parts.filter((p): p is string => Boolean(p)).join("\n\n");
}
