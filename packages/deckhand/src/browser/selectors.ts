// Selector syntax. One step is XPath (`xpath=…`, or starting with `/` or `(`), text (`text=…`)
// or CSS (`css=…` or anything else). A deep selector crosses into a frame at each `>>`, and an
// XPath crosses into a frame after each `iframe`/`frame` step that more steps follow.

import type { SelectorKind } from "./injected/dom-runtime.ts";

export interface SelectorStep {
  kind: SelectorKind;
  value: string;
}

export function parseSelectorStep(raw: string): SelectorStep {
  const selector = raw.trim();
  if (selector.startsWith("xpath=")) return { kind: "xpath", value: selector.slice(6).trim() };
  if (selector.startsWith("css=")) return { kind: "css", value: selector.slice(4).trim() };
  if (selector.startsWith("text=")) return { kind: "text", value: selector.slice(5).trim() };
  if (selector.startsWith("/") || selector.startsWith("(")) return { kind: "xpath", value: selector };
  return { kind: "css", value: selector };
}

/** Splits at `sep` where it is not inside quotes, brackets or parentheses. */
function splitOutside(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "[" || ch === "(") depth++;
    else if (ch === "]" || ch === ")") depth--;
    else if (depth === 0 && text.startsWith(sep, i)) {
      parts.push(text.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const FRAME_STEP = /^(?:child::)?(?:iframe|frame|\*\[name\(\)\s*=\s*['"](?:iframe|frame)['"]\])(?:\[.*\])?$/i;

/**
 * `/html/body/iframe[1]/html/body/button` -> [`/html/body/iframe[1]`, `/html/body/button`].
 * A `//` right after the frame step stays a descendant search in the child document.
 */
export function splitXPathAtFrames(xpath: string): string[] {
  const tokens = splitOutside(xpath, "/");
  const segments: string[][] = [[]];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    segments[segments.length - 1]!.push(token);
    const rest = tokens.slice(i + 1);
    if (FRAME_STEP.test(token) && rest.some((t) => t !== "")) segments.push([""]);
  }
  return segments.map((s) => s.join("/"));
}

/** The steps of a deep selector, one per frame it enters, the last one naming the element. */
export function parseDeepSelector(selector: string): SelectorStep[] {
  const steps: SelectorStep[] = [];
  for (const part of splitOutside(selector, ">>")) {
    if (!part.trim()) continue;
    const step = parseSelectorStep(part);
    if (step.kind === "xpath")
      for (const piece of splitXPathAtFrames(step.value)) steps.push({ kind: "xpath", value: piece });
    else steps.push(step);
  }
  return steps;
}

export function describeStep(step: SelectorStep): string {
  return step.kind === "css" ? step.value : `${step.kind}=${step.value}`;
}
