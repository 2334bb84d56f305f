// How the outline's lines are written: indentation, and the runs of text that become a line with
// the inline elements inside the sentence listed under it.
//
// Self-contained: `installOutlineLines` is sent to the page as source text.

import type { TextHelpers } from "./text.ts";

/** A line of text being assembled: text pieces and the lines of inline elements, in order. */
export interface Run {
  parts: ({ text: string } | { lines: [number, string][]; name: string })[];
}

export function installOutlineLines(text: TextHelpers) {
  const { collapse } = text;
  const indents: string[] = [];
  const indent = (d: number) => (indents[d] ??= "  ".repeat(d));

  function emit(target: string[], depth: number, line: string): void {
    target.push(indent(depth) + line);
  }

  function addText(run: Run, text: string): void {
    run.parts.push({ text });
  }

  /** Lines of an inline element; `name` is what it reads as inside a sentence. */
  function addLines(run: Run, lines: string[], name = ""): void {
    if (lines.length === 0) return;
    const rel: [number, string][] = lines.map((line) => {
      const body = line.trimStart();
      return [(line.length - body.length) / 2, body];
    });
    run.parts.push({ lines: rel, name });
  }

  /**
   * Writes a run: its text as one line, with the inline elements that sit inside the sentence
   * listed under it ("Read the docs for more" / "[7] link: docs"); inline elements before the
   * first or after the last word are lines of their own at the same level.
   */
  function flush(run: Run, depth: number, target: string[]): void {
    const parts = run.parts;
    run.parts = [];
    let first = -1;
    let last = -1;
    parts.forEach((p, i) => {
      if ("text" in p && p.text.trim()) {
        if (first < 0) first = i;
        last = i;
      }
    });
    const lines = (from: number, to: number, extra: number) => {
      for (let i = from; i < to; i++) {
        const p = parts[i]!;
        if ("lines" in p) for (const [rel, line] of p.lines) emit(target, depth + extra + rel, line);
      }
    };
    if (first < 0) {
      lines(0, parts.length, 0);
      return;
    }
    lines(0, first, 0);
    let text = "";
    for (let i = first; i <= last; i++) {
      const p = parts[i]!;
      text += "text" in p ? p.text : ` ${p.name} `;
    }
    emit(target, depth, collapse(text).trim());
    lines(first, last + 1, 1);
    lines(last + 1, parts.length, 0);
  }

  function stripStates(text: string): string {
    return text.replace(
      / (value=.*|checked|selected|disabled|expanded|collapsed|pressed|required|readonly|invalid|mixed)$/,
      "",
    );
  }

  return { indent, emit, addText, addLines, flush, stripStates };
}

export type OutlineLines = ReturnType<typeof installOutlineLines>;
