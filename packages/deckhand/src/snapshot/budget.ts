// Cutting an outline that is larger than its token budget. The page's structure is kept (the
// lines above every kept line, headings and landmarks), and the rest of the budget goes to the
// lines most relevant to the instruction. Omitted runs are marked so the model knows they exist.

import { estimateTokens } from "./tokens.ts";

const STOPWORDS = new Set(
  "the a an and or of to in on at for with from by into onto over under this that these those it its is are be was were click press type fill select choose find get extract every all each any some page button link field box item".split(
    " ",
  ),
);

/** Words of the instruction worth looking for in lines (lowercase, 3+ letters, no filler). */
export function keywordsOf(instruction: string): string[] {
  const words = instruction.toLowerCase().match(/[\p{L}\p{N}$€£%]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length >= 3 && !STOPWORDS.has(w)))];
}

// Generic words still count a little ("button" in "click the target button" matches buttons).
function fillerOf(instruction: string): string[] {
  const words = instruction.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  return [
    ...new Set(
      words.filter((w) => w.length >= 3 && STOPWORDS.has(w) && /button|link|field|box|item/.test(w)),
    ),
  ];
}

const STRUCTURE =
  /^(?:\[\d+\] heading:|navigation|main|banner|contentinfo|form|dialog|alertdialog|region|search|table|header:)/;

export function fitToBudget(text: string, budget: number, instruction: string): string {
  const lines = text.split("\n");
  const n = lines.length;
  const depth = new Int32Array(n);
  const parent = new Int32Array(n).fill(-1);
  const cost = new Float64Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const d = (line.length - line.trimStart().length) >> 1;
    depth[i] = d;
    cost[i] = estimateTokens(line) + 1;
    while (stack.length && depth[stack[stack.length - 1]!]! >= d) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1]! : -1;
    stack.push(i);
  }

  const keywords = keywordsOf(instruction);
  const filler = fillerOf(instruction);
  const score = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const body = line.trimStart();
    const lower = body.toLowerCase();
    let s = 0;
    for (const k of keywords) if (lower.includes(k)) s += 10;
    for (const k of filler) if (lower.includes(k)) s += 2;
    if (STRUCTURE.test(body)) s += 3;
    if (body.startsWith("[")) s += 1;
    // Earlier lines win ties: the top of a page is usually what a reader sees first.
    score[i] = s - i / (n * 10);
  }

  const header = "(outline cut to fit the token budget; omitted lines are marked with …)";
  // Room for the header and the omission markers.
  let left = budget - estimateTokens(header) - 2 - Math.min(2_000, Math.ceil(budget * 0.08));
  const keep = new Uint8Array(n);
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => score[b]! - score[a]!);
  for (const i of order) {
    if (keep[i]) continue;
    // The line and every line above it that is not kept yet.
    let needed = 0;
    for (let j = i; j >= 0 && !keep[j]; j = parent[j]!) needed += cost[j]!;
    if (needed > left) continue;
    for (let j = i; j >= 0 && !keep[j]; j = parent[j]!) keep[j] = 1;
    left -= needed;
    if (left <= 0) break;
  }

  const out: string[] = [header];
  let omitted = 0;
  let omittedDepth = 0;
  for (let i = 0; i < n; i++) {
    if (keep[i]) {
      if (omitted)
        out.push(`${"  ".repeat(omittedDepth)}… ${omitted} line${omitted === 1 ? "" : "s"} omitted`);
      omitted = 0;
      out.push(lines[i]!);
    } else {
      if (omitted === 0) omittedDepth = depth[i]!;
      omitted++;
    }
  }
  if (omitted) out.push(`${"  ".repeat(omittedDepth)}… ${omitted} line${omitted === 1 ? "" : "s"} omitted`);
  return out.join("\n");
}
