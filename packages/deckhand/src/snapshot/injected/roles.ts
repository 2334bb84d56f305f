// Roles as Chrome's accessibility tree computes them, from the live DOM alone: the implicit role
// of each element, an explicit `role` where Chrome honours it, and the tables of roles the outline
// treats alike (actionable, landmarks, names from content, inline text). Shared by the outline's
// walk and by describing one element (snapshot/describe.ts).
//
// Self-contained: `installRoles` is sent to the page as source text.

export function installRoles() {
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

  /** The role the outline gives an element: the root of an editing host (contenteditable) is a textbox. */
  function outlineRole(el: Element): string {
    const role = roleOf(el, el.localName);
    const editingRoot =
      (el as HTMLElement).isContentEditable &&
      (el.parentElement === null || !(el.parentElement as HTMLElement).isContentEditable);
    return editingRoot ? "textbox" : role;
  }

  return { SKIP, INLINE, NAME_FROM_CONTENT, ACTIONABLE, LANDMARK, roleOf, outlineRole };
}

export type Roles = ReturnType<typeof installRoles>;
