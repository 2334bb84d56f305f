// The in-page half of a snapshot: one walk over a frame's composed tree (light DOM, open and
// closed shadow roots, slots) that writes the outline text directly and remembers which element
// each id stands for, then answers for those ids. What a line says comes from the modules it is
// given: roles (roles.ts), names (names.ts), states and values (states.ts, values.ts), what a
// generic element is made for (element-kinds.ts); how lines are written (outline-lines.ts), lists
// and tables (outline-structures.ts), and the ids' registry (outline-registry.ts) are modules of
// their own too. Iframes become placeholder lines that the Node side replaces with the child
// frame's own outline.
//
// Self-contained: `installOutline` is sent to the page as source text.

import type { Quietness, QuietState } from "../../browser/injected/quiet.ts";
import type { ShadowAccess } from "../../browser/injected/shadow-access.ts";
import type { XPathAccess } from "../../browser/injected/xpath.ts";
import type { ElementKinds } from "./element-kinds.ts";
import type { Names } from "./names.ts";
import type { OutlineLines, Run } from "./outline-lines.ts";
import type { OutlineRegistry, Registry, RoleLookup } from "./outline-registry.ts";
import type { OutlineStructures, Walk } from "./outline-structures.ts";
import type { Roles } from "./roles.ts";
import type { States } from "./states.ts";
import type { TextHelpers } from "./text.ts";
import type { Values } from "./values.ts";

export type { ElementDescription, RoleLookup } from "./outline-registry.ts";

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
  lines: OutlineLines,
  kinds: ElementKinds,
  structures: OutlineStructures,
  registries: OutlineRegistry,
) {
  const { shadowRootOf, mayHideClosedRoot } = shadow;
  const { SKIP, INLINE, NAME_FROM_CONTENT, ACTIONABLE, LANDMARK, roleOf, outlineRole } = roles;
  const { nameOf, slotted } = names;
  const { states } = stateParts;
  const { collapse, clip } = text;
  const { indent, emit, addText, addLines, flush, stripStates } = lines;
  const { clickable, draggable, zeroSize, scrollable } = kinds;
  const { listItem, prefixed, tableRows } = structures;

  // ---------- the walk ----------

  function capture(options: CaptureOptions, root: Element | null, ...excluded: Element[]): CaptureResult {
    const quiet = quietness.quiet();
    const result = names.withLabelIndex(() => captureIndexed(options, root, excluded));
    const listed = options.lookup
      ? { withRoles: registries.ofRoles(options.generation, options.lookup) }
      : {};
    return { ...result, quiet, changesAfter: quietness.quiet().changes, ...listed };
  }

  function captureIndexed(
    options: CaptureOptions,
    root: Element | null,
    excluded: Element[],
  ): Omit<CaptureResult, "quiet" | "changesAfter"> {
    const registry: Registry = registries.begin(options.generation);
    const out: string[] = [];
    const iframeDepths: number[] = [];
    const skip = new Set<Element>(excluded);
    const ignoreCss = options.ignoreCss.filter(Boolean);
    let unknownHosts = 0;

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
        tableRows(walker, el, depth + 1, target);
        return;
      }

      if (role === "list") {
        for (const child of children(el)) {
          if (child.nodeType !== Node.ELEMENT_NODE) continue;
          const c = child as Element;
          if (roleOf(c, c.localName) === "listitem") listItem(walker, c, depth, target);
          else visit(c, depth, target, quiet);
        }
        return;
      }

      if (role === "listitem") {
        listItem(walker, el, depth, target);
        return;
      }

      if (role === "term" || role === "definition") {
        prefixed(walker, el, depth, target, `${role}: `);
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

    const walker: Walk = { children, ignored, visit, blockChildren };
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

  return {
    capture,
    describe: registries.describe,
    withRoles: registries.withRoles,

    /**
     * Role and accessible name of any element, computed as the outline would; with `withXPath`,
     * also its XPath within its own document (one call where two would do the same work).
     */
    describeNode(el: Element, withXPath?: boolean): { role: string; name: string; xpath?: string } {
      const role = outlineRole(el);
      const name = collapse(nameOf(el, el.localName, role)).trim();
      return withXPath ? { role, name, xpath: xpaths.xpathOf(el) } : { role, name };
    },

    urls: registries.urls,
    element: registries.element,
    iframeAt: registries.iframeAt,

    noteTyped: values.noteTyped,
  };
}

export type Outline = ReturnType<typeof installOutline>;
