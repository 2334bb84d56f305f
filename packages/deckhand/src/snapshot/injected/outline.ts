// The in-page half of a snapshot: one walk over a frame's composed tree (light DOM, open and
// closed shadow roots, slots) that writes the outline text directly and remembers which element
// each id stands for, then answers for those ids. What a line says comes from the modules it is
// given: roles (roles.ts), names (names.ts), states and values (states.ts, values.ts). Iframes
// become placeholder lines that the Node side replaces with the child frame's own outline.
//
// Self-contained: `installOutline` is sent to the page as source text.

import type { InPageFailure } from "../../browser/injected/dom-runtime.ts";
import type { Quietness, QuietState } from "../../browser/injected/quiet.ts";
import type { ShadowAccess } from "../../browser/injected/shadow-access.ts";
import type { XPathAccess } from "../../browser/injected/xpath.ts";
import type { Names } from "./names.ts";
import type { Roles } from "./roles.ts";
import type { States } from "./states.ts";
import type { TextHelpers } from "./text.ts";
import type { Values } from "./values.ts";

export interface CaptureOptions {
  generation: number;
  /** Ids in this frame start after this number (ids are unique across the page's frames). */
  idOffset: number;
  /** Indentation depth of this frame's top lines. */
  baseDepth: number;
  /** CSS selectors whose matching subtrees are left out (applied in this frame). */
  ignoreCss: string[];
  /**
   * List the elements of these roles (with `names`, only those whose nameKey is one of them) with
   * the capture, as withRoles() would: a caller that looks elements up next makes no call for it.
   */
  lookup?: RoleLookup;
}

/** Elements by role and, when `names` is given, by name (nameKey()s: case and spacing aside). */
export interface RoleLookup {
  roles: string[];
  names?: string[];
}

export interface CaptureResult {
  text: string;
  /** How many ids this frame used. */
  count: number;
  /** Depth of each iframe placeholder, in placeholder order. */
  iframeDepths: number[];
  /** Custom elements with no shadow root known here: they may hide a closed one. */
  unknownHosts: number;
  /** The document's state as the capture began, and its count of changes when it ended. */
  quiet: QuietState;
  changesAfter: number;
  /** With `lookup`: [local id, role, name] of each element it asks for. */
  withRoles?: [number, string, string][];
}

export interface ElementDescription {
  xpath: string;
  role: string;
  name: string;
  tag: string;
  url?: string;
}

/** Marker of the k-th iframe placeholder in a frame's text. */
export const FRAME_MARKER_START = "\u0001";
export const FRAME_MARKER_END = "\u0002";

