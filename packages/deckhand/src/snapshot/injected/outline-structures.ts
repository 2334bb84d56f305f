// Lists and tables in the outline: list items with their bullet (or none, for an item that is one
// control), definition terms, and table rows written one line each where every cell fits on one.
// They are parts of the walk (outline.ts): what they contain is written by the walk they are given.
//
// Self-contained: `installOutlineStructures` is sent to the page as source text.

import type { OutlineLines } from "./outline-lines.ts";
import type { Roles } from "./roles.ts";

/** The parts of one capture's walk that lists and tables write their content with. */
export interface Walk {
  children(el: Element | ShadowRoot | Document): Iterable<Node>;
  ignored(el: Element): boolean;
  visit(el: Element, depth: number, target: string[], quiet: boolean): void;
  blockChildren(el: Element | ShadowRoot | Document, depth: number, target: string[], quiet: boolean): void;
}

export function installOutlineStructures(roles: Roles, lines: OutlineLines) {
  const { SKIP, roleOf } = roles;
  const { indent, emit } = lines;

  function listItem(walk: Walk, el: Element, depth: number, target: string[]): void {
    // An item that is one control (a nav link, a menu entry) needs no bullet: its line says what it is.
    const lines: string[] = [];
    walk.blockChildren(el, depth, lines, false);
    if (lines.length === 1 && lines[0]!.trimStart().startsWith("[")) {
      target.push(lines[0]!);
      return;
    }
    prefixed(walk, el, depth, target, "- ", lines);
  }

  /** The element's content with `prefix` on its first line ("- Apple", "term: CDP"). */
  function prefixed(
    walk: Walk,
    el: Element,
    depth: number,
    target: string[],
    prefix: string,
    rendered?: string[],
  ): void {
    const lines = rendered ?? [];
    if (!rendered) walk.blockChildren(el, depth, lines, false);
    if (lines.length === 0) return;
    const pad = indent(depth);
    const first = lines[0]!;
    if (first.startsWith(pad) && first[pad.length] !== " ") {
      lines[0] = `${pad}${prefix}${first.slice(pad.length)}`;
      for (let i = 1; i < lines.length; i++) if (lines[i]!.startsWith(pad)) lines[i] = `  ${lines[i]}`;
    } else {
      target.push(`${pad}${prefix.trimEnd()}`);
    }
    for (const line of lines) target.push(line);
  }

  /** Rows as one line each (`Name | $12 | [7] link: Details`) when every cell fits on one line. */
  function tableRows(walk: Walk, table: Element, depth: number, target: string[]): void {
    const rows: Element[] = [];
    const collect = (node: Element | ShadowRoot) => {
      for (const child of walk.children(node)) {
        if (child.nodeType !== Node.ELEMENT_NODE) continue;
        const c = child as Element;
        if (SKIP.has(c.localName) || walk.ignored(c)) continue;
        const role = roleOf(c, c.localName);
        if (role === "row") rows.push(c);
        else if (role === "rowgroup" || role === "generic" || role === "presentation" || role === "none")
          collect(c);
        else if (role === "caption") continue;
        else walk.visit(c, depth, target, false);
      }
    };
    collect(table);
    for (const row of rows) {
      if (
        row.getAttribute("aria-hidden") === "true" ||
        (typeof row.checkVisibility === "function" && !row.checkVisibility())
      )
        continue;
      const cells: string[][] = [];
      let header = true;
      let simple = true;
      for (const child of walk.children(row)) {
        if (child.nodeType !== Node.ELEMENT_NODE) continue;
        const cell = child as Element;
        if (walk.ignored(cell)) continue;
        const role = roleOf(cell, cell.localName);
        if (role !== "columnheader") header = false;
        const lines: string[] = [];
        walk.blockChildren(cell, 0, lines, false);
        if (lines.length > 1) simple = false;
        cells.push(lines);
      }
      if (cells.length === 0) continue;
      if (simple) {
        // Rows are the table's lines; the "row" role is implied under "table" (two tokens a row saved).
        const line = cells.map((c) => (c[0] ?? "").trim()).join(" | ");
        emit(target, depth, header ? `header: ${line}` : line || "(empty row)");
      } else {
        emit(target, depth, header ? "header" : "row");
        for (const lines of cells) {
          if (lines.length === 0) continue;
          emit(target, depth + 1, `cell: ${lines[0]!.trim()}`);
          for (const line of lines.slice(1)) target.push(indent(depth + 1) + line);
        }
      }
    }
  }

  return { listItem, prefixed, tableRows };
}

export type OutlineStructures = ReturnType<typeof installOutlineStructures>;
