// The default instructions of computer-use mode, and the note that tells the model which variables
// it may type (names and descriptions only: the values never reach the model).

import type { CuaRunContext } from "./types.ts";

export function defaultSystemPrompt(url: string): string {
  return [
    "You control one tab of a Chromium browser through screenshots, the mouse and the keyboard.",
    `The tab shows ${url || "a blank page"}. Work only in this tab; there is no address bar on the screenshots, so navigate with the navigate action where you have one, or with links on the page.`,
    "Do the user's task step by step, checking each screenshot to see what your last action did.",
    "When the task is done, or cannot be done, stop using the tool and answer with a short summary of what you did and what you found.",
    "Do not ask the user for confirmation: act, unless an action would spend money or delete data the task did not ask to.",
  ].join("\n");
}

export function variableNotes(variables: CuaRunContext["variables"]): string {
  const entries = Object.entries(variables ?? {});
  if (entries.length === 0) return "";
  const lines = entries.map(([name, value]) => {
    const description = typeof value === "object" && value.description ? `: ${value.description}` : "";
    return `- %${name}%${description}`;
  });
  return `\n\nVariables: type %name% (with the percent signs) where the value of a variable belongs; it is replaced when typed, and you will not see the value.\n${lines.join("\n")}`;
}
