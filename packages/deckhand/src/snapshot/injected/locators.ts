// The record-time locator check: which Playwright-style locators (getByRole with an exact name,
// getByLabel, getByPlaceholder, getByText, getByTestId; CSS from the element's own attributes)
// match exactly one element of the frame, counted the way Playwright's locators see the page (open
// shadow roots pierced, closed ones invisible). One call per step, when the step runs: a script
// exported later uses only a locator that was unique then, and says so when there was none.
//
// Self-contained: `installLocators` is sent to the page as source text.

import type { StepLocator } from "../../types.ts";
import type { Names } from "./names.ts";
import type { Roles } from "./roles.ts";
import type { TextHelpers } from "./text.ts";

export function installLocators(roles: Roles, names: Names, text: TextHelpers) {
  const { roleOf } = roles;
  const { nameOf } = names;
  const { collapse } = text;

  /**
   * Roles whose meaning Playwright's getByRole and the outline agree on (ARIA names). The outline's
   * "image" is ARIA's "img"; its Chrome-internal roles (Date, ColorWell) have no ARIA name at all.
   */
  const ROLES: Record<string, string> = {
    button: "button",
    link: "link",
    textbox: "textbox",
    searchbox: "searchbox",
    checkbox: "checkbox",
    radio: "radio",
    combobox: "combobox",
    listbox: "listbox",
    option: "option",
    slider: "slider",
    spinbutton: "spinbutton",
    switch: "switch",
    tab: "tab",
    menuitem: "menuitem",
    menuitemcheckbox: "menuitemcheckbox",
    menuitemradio: "menuitemradio",
    treeitem: "treeitem",
    heading: "heading",
    image: "img",
    cell: "cell",
    gridcell: "gridcell",
  };

  /** Every element of a document or shadow root, through open shadow roots (what Playwright sees). */
  function allElements(root: Document | ShadowRoot, out: Element[] = []): Element[] {
    for (const el of root.querySelectorAll("*")) {
      out.push(el);
      if (el.shadowRoot) allElements(el.shadowRoot, out);
    }
    return out;
  }

  /** Why Playwright cannot reach the element at all (a closed shadow root above it), or undefined. */
  function unreachable(el: Element): string | undefined {
    for (let node: Node | null = el; node; ) {
      const parent: Node | null = node.parentNode;
      if (parent instanceof ShadowRoot) {
        if (parent.mode === "closed") return "it is inside a closed shadow root";
        node = parent.host;
      } else node = parent;
    }
    return undefined;
  }

  /** Hidden from the accessibility tree (what getByRole leaves out by default). */
  function hidden(el: Element): boolean {
    if (el.closest("[aria-hidden=true]")) return true;
    return typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true });
  }

  const norm = (s: string | null | undefined) => collapse(s ?? "").trim();

  /**
   * The tags that can have each role without a role attribute: counting the elements of a role
   * asks only these (and elements with a role attribute), not every element of a large page.
   */
  const TAGS: Record<string, string[]> = {
    button: ["button", "input", "summary"],
    link: ["a", "area"],
    textbox: ["input", "textarea"],
    searchbox: ["input"],
    checkbox: ["input"],
    radio: ["input"],
    combobox: ["select", "input"],
    listbox: ["select", "datalist"],
    option: ["option"],
    slider: ["input"],
    spinbutton: ["input"],
    heading: ["h1", "h2", "h3", "h4", "h5", "h6"],
    img: ["img", "svg"],
    cell: ["td", "th"],
    gridcell: ["td"],
  };

  function mayHaveRole(el: Element, role: string): boolean {
    if (el.hasAttribute("role")) return true;
    if (role === "textbox" && (el as HTMLElement).isContentEditable) return true;
    const tags = TAGS[role];
    return tags === undefined || tags.includes(el.localName);
  }

  /**
   * Whether `el`'s accessible name could be `name`: false when no text it can be named from holds
   * it, so that the name (the costly part) is computed only for the few elements that might match.
   */
  function mayBeNamed(el: Element, name: string): boolean {
    if (el.hasAttribute("aria-labelledby")) return true;
    const parts = [
      el.textContent,
      el.getAttribute("aria-label"),
      el.getAttribute("title"),
      el.getAttribute("alt"),
      el.getAttribute("placeholder"),
      (el as HTMLInputElement).value,
    ];
    const labels = (el as HTMLInputElement).labels;
    if (labels) for (const label of labels) parts.push(label.textContent);
    if (el.shadowRoot) parts.push(el.shadowRoot.textContent);
    return parts.some((p) => typeof p === "string" && collapse(p).includes(name));
  }

  function ariaRole(el: Element): string | undefined {
    // A password field has no ARIA role (getByRole("textbox") does not find it); a file input's
    // role differs between engines. Both are reached by their label instead.
    if (el instanceof HTMLInputElement && (el.type === "file" || el.type === "password")) return undefined;
    return ROLES[roleOf(el, el.localName)];
  }

  /** The texts getByLabel matches: aria-label, and the text of each <label> of a control. */
  function labelTexts(el: Element): string[] {
    const out: string[] = [];
    const aria = norm(el.getAttribute("aria-label"));
    if (aria) out.push(aria);
    const labels = (el as HTMLInputElement).labels;
    if (labels) for (const label of labels) out.push(norm(label.textContent));
    return out.filter(Boolean);
  }

  function ownText(el: Element): string {
    return norm(el.textContent);
  }

  /** CSS of the element's own, non-positional attributes, most specific first. */
  function cssCandidates(el: Element): string[] {
    const out: string[] = [];
    const tag = el.localName;
    if (el.id && /^[A-Za-z][\w-]*$/.test(el.id)) out.push(`#${el.id}`);
    for (const attr of ["name", "aria-label", "title", "href", "alt", "value", "type"]) {
      const value = el.getAttribute(attr);
      if (value && value.length < 200) out.push(`${tag}[${attr}=${JSON.stringify(value)}]`);
    }
    return out;
  }

  function countCss(all: Element[], selector: string): number {
    let n = 0;
    for (const el of all) if (el.matches(selector)) n++;
    return n;
  }

  return {
    /**
     * The locators that match `el` and nothing else in its frame, best first; or why none can.
     * `secrets`: texts a candidate must not contain (a variable's value typed into the page).
     */
    locate(
      el: Element,
      secrets: string[],
    ): { candidates: StepLocator[]; unaddressable?: string; tag: string } {
      const tag = el.localName;
      const blocked = unreachable(el);
      if (blocked) return { candidates: [], unaddressable: blocked, tag };
      const root = el.ownerDocument;
      const all = allElements(root);
      const safe = (s: string) => s !== "" && s.length <= 200 && !secrets.some((v) => v && s.includes(v));
      const candidates: StepLocator[] = [];

      const role = ariaRole(el);
      if (role) {
        const name = norm(nameOf(el, el.localName, roleOf(el, el.localName)));
        if (safe(name)) {
          let n = 0;
          for (const other of all) {
            if (!mayHaveRole(other, role) || ariaRole(other) !== role) continue;
            if (other !== el && !mayBeNamed(other, name)) continue;
            if (hidden(other)) continue;
            if (norm(nameOf(other, other.localName, roleOf(other, other.localName))) === name) n++;
          }
          if (n === 1 && !hidden(el)) candidates.push({ kind: "role", role, name });
        }
      }
      for (const label of labelTexts(el)) {
        if (!safe(label)) continue;
        const n = all.filter((other) => labelTexts(other).includes(label)).length;
        if (n === 1) {
          candidates.push({ kind: "label", text: label });
          break;
        }
      }
      const placeholder = norm(el.getAttribute("placeholder"));
      if (safe(placeholder)) {
        const n = all.filter((other) => norm(other.getAttribute("placeholder")) === placeholder).length;
        if (n === 1) candidates.push({ kind: "placeholder", text: placeholder });
      }
      // Text is read off every element of the frame: only when nothing cheaper was unique.
      const own = candidates.length === 0 ? ownText(el) : "";
      if (safe(own) && !(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
        // getByText matches the innermost elements with that text: a parent whose text is only its
        // matching child's does not count again.
        let n = 0;
        for (const other of all) {
          if (ownText(other) !== own) continue;
          if ([...other.children].some((child) => ownText(child) === own)) continue;
          n++;
        }
        const innermost = ![...el.children].some((child) => ownText(child) === own);
        if (n === 1 && innermost) candidates.push({ kind: "text", text: own });
      }
      const testId = el.getAttribute("data-testid");
      if (testId && safe(testId)) {
        const n = all.filter((other) => other.getAttribute("data-testid") === testId).length;
        if (n === 1) candidates.push({ kind: "testId", value: testId });
      }
      if (candidates.length === 0) {
        for (const selector of cssCandidates(el)) {
          if (!safe(selector)) continue;
          let n: number;
          try {
            n = countCss(all, selector);
          } catch {
            continue;
          }
          if (n === 1) {
            candidates.push({ kind: "css", selector });
            break;
          }
        }
      }
      if (candidates.length === 0)
        return { candidates, unaddressable: "only its position tells it apart from other elements", tag };
      return { candidates, tag };
    },

    /** A CSS selector for an <iframe> element that matches it alone in its document; null when only its position would. */
    frameSelector(el: Element): string | null {
      if (unreachable(el)) return null;
      const all = allElements(el.ownerDocument);
      const tag = el.localName;
      const options: string[] = [];
      if (el.id && /^[A-Za-z][\w-]*$/.test(el.id)) options.push(`#${el.id}`);
      for (const attr of ["title", "name", "src"]) {
        const value = el.getAttribute(attr);
        if (value) options.push(`${tag}[${attr}=${JSON.stringify(value)}]`);
      }
      for (const selector of options) if (countCss(all, selector) === 1) return selector;
      return null;
    },
  };
}

export type Locators = ReturnType<typeof installLocators>;
