// The in-page half of a snapshot: one walk over a frame's composed tree (light DOM, open and
// closed shadow roots, slots) that writes the outline text directly and remembers which element
// each id stands for. Roles and names follow Chrome's accessibility tree; states come from the
// live DOM (current values, checked, expanded, ...). Iframes become placeholder lines that the
// Node side replaces with the child frame's own outline.
//
// Self-contained: `installOutline` is sent to the page as source text.

import type { InPageFailure } from "../../browser/injected/dom-runtime.ts";
import type { ShadowAccess } from "../../browser/injected/shadow-access.ts";

export interface CaptureOptions {
  generation: number;
  /** Ids in this frame start after this number (ids are unique across the page's frames). */
  idOffset: number;
  /** Indentation depth of this frame's top lines. */
  baseDepth: number;
  /** CSS selectors whose matching subtrees are left out (applied in this frame). */
  ignoreCss: string[];
}

export interface CaptureResult {
  text: string;
  /** How many ids this frame used. */
  count: number;
  /** Depth of each iframe placeholder, in placeholder order. */
  iframeDepths: number[];
  /** Custom elements with no shadow root known here: they may hide a closed one. */
  unknownHosts: number;
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

export function installOutline(shadow: ShadowAccess) {
  const { shadowRootOf, mayHideClosedRoot } = shadow;
  const masks = new WeakMap<Element, { token: string; value: string }>();

  interface Registry {
    elements: Element[];
    meta: [string, string][];
    iframes: Element[];
  }
  const registries = new Map<number, Registry>();

  const SKIP = new Set([
    "script",
    "style",
    "noscript",
    "template",
    "head",
    "meta",
    "link",
    "title",
    "base",
    "datalist",
    "param",
    "source",
    "track",
  ]);
  const INLINE = new Set([
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "cite",
    "code",
    "data",
    "dfn",
    "em",
    "font",
    "i",
    "img",
    "input",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "select",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "time",
    "tt",
    "u",
    "var",
    "button",
    "textarea",
    "svg",
    "del",
    "ins",
    "output",
    "meter",
    "progress",
    "big",
    "nobr",
    "wbr",
    "picture",
  ]);
  // Roles whose accessible name comes from their content (ARIA 1.2), so their text is not repeated below them.
  const NAME_FROM_CONTENT = new Set([
    "button",
    "cell",
    "checkbox",
    "columnheader",
    "gridcell",
    "heading",
    "link",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "row",
    "rowheader",
    "switch",
    "tab",
    "tooltip",
    "treeitem",
    "DisclosureTriangle",
    "term",
    "caption",
    "Legend",
    "Figcaption",
  ]);
  const ACTIONABLE = new Set([
    "button",
    "link",
    "checkbox",
    "radio",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "combobox",
    "listbox",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "treeitem",
    "scrollbar",
    "Date",
    "InputTime",
    "DateTime",
    "ColorWell",
    "DisclosureTriangle",
    "gridcell",
  ]);
  const LANDMARK = new Set([
    "navigation",
    "main",
    "banner",
    "contentinfo",
    "complementary",
    "form",
    "search",
    "region",
    "dialog",
    "alertdialog",
    "alert",
    "article",
    "figure",
    "menu",
    "menubar",
    "tablist",
    "tabpanel",
    "tree",
    "grid",
    "toolbar",
    "radiogroup",
    "group",
    "note",
    "status",
    "log",
    "timer",
    "tooltip",
    "sectionheader",
    "sectionfooter",
    "application",
    "document",
    "feed",
    "math",
    "blockquote",
  ]);
  const ARIA_ROLES = new Set([
    ...ACTIONABLE,
    ...LANDMARK,
    "heading",
    "img",
    "image",
    "list",
    "listitem",
    "table",
    "row",
    "rowgroup",
    "cell",
    "columnheader",
    "rowheader",
    "paragraph",
    "presentation",
    "none",
    "separator",
    "progressbar",
    "meter",
    "generic",
    "term",
    "definition",
    "marquee",
    "code",
    "emphasis",
    "strong",
    "insertion",
    "deletion",
    "subscript",
    "superscript",
    "time",
    "caption",
    "directory",
    "treegrid",
    "option",
  ]);

  function collapse(text: string): string {
    return text.replace(/\s+/g, " ");
  }

  function clip(text: string, max: number): string {
    const t = text.trim();
    return t.length > max ? `${t.slice(0, max - 1)}…` : t;
  }

  function quote(text: string): string {
    return JSON.stringify(clip(text, 120));
  }

  // ---------- roles ----------

  function landmarkScoped(el: Element): boolean {
    return (
      el.closest(
        "article, aside, main, nav, section, [role=article], [role=complementary], [role=main], [role=navigation], [role=region]",
      ) !== null
    );
  }

  function implicitRole(el: Element, tag: string): string {
    switch (tag) {
      case "a":
      case "area":
        return el.hasAttribute("href") ? "link" : "generic";
      case "button":
        return "button";
      case "input": {
        const type = (el as HTMLInputElement).type;
        switch (type) {
          case "button":
          case "submit":
          case "reset":
          case "image":
          case "file":
            return "button";
          case "checkbox":
            return "checkbox";
          case "radio":
            return "radio";
          case "range":
            return "slider";
          case "number":
            return "spinbutton";
          case "search":
            return el.hasAttribute("list") ? "combobox" : "searchbox";
          case "date":
            return "Date";
          case "time":
            return "InputTime";
          case "datetime-local":
          case "month":
          case "week":
            return "DateTime";
          case "color":
            return "ColorWell";
          case "hidden":
            return "none";
          default:
            return el.hasAttribute("list") ? "combobox" : "textbox";
        }
      }
      case "textarea":
        return "textbox";
      case "select": {
        const select = el as HTMLSelectElement;
        return select.multiple || select.size > 1 ? "listbox" : "combobox";
      }
      case "option":
        return "option";
      case "img":
        return el.getAttribute("alt") === "" ? "presentation" : "image";
      case "svg":
        return "image";
      case "h1":
      case "h2":
      case "h3":
      case "h4":
      case "h5":
      case "h6":
        return "heading";
      case "p":
        return "paragraph";
      case "ul":
      case "ol":
      case "menu":
        return "list";
      case "li":
        return "listitem";
      case "dl":
        return "DescriptionList";
      case "dt":
        return "term";
      case "dd":
        return "definition";
      case "table":
        return "table";
      case "tr":
        return "row";
      case "td":
        return "cell";
      case "th": {
        // A header cell in a row that also has data cells heads that row; otherwise its column.
        if (el.getAttribute("scope") === "row") return "rowheader";
        if (el.getAttribute("scope") === "col") return "columnheader";
        const row = el.parentElement;
        const hasData = row ? [...row.children].some((c) => c.localName === "td") : false;
        return hasData && !el.closest("thead") ? "rowheader" : "columnheader";
      }
      case "thead":
      case "tbody":
      case "tfoot":
        return "rowgroup";
      case "caption":
        return "caption";
      case "nav":
        return "navigation";
      case "main":
        return "main";
      case "header":
        return landmarkScoped(el) ? "sectionheader" : "banner";
      case "footer":
        return landmarkScoped(el) ? "sectionfooter" : "contentinfo";
      case "aside":
        return "complementary";
      case "article":
        return "article";
      case "section":
        return hasAriaName(el) ? "region" : "generic";
      case "form":
        return "form";
      case "search":
        return "search";
      case "dialog":
        return "dialog";
      case "fieldset":
      case "details":
      case "optgroup":
        return "group";
      case "summary":
        return "DisclosureTriangle";
      case "figure":
        return "figure";
      case "figcaption":
        return "Figcaption";
      case "legend":
        return "Legend";
      case "hr":
        return "separator";
      case "progress":
        return "progressbar";
      case "meter":
        return "meter";
      case "output":
        return "status";
      case "blockquote":
        return "blockquote";
      case "iframe":
      case "frame":
        return "Iframe";
      default:
        return "generic";
    }
  }

  function hasAriaName(el: Element): boolean {
    return Boolean(
      el.getAttribute("aria-label")?.trim() ||
        el.getAttribute("aria-labelledby")?.trim() ||
        el.getAttribute("title")?.trim(),
    );
  }

  function roleOf(el: Element, tag: string): string {
    const explicit = el.getAttribute("role");
    if (explicit) {
      for (const candidate of explicit.trim().split(/\s+/)) {
        if (candidate === "img") return "image";
        // Chrome only honours an option inside something that holds options.
        if (
          candidate === "option" &&
          !el.parentElement?.closest("[role=listbox], [role=combobox], [role=group], select, datalist")
        ) {
          return "generic";
        }
        if (ARIA_ROLES.has(candidate)) return candidate;
      }
    }
    return implicitRole(el, tag);
  }

  // ---------- names ----------

  function visibleForName(el: Element): boolean {
    if (el.getAttribute("aria-hidden") === "true") return false;
    if (typeof el.checkVisibility !== "function" || el.checkVisibility({ visibilityProperty: true }))
      return true;
    return el.localName === "slot" || getComputedStyle(el).display === "contents";
  }

  function controlValue(el: Element, role: string): string | null {
    if (el instanceof HTMLInputElement) {
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "hidden"].includes(el.type))
        return null;
      return el.value;
    }
    if (el instanceof HTMLTextAreaElement) return el.value;
    if (el instanceof HTMLSelectElement) return el.selectedOptions[0]?.label ?? "";
    if (role === "textbox" || role === "searchbox") return el.textContent ?? "";
    return null;
  }

  /**
   * The value as the outline shows it: a field that holds text typed from `%name%` variables shows
   * the text as written (with its tokens) for as long as it still holds what was typed.
   */
  function shownValue(el: Element, role: string): { text: string; masked: boolean } | null {
    const value = controlValue(el, role);
    if (value === null) return null;
    const mask = masks.get(el);
    return mask && mask.value === value ? { text: mask.token, masked: true } : { text: value, masked: false };
  }

  /** Text of a subtree as a name computed from content: hidden parts skipped, controls give their value. */
  /** `hiddenToo`: content reached through aria-labelledby counts even when hidden (accname 2B). */
  function textFrom(node: Node, exclude: Element | null, depth: number, hiddenToo = false): string {
    if (depth > 40) return "";
    if (node.nodeType === Node.TEXT_NODE) return (node as Text).data;
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const el = node as Element;
    const tag = el.localName;
    if (SKIP.has(tag) || (!hiddenToo && !visibleForName(el))) return "";
    if (el === exclude) return "";
    const label = el.getAttribute("aria-label")?.trim();
    if (label && depth > 0) return ` ${label} `;
    const role = roleOf(el, tag);
    if (
      depth > 0 &&
      (role === "textbox" ||
        role === "combobox" ||
        role === "listbox" ||
        role === "searchbox" ||
        role === "slider" ||
        role === "spinbutton")
    ) {
      return ` ${shownValue(el, role)?.text ?? ""} `;
    }
    if (tag === "img" || tag === "area")
      return ` ${el.getAttribute("alt") ?? el.getAttribute("title") ?? ""} `;
    if (tag === "svg") return ` ${svgTitle(el)} `;
    if (el instanceof HTMLInputElement && ["button", "submit", "reset"].includes(el.type))
      return ` ${el.value} `;
    let text = "";
    const shadow = shadowRootOf(el);
    const kids = shadow ? shadow.childNodes : tag === "slot" ? slotted(el as HTMLSlotElement) : el.childNodes;
    for (const child of kids) text += textFrom(child, exclude, depth + 1, hiddenToo);
    if (!INLINE.has(tag) && depth > 0) text = ` ${text} `;
    return text;
  }

  function slotted(slot: HTMLSlotElement): Iterable<Node> {
    const assigned = slot.assignedNodes({ flatten: true });
    return assigned.length ? assigned : slot.childNodes;
  }

  function svgTitle(el: Element): string {
    const label = el.getAttribute("aria-label");
    if (label) return label;
    for (const child of el.children) if (child.localName === "title") return child.textContent ?? "";
    return "";
  }

  function byIds(el: Element, ids: string): string {
    const root = el.getRootNode() as Document | ShadowRoot;
    return ids
      .split(/\s+/)
      .map((id) => {
        const ref = root.getElementById?.(id) ?? document.getElementById(id);
        if (!ref) return "";
        return ref.getAttribute("aria-label")?.trim() || textFrom(ref, null, 0, true);
      })
      .join(" ");
  }

  // `el.labels` searches the whole document on each call (seconds for a fresh 20,000-element
  // page); during a capture the document's labels are indexed once instead.
  let labelIndex: Map<Element, HTMLLabelElement[]> | undefined;
  let indexing = false;

  function labelsOf(el: Element): (Iterable<HTMLLabelElement> & { length: number }) | null {
    if (!("labels" in el)) return null;
    if (!indexing || el.getRootNode() !== document) return (el as HTMLInputElement).labels;
    if (!labelIndex) {
      labelIndex = new Map();
      for (const label of document.querySelectorAll("label")) {
        const control = label.control;
        if (!control) continue;
        const list = labelIndex.get(control);
        if (list) list.push(label);
        else labelIndex.set(control, [label]);
      }
    }
    return labelIndex.get(el) ?? [];
  }

  function nameOf(el: Element, tag: string, role: string): string {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = collapse(byIds(el, labelledBy)).trim();
      if (text) return text;
    }
    const ariaLabel = el.getAttribute("aria-label");
    if (ariaLabel?.trim()) return collapse(ariaLabel).trim();
    if (el instanceof HTMLInputElement) {
      const type = el.type;
      if (type === "submit" || type === "reset" || type === "button") {
        return el.value || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
      }
      if (type === "image") return el.alt || el.value || "Submit";
    }
    const labels = labelsOf(el);
    if (labels && labels.length > 0) {
      const text = collapse([...labels].map((l) => textFrom(l, el, 0)).join(" ")).trim();
      if (text) return text;
    }
    if (tag === "img" || tag === "area") {
      const alt = el.getAttribute("alt");
      if (alt?.trim()) return collapse(alt).trim();
    }
    if (tag === "svg") {
      const title = svgTitle(el);
      if (title.trim()) return collapse(title).trim();
    }
    if (tag === "fieldset") {
      const legend = el.querySelector(":scope > legend");
      if (legend) return collapse(textFrom(legend, null, 0)).trim();
    }
    if (tag === "table") {
      const caption = (el as HTMLTableElement).caption;
      if (caption) return collapse(textFrom(caption, null, 0)).trim();
    }
    if (tag === "figure") {
      const caption = el.querySelector(":scope > figcaption");
      if (caption) return collapse(textFrom(caption, null, 0)).trim();
    }
    if (tag === "iframe" || tag === "frame")
      return collapse(el.getAttribute("title") ?? el.getAttribute("name") ?? "").trim();
    if (NAME_FROM_CONTENT.has(role) || role === "generic") {
      const text = collapse(textFrom(el, null, 0)).trim();
      if (text) return text;
    }
    const title = el.getAttribute("title");
    if (title?.trim()) return collapse(title).trim();
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      const placeholder = el.getAttribute("placeholder") ?? el.getAttribute("aria-placeholder");
      if (placeholder?.trim()) return collapse(placeholder).trim();
    }
    return "";
  }

  // ---------- states ----------

  function states(el: Element, role: string): string {
    const parts: string[] = [];
    const shown = shownValue(el, role);
    const value = shown?.text ?? null;
    if (shown?.masked) {
      // Checked first: a masked value must not reach the combobox branch below either.
      parts.push(`value=${/^%[\w.-]+%$/.test(shown.text) ? shown.text : quote(shown.text)}`);
    } else if (value !== null && role !== "combobox" && role !== "listbox") {
      if (value !== "")
        parts.push(
          `value=${el instanceof HTMLInputElement && el.type === "password" ? '"••••"' : quote(value)}`,
        );
    }
    if (el instanceof HTMLSelectElement) {
      const selected = [...el.selectedOptions].map((o) => o.label);
      if (selected.length) parts.push(`value=${quote(selected.join(", "))}`);
      const options = [...el.options].map((o) => o.label.trim());
      const shown = options.slice(0, 25).join(" | ");
      parts.push(`options=[${shown}${options.length > 25 ? ` | … ${options.length - 25} more` : ""}]`);
    } else if (role === "combobox" && value && !shown?.masked) {
      parts.push(`value=${quote(value)}`);
    }
    if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) {
      if (el.indeterminate) parts.push("mixed");
      else if (el.checked) parts.push("checked");
    } else {
      const checked = el.getAttribute("aria-checked");
      if (checked === "true") parts.push("checked");
      else if (checked === "mixed") parts.push("mixed");
    }
    if (el instanceof HTMLInputElement && el.type === "range")
      parts.push(`min=${el.min || 0} max=${el.max || 100}`);
    const expanded = el.getAttribute("aria-expanded");
    if (expanded === "true" || expanded === "false")
      parts.push(expanded === "true" ? "expanded" : "collapsed");
    if (el.localName === "summary")
      parts.push((el.parentElement as HTMLDetailsElement | null)?.open ? "expanded" : "collapsed");
    if (el.getAttribute("aria-selected") === "true" || (el instanceof HTMLOptionElement && el.selected))
      parts.push("selected");
    if (el.getAttribute("aria-pressed") === "true") parts.push("pressed");
    if ((el as HTMLButtonElement).disabled || el.getAttribute("aria-disabled") === "true")
      parts.push("disabled");
    if ((el as HTMLInputElement).required || el.getAttribute("aria-required") === "true")
      parts.push("required");
    if ((el as HTMLInputElement).readOnly || el.getAttribute("aria-readonly") === "true")
      parts.push("readonly");
    if (el.getAttribute("aria-invalid") === "true") parts.push("invalid");
    return parts.length ? ` ${parts.join(" ")}` : "";
  }

  // ---------- the walk ----------

  /** A line of text being assembled: text pieces and the lines of inline elements, in order. */
  interface Run {
    parts: ({ text: string } | { lines: [number, string][]; name: string })[];
  }

  function capture(options: CaptureOptions, root: Element | null, ...excluded: Element[]): CaptureResult {
    indexing = true;
    labelIndex = undefined;
    try {
      return captureIndexed(options, root, excluded);
    } finally {
      indexing = false;
      labelIndex = undefined;
    }
  }

  function captureIndexed(options: CaptureOptions, root: Element | null, excluded: Element[]): CaptureResult {
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
      let role = roleOf(el, tag);
      if (
        (el as HTMLElement).isContentEditable &&
        (el.parentElement === null || !(el.parentElement as HTMLElement).isContentEditable)
      ) {
        role = "textbox";
      }

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

  /**
   * Steps (`name[index]`) of elements, remembered for one describe() call: each parent's children
   * are counted once, so describing thousands of siblings stays linear.
   */
  let stepCache: Map<Element, string> | undefined;

  function stepName(el: Element): string {
    return el.namespaceURI === "http://www.w3.org/1999/xhtml" ? el.localName : `*[name()='${el.localName}']`;
  }

  function step(el: Element): string {
    if (!el.parentNode) return stepName(el);
    const cached = stepCache?.get(el);
    if (cached) return cached;
    if (stepCache) {
      const counts = new Map<string, number>();
      for (let s = el.parentNode.firstChild; s; s = s.nextSibling) {
        if (!(s instanceof Element)) continue;
        const n = (counts.get(s.localName) ?? 0) + 1;
        counts.set(s.localName, n);
        stepCache.set(s, `${stepName(s)}[${n}]`);
      }
      return stepCache.get(el)!;
    }
    let index = 1;
    for (let s = el.previousElementSibling; s; s = s.previousElementSibling)
      if (s.localName === el.localName) index++;
    return `${stepName(el)}[${index}]`;
  }

  /** `/html[1]/body[1]/x-card[1]//button[1]`: `//` enters the shadow root of the element before it. */
  function xpathOf(el: Element): string {
    const parts: string[] = [];
    let node: Element | null = el;
    while (node) {
      const parent: Node | null = node.parentNode;
      if (parent instanceof ShadowRoot) {
        parts.push(`//${step(node)}`);
        node = parent.host;
      } else {
        parts.push(`/${step(node)}`);
        node = parent instanceof Element ? parent : null;
      }
    }
    return parts.reverse().join("");
  }

  function describeOne(registry: Registry, generation: number, i: number): ElementDescription {
    const el = registry.elements[i];
    // Ids come from the snapshot that made this registry: a missing one is a bug, not the page.
    if (!el) throw new Error(`no element ${i} in snapshot ${generation}`);
    const [role, name] = registry.meta[i]!;
    const description: ElementDescription = { xpath: xpathOf(el), role, name, tag: el.localName };
    const href = (el as HTMLAnchorElement).href;
    if (typeof href === "string" && href) description.url = href;
    return description;
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
    xpathOf,

    describe(generation: number, localIds: number[]): ElementDescription[] | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      stepCache = localIds.length > 20 ? new Map() : undefined;
      try {
        return localIds.map((i) => describeOne(registry, generation, i));
      } finally {
        stepCache = undefined;
      }
    },

    /** Role and accessible name of any element, computed as the outline would. */
    describeNode(el: Element): { role: string; name: string } {
      const tag = el.localName;
      let role = roleOf(el, tag);
      if (
        (el as HTMLElement).isContentEditable &&
        !(el.parentElement as HTMLElement | null)?.isContentEditable
      )
        role = "textbox";
      return { role, name: collapse(nameOf(el, tag, role)).trim() };
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

    /**
     * Records text typed into a field, so that a value that came from `%name%` variables stays
     * hidden: `typed` is the text as written (tokens, not values), `value` what the field holds
     * now, `before` what it held before the typing ("" when it was replaced). Text typed after a
     * masked value keeps the mask; a field with nothing secret in it is shown as it is.
     */
    noteTyped(el: Element, before: string, typed: string, value: string, secret: boolean): void {
      const previous = masks.get(el);
      const beforeMasked = before !== "" && previous !== undefined && previous.value === before;
      if (secret || beforeMasked)
        masks.set(el, { token: (beforeMasked ? previous.token : before) + typed, value });
      else masks.delete(el);
    },
  };
}

export type Outline = ReturnType<typeof installOutline>;