export function installOutline(
  shadow: ShadowAccess,
  xpaths: XPathAccess,
  quietness: Quietness,
  roles: Roles,
  names: Names,
  stateParts: States,
  values: Values,
  text: TextHelpers,
) {
  const { shadowRootOf, mayHideClosedRoot } = shadow;
  const { SKIP, INLINE, NAME_FROM_CONTENT, ACTIONABLE, LANDMARK, roleOf, outlineRole } = roles;
  const { nameOf, slotted } = names;
  const { states } = stateParts;
  const { collapse, clip, nameKey } = text;

  interface Registry {
    elements: Element[];
    meta: [string, string][];
    iframes: Element[];
  }
  const registries = new Map<number, Registry>();

  // ---------- the walk ----------

  /** A line of text being assembled: text pieces and the lines of inline elements, in order. */
  interface Run {
    parts: ({ text: string } | { lines: [number, string][]; name: string })[];
  }

  function capture(options: CaptureOptions, root: Element | null, ...excluded: Element[]): CaptureResult {
    const quiet = quietness.quiet();
    const result = names.withLabelIndex(() => captureIndexed(options, root, excluded));
    const listed = options.lookup
      ? { withRoles: ofRoles(registries.get(options.generation)!, options.lookup) }
      : {};
    return { ...result, quiet, changesAfter: quietness.quiet().changes, ...listed };
  }

  function captureIndexed(
    options: CaptureOptions,
    root: Element | null,
    excluded: Element[],
  ): Omit<CaptureResult, "quiet" | "changesAfter"> {
    const registry: Registry = { elements: [], meta: [], iframes: [] };
    registries.set(options.generation, registry);
    for (const g of registries.keys()) if (g < options.generation - 3) registries.delete(g);
    const out: string[] = [];
    const iframeDepths: number[] = [];
    const skip = new Set<Element>(excluded);
    const ignoreCss = options.ignoreCss.filter(Boolean);
    let unknownHosts = 0;
    const indents: string[] = [];
    const indent = (d: number) => (indents[d] ??= "  ".repeat(d));

    function ignored(el: Element): boolean {
      if (skip.has(el)) return true;
      for (const selector of ignoreCss) {
        try {
          if (el.matches(selector)) return true;
        } catch {
          // An invalid selector never matches; the Node side reports it.
        }
      }
      return false;
    }

    function assign(el: Element, role: string, name: string): number {
      registry.elements.push(el);
      registry.meta.push([role, name]);
      return options.idOffset + registry.elements.length;
    }

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

    function children(el: Element | ShadowRoot | Document): Iterable<Node> {
      if (el instanceof Element) {
        const shadow = shadowRootOf(el);
        if (shadow) return shadow.childNodes;
        if (mayHideClosedRoot(el)) unknownHosts++;
        if (el.localName === "slot") return slotted(el as HTMLSlotElement);
      }
      return el.childNodes;
    }

    /** Children of a block: text runs become lines; inline actionables are listed under their text. */
    function blockChildren(
      el: Element | ShadowRoot | Document,
      depth: number,
      target: string[],
      quiet: boolean,
    ): void {
      const run: Run = { parts: [] };
      for (const child of children(el)) {
        if (child.nodeType === Node.TEXT_NODE) {
          if (!quiet) addText(run, (child as Text).data);
          continue;
        }
        if (child.nodeType !== Node.ELEMENT_NODE) continue;
        const c = child as Element;
        if (c.localName === "br") {
          if (!quiet) flush(run, depth, target);
          continue;
        }
        if (INLINE.has(c.localName) && !quiet) {
          inline(c, run, depth);
        } else {
          flush(run, depth, target);
          visit(c, depth, target, quiet);
        }
      }
      flush(run, depth, target);
    }

    /** An inline element inside a text run. */
    function inline(el: Element, run: Run, depth: number): void {
      const tag = el.localName;
      if (SKIP.has(tag) || ignored(el) || el.getAttribute("aria-hidden") === "true") return;
      if (typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true })) {
        if (!el.checkVisibility()) {
          if (tag === "slot" || getComputedStyle(el).display === "contents") {
            for (const child of children(el)) {
              if (child.nodeType === Node.TEXT_NODE) addText(run, (child as Text).data);
              else if (child.nodeType === Node.ELEMENT_NODE) inline(child as Element, run, depth);
            }
          }
          return;
        }
        // visibility:hidden: its text is not shown, but a descendant may make itself visible again.
        const lines: string[] = [];
        blockChildren(el, 0, lines, true);
        addLines(run, lines);
        return;
      }
      const role = roleOf(el, tag);
      if (
        role === "generic" ||
        role === "presentation" ||
        role === "none" ||
        (tag === "label" && !ACTIONABLE.has(role))
      ) {
        if (tag === "label" && (el as HTMLLabelElement).control) {
          // The label's text is the name of its control; keep only controls nested inside it.
          const lines: string[] = [];
          blockChildren(el, 0, lines, true);
          addLines(run, lines);
          return;
        }
        if (clickable(el, tag, role)) {
          const lines: string[] = [];
          visit(el, 0, lines, false);
          addLines(run, lines, registry.meta[registry.meta.length - 1]?.[1] ?? "");
          return;
        }
        for (const child of children(el)) {
          if (child.nodeType === Node.TEXT_NODE) addText(run, (child as Text).data);
          else if (child.nodeType === Node.ELEMENT_NODE) {
            const c = child as Element;
            if (c.localName === "br") addText(run, " ");
            else inline(c, run, depth);
          }
        }
        return;
      }
      const lines: string[] = [];
      visit(el, 0, lines, false);
      if (lines.length === 0) return;
      const mark = lines[0]!.indexOf(": ");
      const name =
        NAME_FROM_CONTENT.has(role) || role === "image"
          ? mark >= 0
            ? stripStates(lines[0]!.slice(mark + 2))
            : ""
          : "";
      addLines(run, lines, name);
    }

    function stripStates(text: string): string {
      return text.replace(
        / (value=.*|checked|selected|disabled|expanded|collapsed|pressed|required|readonly|invalid|mixed)$/,
        "",
      );
    }

    function clickable(el: Element, tag: string, role: string): boolean {
      if (role !== "generic") return false;
      // Something made to be dragged is something to act on (drag and drop needs its id).
      if (draggable(el)) return true;
      const tabindex = el.getAttribute("tabindex");
      if (tabindex !== null && Number(tabindex) >= 0) return true;
      if (el.hasAttribute("onclick")) return true;
      if (
        tag === "span" ||
        tag === "div" ||
        tag === "li" ||
        tag === "img" ||
        tag === "svg" ||
        el.localName.includes("-")
      ) {
        const parent = el.parentElement;
        if (!parent) return false;
        const own = hasOwnText(el) || tag === "img" || tag === "svg";
        if (!own) return false;
        return getComputedStyle(el).cursor === "pointer" && getComputedStyle(parent).cursor !== "pointer";
      }
      return false;
    }

    function draggable(el: Element): boolean {
      return el.getAttribute("draggable") === "true";
    }

    function hasOwnText(el: Element): boolean {
      for (let n = el.firstChild; n; n = n.nextSibling)
        if (n.nodeType === Node.TEXT_NODE && (n as Text).data.trim()) return true;
      return false;
    }

    function zeroSize(el: Element): boolean {
      const rect = el.getBoundingClientRect();
      return rect.width === 0 && rect.height === 0;
    }

    function scrollable(el: Element): boolean {
      if (el.scrollHeight <= el.clientHeight + 4 && el.scrollWidth <= el.clientWidth + 4) return false;
      const style = getComputedStyle(el);
      return /(auto|scroll)/.test(style.overflowY + style.overflowX);
    }

    function visit(el: Element, depth: number, target: string[], quiet: boolean): void {
      const tag = el.localName;
      if (SKIP.has(tag) || ignored(el) || el.getAttribute("aria-hidden") === "true") return;
      if (typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true })) {
        // display:none hides the whole subtree; visibility:hidden can be undone by a descendant;
        // display:contents (slots, wrappers) has no box of its own but shows its children.
        if (!el.checkVisibility()) {
          if (tag === "slot" || getComputedStyle(el).display === "contents")
            blockChildren(el, depth, target, quiet);
          return;
        }
        blockChildren(el, depth, target, true);
        return;
      }
      if (tag === "details" && !(el as HTMLDetailsElement).open) {
        // A closed <details> shows only its summary.
        const summary = [...el.children].find((c) => c.localName === "summary");
        if (summary) visit(summary, depth, target, quiet);
        return;
      }
      if (tag === "slot") {
        blockChildren(el, depth, target, quiet);
        return;
      }
      const role = outlineRole(el);

      if (role === "Iframe") {
        if (zeroSize(el)) return;
        const id = assign(el, role, nameOf(el, tag, role));
        const name = registry.meta[id - options.idOffset - 1]![1];
        emit(target, depth, `[${id}] iframe${name ? `: ${name}` : ""}`);
        registry.iframes.push(el);
        iframeDepths.push(options.baseDepth + depth + 1);
        emit(target, depth + 1, `\u0001${registry.iframes.length - 1}\u0002`);
        return;
      }

      if (ACTIONABLE.has(role) || clickable(el, tag, role)) {
        if (zeroSize(el) && role !== "option") return;
        const name = nameOf(el, tag, role);
        const id = assign(el, role, name);
        const label = role !== "generic" ? role : draggable(el) ? "draggable" : "clickable";
        emit(target, depth, `[${id}] ${label}${name ? `: ${clip(name, 100)}` : ""}${states(el, role)}`);
        if (el instanceof HTMLSelectElement || role === "textbox" || role === "searchbox") return;
        // Content that is the name is not repeated; nested controls (and listbox options) still are.
        blockChildren(el, depth + 1, target, NAME_FROM_CONTENT.has(role) || role === "generic" || quiet);
        return;
      }

      if (role === "heading") {
        const name = nameOf(el, tag, role);
        if (!name) return;
        const id = assign(el, role, name);
        const level = el.getAttribute("aria-level") ?? (/^h([1-6])$/.exec(tag)?.[1] || "2");
        emit(target, depth, `[${id}] heading: ${clip(name, 200)} level=${level}`);
        blockChildren(el, depth + 1, target, true);
        return;
      }

      if (role === "image") {
        const name = nameOf(el, tag, role);
        if (!name || zeroSize(el)) return;
        const id = assign(el, role, name);
        emit(target, depth, `[${id}] image: ${clip(name, 100)}`);
        return;
      }

      if (role === "table") {
        const name = nameOf(el, tag, role);
        emit(target, depth, name ? `table: ${clip(name, 100)}` : "table");
        tableRows(el, depth + 1, target);
        return;
      }

      if (role === "list") {
        for (const child of children(el)) {
          if (child.nodeType !== Node.ELEMENT_NODE) continue;
          const c = child as Element;
          if (roleOf(c, c.localName) === "listitem") listItem(c, depth, target);
          else visit(c, depth, target, quiet);
        }
        return;
      }

      if (role === "listitem") {
        listItem(el, depth, target);
        return;
      }

      if (role === "term" || role === "definition") {
        prefixed(el, depth, target, `${role}: `);
        return;
      }

      if (role === "separator" || role === "presentation" || role === "none") {
        blockChildren(el, depth, target, quiet);
        return;
      }

      if (LANDMARK.has(role) || role === "progressbar" || role === "meter") {
        const name = nameOf(el, tag, role);
        if (role === "group" && !name) {
          blockChildren(el, depth, target, quiet);
          return;
        }
        let header = name ? `${role}: ${clip(name, 100)}` : role;
        if (role === "progressbar" || role === "meter") {
          const value = (el as HTMLProgressElement).value ?? el.getAttribute("aria-valuenow");
          header += ` value=${value}`;
        }
        emit(target, depth, header);
        blockChildren(el, depth + 1, target, quiet);
        return;
      }

      if (role === "generic" && !INLINE.has(tag) && scrollable(el)) {
        const id = assign(el, "generic", "");
        emit(target, depth, `[${id}] scrollable`);
        blockChildren(el, depth + 1, target, quiet);
        return;
      }

      if (role === "Legend" || role === "Figcaption" || role === "caption") return; // already the name of their parent
      blockChildren(el, depth, target, quiet);
    }

    function listItem(el: Element, depth: number, target: string[]): void {
      // An item that is one control (a nav link, a menu entry) needs no bullet: its line says what it is.
      const lines: string[] = [];
      blockChildren(el, depth, lines, false);
      if (lines.length === 1 && lines[0]!.trimStart().startsWith("[")) {
        target.push(lines[0]!);
        return;
      }
      prefixed(el, depth, target, "- ", lines);
    }

    /** The element's content with `prefix` on its first line ("- Apple", "term: CDP"). */
    function prefixed(
      el: Element,
      depth: number,
      target: string[],
      prefix: string,
      rendered?: string[],
    ): void {
      const lines = rendered ?? [];
      if (!rendered) blockChildren(el, depth, lines, false);
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
    function tableRows(table: Element, depth: number, target: string[]): void {
      const rows: Element[] = [];
      const collect = (node: Element | ShadowRoot) => {
        for (const child of children(node)) {
          if (child.nodeType !== Node.ELEMENT_NODE) continue;
          const c = child as Element;
          if (SKIP.has(c.localName) || ignored(c)) continue;
          const role = roleOf(c, c.localName);
          if (role === "row") rows.push(c);
          else if (role === "rowgroup" || role === "generic" || role === "presentation" || role === "none")
            collect(c);
          else if (role === "caption") continue;
          else visit(c, depth, target, false);
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
        for (const child of children(row)) {
          if (child.nodeType !== Node.ELEMENT_NODE) continue;
          const cell = child as Element;
          if (ignored(cell)) continue;
          const role = roleOf(cell, cell.localName);
          if (role !== "columnheader") header = false;
          const lines: string[] = [];
          blockChildren(cell, 0, lines, false);
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

    const start = root ?? document.body ?? document.documentElement;
    if (start) {
      if (root && !INLINE.has(root.localName)) visit(root, 0, out, false);
      else if (root) {
        const run: Run = { parts: [] };
        inline(root, run, 0);
        flush(run, 0, out);
      } else blockChildren(start, 0, out, false);
    }
    const base = indent(options.baseDepth);
    const text = options.baseDepth ? out.map((l) => base + l).join("\n") : out.join("\n");
    return { text, count: registry.elements.length, iframeDepths, unknownHosts };
  }

  // ---------- looking ids up afterwards ----------

  function describeOne(registry: Registry, generation: number, i: number): ElementDescription {
    const el = registry.elements[i];
    // Ids come from the snapshot that made this registry: a missing one is a bug, not the page.
    if (!el) throw new Error(`no element ${i} in snapshot ${generation}`);
    const [role, name] = registry.meta[i]!;
    const description: ElementDescription = { xpath: xpaths.xpathOf(el), role, name, tag: el.localName };
    const href = (el as HTMLAnchorElement).href;
    if (typeof href === "string" && href) description.url = href;
    return description;
  }

  /**
   * [local id, role, name] of the registry's elements that `lookup` asks for. Only those are sent
   * back: on a page of thousands, sending every element of a role would cost more than the look.
   */
  function ofRoles(registry: Registry, lookup: RoleLookup): [number, string, string][] {
    const roles = new Set(lookup.roles);
    const names = lookup.names ? new Set(lookup.names) : undefined;
    const found: [number, string, string][] = [];
    registry.meta.forEach(([role, name], i) => {
      if (roles.has(role) && (!names || names.has(nameKey(name)))) found.push([i, role, name]);
    });
    return found;
  }

  function registryFor(generation: number): Registry | InPageFailure {
    return (
      registries.get(generation) ?? {
        failed: "stale-snapshot",
        detail: `snapshot ${generation} is gone (the page navigated or a newer snapshot replaced it)`,
      }
    );
  }

  function isFailure(value: Registry | InPageFailure): value is InPageFailure {
    return "failed" in value;
  }

  return {
    capture,

    describe(generation: number, localIds: number[]): ElementDescription[] | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      const all = () => localIds.map((i) => describeOne(registry, generation, i));
      return localIds.length > 20 ? xpaths.withStepCache(all) : all();
    },

    /**
     * The local ids, roles and names of the elements `lookup` asks for: what the outline recorded
     * when it was taken, no XPath (cheap for every element of a large page).
     */
    withRoles(generation: number, lookup: RoleLookup): [number, string, string][] | InPageFailure {
      const registry = registryFor(generation);
      return isFailure(registry) ? registry : ofRoles(registry, lookup);
    },

    /**
     * Role and accessible name of any element, computed as the outline would; with `withXPath`,
     * also its XPath within its own document (one call where two would do the same work).
     */
    describeNode(el: Element, withXPath?: boolean): { role: string; name: string; xpath?: string } {
      const role = outlineRole(el);
      const name = collapse(nameOf(el, el.localName, role)).trim();
      return withXPath ? { role, name, xpath: xpaths.xpathOf(el) } : { role, name };
    },

    /** [local id, absolute URL] of every link-like element of a snapshot. */
    urls(generation: number): [number, string][] | InPageFailure {
      const out: [number, string][] = [];
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      registry.elements.forEach((el, i) => {
        const href = (el as HTMLAnchorElement).href;
        if (typeof href === "string" && href) out.push([i, href]);
      });
      return out;
    },

    element(generation: number, localId: number): Element | null | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      const el = registry.elements[localId];
      return el?.isConnected ? el : null;
    },

    iframeAt(generation: number, index: number): Element | null | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      return registry.iframes[index] ?? null;
    },

    noteTyped: values.noteTyped,
  };
}

export type Outline = ReturnType<typeof installOutline>;
