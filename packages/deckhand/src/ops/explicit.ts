// Explicit instructions: act without a model when the instruction says plainly what to do and to
// which element ("click the Sign in button", "type %email% into the Email field", "select Germany
// from the Country dropdown", "Check A, B and C, then click Continue", "press Enter").
//
// Two halves. parseExplicitSteps() splits the instruction into clauses ("A and B", "A, then B")
// and reads each against a table of verbs (VERBS: the words, and the shape of what follows them)
// and of kind words (KINDS: "button", "link", "field", "dropdown", ... and the roles each fits);
// a target is a name (quoted or plain), a kind word before or after it, a kind word alone (the
// only one of its kind), and optionally a container ("in the Billing address section", "in the
// row for Ada", "in the dialog"). Anything else (a condition, a position, a description instead
// of a name, a value that is described rather than given) is not explicit. Then actExplicitly()
// carries the clauses out in turn: for each, it reads the whole page (every frame, no token
// budget) and looks for elements whose role fits the verb and the kind word, whose accessible
// name is the name given (case and spacing aside; when several differ only in case, the one
// written exactly), that a person can see and reach (not behind an open modal dialog) and that
// are in the container named. Only when exactly one fits is it acted on; the first clause for
// which none or several fit goes, with the rest, to the model, which is told which steps were
// done (or, with no model, MissingLLMConfigurationError says what was done and why the rest needs
// one).
//
// The rule is "never a wrong element": a plain instruction whose target is not unique costs a
// model call, never a guess.

import { releaseTarget } from "../browser/element-target.ts";
import { domRuntime } from "../browser/in-page.ts";
import { nameKey, plainName, type Snapshot, takeSnapshot } from "../snapshot/snapshot.ts";
import { type ActResult, RESOLVED_WITHOUT_MODEL, type Variables } from "../types.ts";
import { actResult, failureText, type Performed, performStep } from "./act-common.ts";
import type { OperationContext } from "./context.ts";
import { isRecoverable } from "./execute.ts";
import type { ActMethod } from "./methods.ts";

// ---------- the grammar ----------

/** Roles a click may land on. */
const CLICKABLE = [
  "button",
  "link",
  "tab",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "checkbox",
  "radio",
  "switch",
  "option",
  "treeitem",
  "generic",
  "DisclosureTriangle",
];
const TEXT_FIELDS = ["textbox", "searchbox", "combobox", "spinbutton"];
const CHECKABLE = ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"];
const UNCHECKABLE = ["checkbox", "switch", "menuitemcheckbox"];
const CHOOSERS = ["combobox", "listbox"];
/** "set X to V": a text field (typed) or a <select> (chosen). */
const SETTABLE = [...TEXT_FIELDS, "listbox"];
/** "select X" with no list named: a radio, a checkbox or an option named X. */
const PICKABLE = ["radio", "checkbox", "switch", "menuitemradio", "menuitemcheckbox", "option"];
/** "scroll to X": anything with an id in the outline that a person can name. */
const SCROLL_TARGETS = [...CLICKABLE, ...TEXT_FIELDS, "heading", "image"];

const FIELD_ROLES = [...TEXT_FIELDS, "checkbox"];
const LIST_ROLES = CHOOSERS;

/** Kind words (singular; a plural "s" is accepted) and the roles each fits. */
const KINDS: Record<string, readonly string[]> = {
  button: ["button", "radio", "switch"],
  "push button": ["button"],
  "submit button": ["button"],
  "toggle button": ["button", "switch"],
  "icon button": ["button"],
  "radio button": ["radio"],
  link: ["link"],
  hyperlink: ["link"],
  tab: ["tab"],
  "menu item": ["menuitem", "menuitemcheckbox", "menuitemradio"],
  menuitem: ["menuitem", "menuitemcheckbox", "menuitemradio"],
  checkbox: ["checkbox", "menuitemcheckbox"],
  "check box": ["checkbox", "menuitemcheckbox"],
  "tick box": ["checkbox"],
  tickbox: ["checkbox"],
  radio: ["radio", "menuitemradio"],
  "radio option": ["radio", "menuitemradio"],
  option: ["radio", "option", "menuitemradio"],
  switch: ["switch", "checkbox"],
  toggle: ["switch", "checkbox"],
  field: FIELD_ROLES,
  box: FIELD_ROLES,
  input: TEXT_FIELDS,
  area: TEXT_FIELDS,
  bar: TEXT_FIELDS,
  "text field": TEXT_FIELDS,
  "text box": TEXT_FIELDS,
  textbox: TEXT_FIELDS,
  "text area": ["textbox"],
  textarea: ["textbox"],
  "text input": TEXT_FIELDS,
  "input field": TEXT_FIELDS,
  "input box": TEXT_FIELDS,
  "entry field": TEXT_FIELDS,
  "form field": TEXT_FIELDS,
  "search box": TEXT_FIELDS,
  "search field": TEXT_FIELDS,
  "search bar": TEXT_FIELDS,
  "search input": TEXT_FIELDS,
  dropdown: LIST_ROLES,
  "drop-down": LIST_ROLES,
  "drop down": LIST_ROLES,
  "dropdown list": LIST_ROLES,
  "dropdown menu": LIST_ROLES,
  "drop-down list": LIST_ROLES,
  "drop-down menu": LIST_ROLES,
  "dropdown box": LIST_ROLES,
  select: LIST_ROLES,
  "select box": LIST_ROLES,
  "select list": LIST_ROLES,
  "select menu": LIST_ROLES,
  listbox: LIST_ROLES,
  "list box": LIST_ROLES,
  combobox: LIST_ROLES,
  "combo box": LIST_ROLES,
  picker: LIST_ROLES,
  selector: LIST_ROLES,
  menu: LIST_ROLES,
  list: LIST_ROLES,
  heading: ["heading"],
  section: ["heading"],
};

/** Words for the containers an element may be named by ("the Save button in the Billing section"). */
const CONTAINER_KINDS = new Set([
  "dialog",
  "modal",
  "popup",
  "window",
  "section",
  "region",
  "panel",
  "card",
  "group",
  "fieldset",
  "form",
  "row",
  "item",
  "list item",
  "entry",
  "navigation",
  "nav",
  "menu",
  "navigation bar",
  "nav bar",
  "footer",
  "header",
  "toolbar",
  "menu bar",
]);

/** Keys "press" takes, as the keyboard knows them. */
const KEYS: Record<string, string> = {
  enter: "Enter",
  return: "Enter",
  tab: "Tab",
  escape: "Escape",
  esc: "Escape",
  space: "Space",
  spacebar: "Space",
  backspace: "Backspace",
  delete: "Delete",
  del: "Delete",
  home: "Home",
  end: "End",
  pageup: "PageUp",
  "page up": "PageUp",
  pagedown: "PageDown",
  "page down": "PageDown",
  arrowup: "ArrowUp",
  arrowdown: "ArrowDown",
  arrowleft: "ArrowLeft",
  arrowright: "ArrowRight",
  "up arrow": "ArrowUp",
  "down arrow": "ArrowDown",
  "left arrow": "ArrowLeft",
  "right arrow": "ArrowRight",
  "arrow up": "ArrowUp",
  "arrow down": "ArrowDown",
  "arrow left": "ArrowLeft",
  "arrow right": "ArrowRight",
};
const MODIFIERS: Record<string, string> = {
  control: "Control",
  ctrl: "Control",
  shift: "Shift",
  alt: "Alt",
  option: "Alt",
  meta: "Meta",
  cmd: "Meta",
  command: "Meta",
};

/**
 * The verbs, each with the shape of what follows it:
 *   target   - VERB TARGET (the method on one element)
 *   press    - press KEY [in TARGET], or press TARGET (a click)
 *   typeInto - VERB TEXT into TARGET
 *   setTo    - VERB TARGET with|to VALUE (the value may be unquoted and runs to the end)
 *   choose   - VERB OPTION from LIST, or VERB NAME (a radio, checkbox or option named so)
 *   scroll   - scroll down|up, scroll [down|up] to TARGET
 *   back     - go back
 *   open     - open URL (an http(s) address, written out)
 * Longer verb phrases come first, so that "double-click" is not read as "double" and "click".
 */
type Shape = "target" | "press" | "typeInto" | "setTo" | "choose" | "scroll" | "back" | "open";
interface Verb {
  words: readonly string[];
  shape: Shape;
  method?: TargetMethod;
  roles?: readonly string[];
}
type TargetMethod = "click" | "doubleClick" | "hover" | "check" | "uncheck" | "clear" | "toggle";
const VERBS: readonly Verb[] = [
  {
    words: ["double-click on", "double click on", "double-click", "double click", "doubleclick", "dblclick"],
    shape: "target",
    method: "doubleClick",
    roles: CLICKABLE,
  },
  {
    words: ["click into", "click inside", "click in", "focus on", "focus", "tab into", "tab to"],
    shape: "target",
    method: "click",
    roles: TEXT_FIELDS,
  },
  {
    words: ["click on", "click", "tap on", "select the link", "follow the link"],
    shape: "target",
    method: "click",
    roles: CLICKABLE,
  },
  { words: ["press on", "press", "hit", "tap", "push"], shape: "press" },
  {
    words: ["hover over", "hover on", "hover", "mouse over", "move the mouse over", "move the mouse to"],
    shape: "target",
    method: "hover",
    roles: [...CLICKABLE, ...TEXT_FIELDS, "image", "heading"],
  },
  { words: ["type in", "type", "enter", "input", "write", "put", "key in", "insert"], shape: "typeInto" },
  { words: ["fill in", "fill out", "fill", "set", "change", "update"], shape: "setTo" },
  { words: ["clear out", "clear", "empty", "erase"], shape: "target", method: "clear", roles: TEXT_FIELDS },
  { words: ["select", "choose", "pick"], shape: "choose" },
  {
    words: ["uncheck", "un-check", "untick", "un-tick", "deselect", "turn off", "disable", "switch off"],
    shape: "target",
    method: "uncheck",
    roles: UNCHECKABLE,
  },
  {
    words: ["check", "tick", "turn on", "enable", "switch on", "mark"],
    shape: "target",
    method: "check",
    roles: CHECKABLE,
  },
  { words: ["toggle", "flip"], shape: "target", method: "toggle", roles: ["switch", "checkbox", "button"] },
  { words: ["scroll"], shape: "scroll" },
  { words: ["go back", "navigate back", "back"], shape: "back" },
  { words: ["open", "go to", "navigate to", "visit", "load"], shape: "open" },
];

/** Verbs that start a new step after "and" or a comma ("push" and "hit" only begin one). */
const STEP_VERBS = VERBS.flatMap((v) => v.words).filter(
  (w) => !["push", "hit", "tap", "back", "put", "mark", "load"].includes(w),
);

/** Opening and closing quotes of every kind. */
const QUOTES: Record<string, string> = {
  '"': '"',
  "'": "'",
  "\u201c": "\u201d",
  "\u2018": "\u2019",
  "\u00ab": "\u00bb",
  "`": "`",
  "\u201e": "\u201c",
};

/** One way to read the target: a name (or none: the only one of its kind), roles, a container. */
interface Reading {
  /** The element that has the keyboard focus ("Type: hello"). */
  focused?: true;
  name?: string;
  roles: readonly string[];
  container?: { kinds?: readonly string[]; name?: string };
}

/** A target as the instruction gives it. */
interface Target {
  phrase: string;
  readings: Reading[];
}

/** One step of an explicit instruction. */
export interface ExplicitPlan {
  method:
    | Extract<
        ActMethod,
        | "click"
        | "doubleClick"
        | "hover"
        | "fill"
        | "selectOption"
        | "check"
        | "uncheck"
        | "press"
        | "scrollByPage"
        | "scrollIntoView"
      >
    | "set"
    | "pick"
    | "toggle"
    | "goBack"
    | "goto";
  /** Ways to read the target (any fits); none for a key pressed on the page, a scroll, back, goto. */
  target?: Target;
  /** The text, option, key, direction or address. */
  argument?: string;
  /** "press X" where X is also a key: the key, pressed when no element fits X. */
  key?: string;
  /** "check A, B and C": each item, when the whole phrase is no one element's name. */
  items?: Target[];
  /** Another reading of the same words ("select X in Y": an option of list Y, or X in section Y). */
  alternative?: ExplicitPlan;
}

/** Why an instruction is left to the model. */
export interface NotExplicit {
  needsModel: string;
}

/** An instruction read as steps: the explicit ones first, and the rest (if any) for the model. */
export interface ExplicitSteps {
  steps: ExplicitPlan[];
  /** The clauses from the first one that is not explicit, and why it is not. */
  rest?: { text: string; why: string };
}

/** The text inside matching quotes (the whole text), or undefined. */
function unquote(text: string): string | undefined {
  const t = text.trim();
  const close = QUOTES[t[0] ?? ""];
  if (!close || t.length < 3 || !t.endsWith(close)) return undefined;
  const inner = t.slice(1, -1);
  if (inner.includes(close) && close !== t[0]) return undefined;
  if (inner.includes(t[0]!) && close === t[0]) return undefined;
  return inner.trim() ? inner : undefined;
}

/** The instruction with quoted parts replaced by "#" of the same length (positions kept). */
function maskQuotes(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const close = QUOTES[ch];
    // An apostrophe inside a word ("Alan Turing's") is not a quote.
    const opens = close && !(ch === "'" && /\w/.test(text[i - 1] ?? ""));
    const end = opens ? text.indexOf(close, i + 1) : -1;
    if (opens && end > i) {
      out += `${ch}${"#".repeat(end - i - 1)}${close}`;
      i = end + 1;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/**
 * An unquoted value that describes a value instead of giving it ("the number of guests", "my
 * email", "next Friday", "today's date"): left to the model.
 */
const DESCRIBED =
  /^(?:the|a|an|my|your|his|her|our|their|its|this|that|these|those|some|any|same|today|tonight|tomorrow|yesterday|next|last|previous|current|whatever)\b|'s\b|\u2019s\b/i;

/** A text to type or a value to set: quoted, or one %variable% that is given; unquoted if allowed. */
function textArgument(text: string, variables: Variables | undefined, unquoted: boolean): string | undefined {
  const quoted = unquote(text);
  if (quoted !== undefined) return quoted;
  const variable = /^%([A-Za-z_][\w.-]*)%$/.exec(text);
  if (variable) return variables && Object.hasOwn(variables, variable[1]!) ? text : undefined;
  if (!unquoted || /["\u201c\u201d\u00ab\u00bb`%]/.test(text) || DESCRIBED.test(text)) return undefined;
  return text.trim() || undefined;
}

/** A key or key combination ("Enter", "Control+A", "shift+tab"), as the keyboard names it. */
function keyArgument(text: string): string | undefined {
  const plain = (unquote(text) ?? text).replace(/^the /i, "").replace(/ key$/i, "").trim();
  const parts = plain.split(/\s*\+\s*/);
  const out: string[] = [];
  for (const [i, part] of parts.entries()) {
    const lower = part.toLowerCase();
    const last = i === parts.length - 1;
    if (!last) {
      const modifier = MODIFIERS[lower];
      if (!modifier) return undefined;
      out.push(modifier);
    } else if (KEYS[lower]) out.push(KEYS[lower]);
    else if (/^f([1-9]|1[0-2])$/.test(lower)) out.push(lower.toUpperCase());
    else if (parts.length > 1 && /^[a-z0-9]$/.test(lower)) out.push(lower);
    else return undefined;
  }
  return out.join("+");
}

/** Roles of a kind word (singular or plural), if it is one. */
function kindRoles(word: string): readonly string[] | undefined {
  const lower = word.toLowerCase().trim();
  return KINDS[lower] ?? KINDS[lower.replace(/es$/, "")] ?? KINDS[lower.replace(/s$/, "")];
}

function containerKind(word: string): string | undefined {
  const lower = word.toLowerCase().trim();
  return CONTAINER_KINDS.has(lower)
    ? lower
    : CONTAINER_KINDS.has(lower.replace(/s$/, ""))
      ? lower.replace(/s$/, "")
      : undefined;
}

const ARTICLE = /^(?:the|a|an|this|that) /i;
/** Words that say "named": "the button labelled Save", "the one that says Save". */
const NAMING =
  /^(?:(?:that is |which is )?(?:named|labell?ed|called|titled|marked|saying|that says|which says|reading|with (?:the )?(?:text|label|name|title)|with) )/i;

/**
 * The ways to read a target phrase: a name (quoted or plain), with a kind word before or after
 * it ("the Sign in button", "button ONE", "the link labelled Home"), a kind word alone ("the
 * button": the only one of its kind), and a container ("the Save button in the Billing section",
 * "Edit in the row for Grace Hopper", "the button in the dialog labelled Cancel"). Every reading
 * is tried; together they must fit exactly one element.
 */
function readTarget(phrase: string, verbRoles: readonly string[]): Target | undefined {
  const text = phrase.trim();
  if (!text) return undefined;
  const readings: Reading[] = [];
  const add = (reading: Reading) => {
    const roles = reading.roles.filter((r) => verbRoles.includes(r));
    if (roles.length && (reading.name === undefined || reading.name.trim()))
      readings.push({ ...reading, roles });
  };
  for (const r of coreReadings(text)) add(r);
  // A container after the element: "X in|inside|within|under|for|from|of|on C".
  const masked = maskQuotes(text);
  for (const m of masked.matchAll(/ (?:in|inside|within|under|for|from|of|on|in the row for) /gi)) {
    const left = text.slice(0, m.index);
    const right = text.slice(m.index + m[0].length);
    const leftKind = kindRoles(left.replace(ARTICLE, ""));
    for (const container of readContainer(right)) {
      for (const r of coreReadings(left)) add({ ...r, container });
    }
    // "the button in the dialog labelled Cancel": the name after the container.
    if (leftKind) {
      const naming = / (?:named|labell?ed|called|titled|saying|that says) /i.exec(maskQuotes(right));
      if (naming) {
        const name = right.slice(naming.index + naming[0].length);
        for (const container of readContainer(right.slice(0, naming.index)))
          add({ name: unquote(name) ?? name, roles: leftKind, container });
      }
    }
  }
  return readings.length ? { phrase: text, readings } : undefined;
}

/** Readings of a target with no container. */
function coreReadings(phrase: string): Reading[] {
  const out: Reading[] = [];
  let rest = phrase
    .trim()
    .replace(
      /^(?:the )?one (?=(?:named|labell?ed|called|titled|that says|saying|which says|with) )/i,
      "the ",
    );
  const article = ARTICLE.exec(rest);
  if (article) {
    // "the" may be part of a name ("The End").
    if (!/[#]/.test(maskQuotes(rest)) && !unquote(rest)) out.push({ name: rest, roles: ALL_ROLES });
    rest = rest.slice(article[0].length);
  }
  const naming = NAMING.exec(rest);
  if (naming) return nameReadings(rest.slice(naming[0].length), undefined, out);
  const quoted = unquote(rest);
  if (quoted !== undefined) return [...out, { name: quoted, roles: ALL_ROLES }];
  // "the button": the only one of its kind (with an article: "click Button" is a name).
  const kindOnly = article ? kindRoles(rest) : undefined;
  if (kindOnly) out.push({ roles: kindOnly });
  const masked = maskQuotes(rest);
  // `"Name" kind`
  const quotedFirst = /^(["'\u201c\u2018\u00ab`\u201e])(#+)(["'\u201d\u2019\u00bb`\u201c]) (.+)$/.exec(
    masked,
  );
  if (quotedFirst) {
    const roles = kindRoles(rest.slice(quotedFirst[0].length - quotedFirst[4]!.length));
    const name = unquote(rest.slice(0, quotedFirst[1]!.length + quotedFirst[2]!.length + 1));
    if (roles && name !== undefined) out.push({ name, roles });
    return out;
  }
  // `kind "Name"`, `kind named Name`, `kind Name` (kinds of up to three words)
  const words = rest.split(" ");
  for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
    const roles = kindRoles(words.slice(0, n).join(" "));
    if (!roles) continue;
    const after = words.slice(n).join(" ");
    const named = NAMING.exec(after);
    nameReadings(named ? after.slice(named[0].length) : after, roles, out);
    break;
  }
  if (/["\u201c\u201d\u00ab\u00bb`#]/.test(masked)) return out;
  out.push({ name: rest, roles: ALL_ROLES });
  // A trailing kind word ("Sign in button", "Email field", "Country drop-down list").
  for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
    const roles = kindRoles(words.slice(-n).join(" "));
    if (roles) {
      out.push({ name: words.slice(0, -n).join(" "), roles });
      break;
    }
  }
  return out;
}

const ALL_ROLES = [...new Set([...CLICKABLE, ...TEXT_FIELDS, ...SETTABLE, ...PICKABLE, ...SCROLL_TARGETS])];

function nameReadings(text: string, roles: readonly string[] | undefined, out: Reading[]): Reading[] {
  const name = unquote(text) ?? (/["\u201c\u201d\u00ab\u00bb`]/.test(text) ? undefined : text.trim());
  if (name) out.push({ name, roles: roles ?? ALL_ROLES });
  return out;
}

/** Readings of a container phrase: "the Billing section", "the dialog", "row 3", "Ada's row". */
function readContainer(phrase: string): { kinds?: readonly string[]; name?: string }[] {
  let text = phrase.trim().replace(ARTICLE, "");
  if (!text) return [];
  const out: { kinds?: readonly string[]; name?: string }[] = [];
  const quoted = unquote(text);
  if (quoted !== undefined) return [{ name: quoted }];
  const alone = containerKind(text);
  if (alone) return [{ kinds: [alone] }];
  const words = text.split(" ");
  for (let n = Math.min(2, words.length - 1); n >= 1; n--) {
    // "dialog labelled X", "row for X", "row 3"
    const lead = containerKind(words.slice(0, n).join(" "));
    if (lead) {
      let name = words.slice(n).join(" ");
      name = name.replace(/^(?:named|labell?ed|called|titled|for|of|about) /i, "");
      out.push({ kinds: [lead], name: unquote(name) ?? name });
    }
    // "X section", "X's row"
    const tail = containerKind(words.slice(-n).join(" "));
    if (tail) {
      text = words
        .slice(0, -n)
        .join(" ")
        .replace(/'s$|\u2019s$/, "");
      out.push({ kinds: [tail], name: unquote(text) ?? text });
    }
  }
  if (!/["\u201c\u201d\u00ab\u00bb`]/.test(phrase)) out.push({ name: phrase.trim().replace(ARTICLE, "") });
  return out.filter((c) => c.name === undefined || c.name.trim());
}

/** Words that make a clause more than one plain step (a condition, a repeat). */
const NOT_PLAIN = /\b(?:until|unless|if|twice|times|again|whichever|whatever)\b|;/i;

/**
 * Reads an instruction as explicit steps: the clauses it is made of ("A and B", "A, then B"),
 * each read against the verb table, up to the first one that is not explicit.
 */
export function parseExplicitSteps(instruction: string, variables?: Variables): ExplicitSteps {
  const text = normalise(instruction);
  const notPlain = "it is not a plain instruction naming one element";
  if (!text || text.length > 300) return { steps: [], rest: { text: instruction, why: notPlain } };
  const clauses = splitClauses(text);
  const steps: ExplicitPlan[] = [];
  let previousVerb: Verb | undefined;
  for (const [i, clause] of clauses.entries()) {
    let own = clause;
    // "Type 'Paris' into From and 'Rome' into To": the verb carries over to a quoted text.
    if (previousVerb?.shape === "typeInto" && QUOTES[clause[0] ?? ""])
      own = `${previousVerb.words.at(-1)} ${clause}`;
    const read = parseClause(own, variables);
    if ("needsModel" in read) {
      return { steps, rest: { text: clauses.slice(i).join(", then "), why: read.needsModel } };
    }
    steps.push(read.plan);
    previousVerb = read.verb;
  }
  return { steps };
}

/** The one explicit step of an instruction, or why it is not one (kept for callers of one step). */
export function parseExplicit(instruction: string, variables?: Variables): ExplicitPlan | NotExplicit {
  const read = parseExplicitSteps(instruction, variables);
  if (read.rest) return { needsModel: read.rest.why };
  if (read.steps.length !== 1) return { needsModel: "it has several steps" };
  return read.steps[0]!;
}

function normalise(instruction: string): string {
  return instruction
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^(?:please|kindly|now|then|next|and|ok|okay),? /i, "")
    .replace(/(?:,? please|,? thanks|,? thank you)?\s*[.!]*$/i, "")
    .replace(/^(?:can|could|would) you (?:please )?(.*)\?$/i, "$1")
    .trim();
}

/** Splits at "then", ";", and at "and" or a comma before a verb (or before a quoted text). */
function splitClauses(text: string): string[] {
  const masked = maskQuotes(text);
  const verbs = STEP_VERBS.map((w) => w.replace(/[-]/g, "\\-")).join("|");
  const at = new RegExp(
    `(?:,? (?:and )?then |; |,? and (?=(?:${verbs}) )|, (?=(?:${verbs}) )| and (?=["'\u201c\u2018\u00ab]))`,
    "gi",
  );
  const out: string[] = [];
  let from = 0;
  for (const m of masked.matchAll(at)) {
    out.push(text.slice(from, m.index).trim());
    from = m.index + m[0].length;
  }
  out.push(text.slice(from).trim());
  return out.filter((c) => c);
}

function startsWithVerb(clause: string): { verb: Verb; rest: string } | undefined {
  const lower = clause.toLowerCase();
  let best: { verb: Verb; rest: string; length: number } | undefined;
  for (const verb of VERBS) {
    for (const word of verb.words) {
      if (
        (lower === word || lower.startsWith(`${word} `) || lower.startsWith(`${word}:`)) &&
        word.length > (best?.length ?? 0)
      )
        best = { verb, rest: clause.slice(word.length).replace(/^:?\s*/, ""), length: word.length };
    }
  }
  return best;
}

/** One clause: a verb from the table and what its shape takes. */
function parseClause(
  clause: string,
  variables: Variables | undefined,
): { plan: ExplicitPlan; verb: Verb } | NotExplicit {
  const notPlain = { needsModel: "it is not a plain instruction naming one element" };
  // Conditions and repeats need judgement. Quoted names are exempt (a quoted name may say anything).
  if (NOT_PLAIN.test(maskQuotes(clause).replace(/["'\u201c\u2018\u00ab`]#+["'\u201d\u2019\u00bb`]/g, '""')))
    return notPlain;
  const start = startsWithVerb(clause);
  if (!start) return notPlain;
  const { verb, rest } = start;
  const done = (plan: ExplicitPlan | undefined) => (plan ? { plan, verb } : notPlain);
  const on = (
    method: ExplicitPlan["method"],
    phrase: string,
    roles: readonly string[],
    extra: Partial<ExplicitPlan> = {},
  ) => {
    const target = readTarget(phrase, roles);
    return target ? ({ method, target, ...extra } as ExplicitPlan) : undefined;
  };
  const split = (separators: string, text = rest) => {
    const m = new RegExp(` (?:${separators}) `, "i").exec(maskQuotes(text));
    return m ? [text.slice(0, m.index), text.slice(m.index + m[0].length)] : undefined;
  };
  switch (verb.shape) {
    case "target": {
      if (verb.method === "clear") return done(on("fill", rest, TEXT_FIELDS, { argument: "" }));
      const method = verb.method === "toggle" ? "toggle" : verb.method!;
      const plan = on(method, rest, verb.roles!);
      if (plan && (method === "check" || method === "uncheck")) plan.items = listItems(rest, verb.roles!);
      return done(plan);
    }
    case "press": {
      const parts = split("in|on|into|inside");
      const keyAlone = keyArgument(rest);
      if (parts) {
        const key = keyArgument(parts[0]!);
        if (key) return done(on("press", parts[1]!, [...TEXT_FIELDS, ...CLICKABLE], { argument: key }));
      }
      if (keyAlone && /\+/.test(keyAlone)) return done({ method: "press", argument: keyAlone });
      // "press Delete": the key, unless a button is named so (then it is not plain).
      const click = on("click", rest, CLICKABLE);
      if (keyAlone)
        return done(click ? { ...click, key: keyAlone } : { method: "press", argument: keyAlone });
      return done(click);
    }
    case "typeInto": {
      const parts = split("into|in|in to|inside|on|as");
      if (!parts) {
        // "Type: hello world", "type 'hello'": into the field that has the focus.
        const value = /^(?:type|enter|input|write):/i.test(clause)
          ? textArgument(rest, variables, true)
          : textArgument(rest, variables, false);
        if (value === undefined) return { needsModel: "it does not say which field to type into" };
        return done({
          method: "fill",
          argument: value,
          target: { phrase: "the focused field", readings: [{ focused: true, roles: TEXT_FIELDS }] },
        });
      }
      const value = textArgument(parts[0]!, variables, false);
      if (value === undefined)
        return { needsModel: "the text to type is neither quoted nor a %variable% that is given" };
      return done(on("fill", parts[1]!, TEXT_FIELDS, { argument: value }));
    }
    case "setTo": {
      const parts = split("with|to|as");
      if (!parts) return notPlain;
      const value = textArgument(parts[1]!, variables, true);
      if (value === undefined)
        return { needsModel: "the value is neither quoted, written out, nor a %variable% that is given" };
      return done(on("set", parts[0]!, SETTABLE, { argument: value }));
    }
    case "choose": {
      const parts = split("from|in|on|of|for|as");
      const pick = on("pick", rest, PICKABLE);
      if (pick) pick.items = listItems(rest, PICKABLE);
      if (parts) {
        const option =
          unquote(parts[0]!) ??
          (/["\u201c\u201d\u00ab\u00bb`]/.test(parts[0]!) ? undefined : parts[0]!.replace(/^the /i, ""));
        const plan = option ? on("selectOption", parts[1]!, CHOOSERS, { argument: option }) : undefined;
        if (plan) return done(pick ? { ...plan, alternative: pick } : plan);
      }
      return done(pick);
    }
    case "scroll": {
      const direction = /^(down|up)\b\s*/i.exec(rest);
      const after = direction ? rest.slice(direction[0].length) : rest;
      if (!after) return done({ method: "scrollByPage", argument: (direction?.[1] ?? "down").toLowerCase() });
      const to = /^(?:to|until) /i.exec(after);
      if (!to) return notPlain;
      return done(on("scrollIntoView", after.slice(to[0].length), SCROLL_TARGETS));
    }
    case "back":
      return rest === "" || /^(?:to the previous page|a page|one page)$/i.test(rest)
        ? done({ method: "goBack" })
        : notPlain;
    case "open": {
      const url = unquote(rest) ?? rest;
      return /^https?:\/\/\S+$/i.test(url) ? done({ method: "goto", argument: url }) : notPlain;
    }
  }
}

/** "A, B and C" as separate targets (each must fit one element), or undefined for one name. */
function listItems(phrase: string, roles: readonly string[]): Target[] | undefined {
  const masked = maskQuotes(phrase);
  const cuts = [...masked.matchAll(/, and |, | and /g)];
  if (!cuts.length) return undefined;
  const items: Target[] = [];
  let from = 0;
  for (const m of [...cuts, undefined]) {
    const item = phrase.slice(from, m ? m.index : undefined);
    const target = readTarget(item, roles);
    if (!target) return undefined;
    items.push(target);
    if (m) from = m.index + m[0].length;
  }
  return items;
}

// ---------- resolving and acting ----------

/** Names compared as a person reads them: case, spacing, and a trailing ":" or "*" aside. */
export function sameName(a: string, b: string): boolean {
  return nameKey(a) === nameKey(b);
}

/** The outcome of trying an instruction without a model. */
export type ExplicitOutcome =
  /** Done (or tried and failed on the one element that fits): the result to return. */
  | { resolved: true; result: ActResult; failed: boolean }
  /**
   * Not (or not wholly) explicit: the model decides. `done` lists the steps already carried out
   * (the clauses before the first one that is not explicit) and `rest` the part still to do.
   */
  | {
      resolved: false;
      reason: string;
      done: Performed[];
      rest: string;
      /**
       * The page's outline as the refusal read it, whole, when it read one: the model's first
       * look reuses it instead of reading the page again (so that a refusal costs the model path
       * almost nothing).
       */
      outline?: Snapshot;
    };

/** More candidates than this for one target: refused without checking each (it is not unique). */
const MAX_CANDIDATES = 40;

/**
 * Tries `instruction` without a model: reads it as steps, and carries them out in turn while each
 * one fits exactly one visible element; the first that does not is left, with the rest, to the
 * model.
 */
export async function actExplicitly(
  ctx: OperationContext,
  instruction: string,
  variables: Variables | undefined,
): Promise<ExplicitOutcome> {
  const read = parseExplicitSteps(instruction, variables);
  const performed: Performed[] = [];
  const handOff = (reason: string, rest: string, outline?: Snapshot): ExplicitOutcome => ({
    resolved: false,
    reason,
    done: performed,
    rest,
    ...(outline ? { outline } : {}),
  });
  for (let [i, plan] of read.steps.entries()) {
    const restText = () =>
      (read.rest
        ? [...read.steps.slice(i).map(describePlan), read.rest.text]
        : read.steps.slice(i).map(describePlan)
      ).join(", then ");
    let on: { snapshot: Snapshot; ids: number[] } | undefined;
    // With a model to hand a refusal to, the page's outline is read at once: the model's first look
    // reuses it. With none (or for "press X", which a key may fit), a quick look for the step's
    // names first spares reading the outline when none appears.
    const skim = !ctx.caller.canCall(ctx.model) || plan.key !== undefined;
    if (plan.target && skim && !(await mentioned(ctx, plan))) {
      // No name the step gives appears anywhere on the page: nothing can fit, and the page's
      // outline is not read (a refusal then costs one small call per frame).
      if (!plan.key) return handOff(notOne(0, plan.target.phrase), restText());
      plan = { method: "press", argument: plan.key };
    } else if (plan.target) {
      // The elements of the roles the step may mean are listed with the capture, in the same call
      // per frame: a refusal then adds no call before the model's first look (which reuses this
      // outline), only the listing's in-page work.
      const snapshot = await takeSnapshot(ctx.page, {
        tokenBudget: false,
        domSettleTimeout: ctx.domSettleTimeout,
        deadline: ctx.deadline,
        lookup: lookupOf(plan),
      });
      ctx.deadline.check();
      let found = await resolvePlan(snapshot, plan);
      if (plan.alternative) {
        // Two readings of the same words: the one that fits, if only one does.
        const other = await resolvePlan(snapshot, plan.alternative);
        if (typeof found === "string" && typeof other !== "string") {
          plan = plan.alternative;
          found = other;
        } else if (typeof found !== "string" && typeof other !== "string") {
          found = `"${instruction}" can be read two ways, and both fit the page`;
        }
      }
      if (typeof found === "string") return handOff(found, restText(), snapshot);
      on = { snapshot, ids: found };
    }
    const description = describePlan(plan);
    try {
      if (plan.key && on && on.ids.length === 0) {
        // "press Delete" resolved to no element: the key.
        performed.push(
          await perform(ctx, { method: "press", argument: plan.key }, undefined, description, variables),
        );
      } else if (on && on.ids.length > 1) {
        for (const id of on.ids)
          performed.push(await perform(ctx, plan, { snapshot: on.snapshot, id }, description, variables));
      } else {
        performed.push(
          await perform(
            ctx,
            plan,
            on ? { snapshot: on.snapshot, id: on.ids[0]! } : undefined,
            description,
            variables,
          ),
        );
      }
    } catch (error) {
      if (error instanceof ExplicitNotApplicable) return handOff(error.message, restText());
      if (!isRecoverable(error)) throw error;
      return {
        resolved: true,
        failed: true,
        result: actResult(false, `Could not ${description}: ${failureText(error)}`, instruction, performed),
      };
    }
  }
  if (read.rest) return handOff(read.rest.why, read.rest.text);
  return { resolved: true, failed: false, result: done(instruction, performed) };
}

function done(instruction: string, performed: Performed[]): ActResult {
  const result = actResult(
    true,
    `Done without a model (explicit instruction): ${performed.map((p) => p.action.description).join(", then ")}.`,
    instruction,
    performed,
  );
  Object.defineProperty(result, RESOLVED_WITHOUT_MODEL, { value: true, enumerable: true });
  return result;
}

/** Every target of a step: its own, its list items', and those of the other reading of its words. */
function targetsOf(plan: ExplicitPlan): Target[] {
  return [plan, plan.alternative]
    .flatMap((p) => (p ? [p.target, ...(p.items ?? [])] : []))
    .filter((t): t is Target => t !== undefined);
}

/**
 * What fitting() looks elements up by, for all of a step's targets at once: the roles any reading
 * fits, and the names they give (none when a reading gives none: "the button").
 */
function lookupOf(plan: ExplicitPlan): { roles: string[]; names?: string[] } {
  return readingsLookup(targetsOf(plan).flatMap((t) => t.readings));
}

function readingsLookup(readings: readonly Reading[]): { roles: string[]; names?: string[] } {
  const roles = [...new Set(readings.flatMap((r) => r.roles))];
  if (readings.some((r) => r.name === undefined)) return { roles };
  return { roles, names: readings.map((r) => r.name!) };
}

/**
 * Whether a name the step gives (any reading, any list item, either reading of the words)
 * appears on the page at all (see the in-page `mentions`). True when a reading has no name ("the
 * button": the only one of its kind) or a frame cannot be asked.
 */
async function mentioned(ctx: OperationContext, plan: ExplicitPlan): Promise<boolean> {
  const readings = targetsOf(plan).flatMap((t) => t.readings);
  if (readings.some((r) => r.name === undefined)) return true;
  const names = [...new Set(readings.map((r) => nameKey(r.name!)))].filter((n) => n);
  if (names.length === 0) return true;
  const answers = await Promise.all(
    ctx.page.frames().map((frame) => frame.invoke(domRuntime, "mentions", names).catch(() => true)),
  );
  ctx.deadline.check();
  return answers.some(Boolean);
}

/** The element (or, for a list, the elements) a step acts on, or why there is not one. */
async function resolvePlan(snapshot: Snapshot, plan: ExplicitPlan): Promise<number[] | string> {
  const target = plan.target!;
  const whole = await fitting(snapshot, target);
  if (plan.key) {
    // "press X" when X is a key: only when no element is named X.
    return whole.length === 0
      ? []
      : `"${target.phrase}" is both a key and the name of an element on the page`;
  }
  if (plan.items && whole.length !== 1) {
    const ids: number[] = [];
    for (const item of plan.items) {
      const one = await fitting(snapshot, item);
      if (one.length !== 1 || ids.includes(one[0]!)) return notOne(one.length, item.phrase);
      ids.push(one[0]!);
    }
    if (whole.length === 0) return ids;
  } else if (plan.items && whole.length === 1) {
    // The whole phrase is one element's name: each item must then not be another's.
    for (const item of plan.items) {
      const one = await fitting(snapshot, item);
      if (one.some((id) => id !== whole[0]))
        return `"${target.phrase}" is one element's name and also a list of others`;
    }
  }
  if (whole.length !== 1) return notOne(whole.length, target.phrase);
  return whole;
}

function notOne(count: number, phrase: string): string {
  return count === 0
    ? `no visible element on the page is named "${phrase}" with a role that fits`
    : `${count} visible elements on the page fit "${phrase}"`;
}

/**
 * The ids of the visible elements that fit any reading (role, name, container); where several
 * fit ignoring case and exactly one has the name exactly as written, that one.
 */
async function fitting(snapshot: Snapshot, target: Target): Promise<number[]> {
  // Only the elements of a role some reading fits, by what the outline recorded (not every
  // element described: on a page of thousands that is most of a refusal's cost).
  const { roles, names } = readingsLookup(target.readings);
  const refs = await snapshot.withRoles(roles, names);
  if (refs.length === 0) return [];
  const candidates = refs
    .map((ref) => ({
      ref,
      readings: target.readings.filter(
        (r) => r.roles.includes(ref.role) && (r.name === undefined || sameName(ref.name, r.name)),
      ),
    }))
    .filter((c) => c.readings.length > 0);
  if (candidates.length > MAX_CANDIDATES) return candidates.map((c) => c.ref.id);
  const seen: typeof candidates = [];
  for (const candidate of candidates) {
    const { frame, handle } = await snapshot.handle(candidate.ref.id);
    try {
      const place = await frame.invoke(domRuntime, "explicitPlace", handle);
      if (!place.reachable) continue;
      const readings = candidate.readings.filter(
        (r) => (!r.container || inContainer(place.containers, r.container)) && (!r.focused || place.focused),
      );
      if (readings.length) seen.push({ ref: candidate.ref, readings });
    } finally {
      void frame.release(handle);
    }
  }
  if (seen.length > 1) {
    const exact = seen.filter((c) =>
      c.readings.some((r) => r.name !== undefined && plainName(c.ref.name) === plainName(r.name)),
    );
    if (exact.length === 1) return [exact[0]!.ref.id];
  }
  return seen.map((c) => c.ref.id);
}

function inContainer(
  containers: { kinds: string[]; names: string[] }[],
  wanted: { kinds?: readonly string[]; name?: string },
): boolean {
  return containers.some(
    (c) =>
      (!wanted.kinds || wanted.kinds.some((k) => c.kinds.includes(k))) &&
      (wanted.name === undefined || c.names.some((n) => sameName(n, wanted.name!))),
  );
}

async function perform(
  ctx: OperationContext,
  plan: ExplicitPlan,
  on: { snapshot: Snapshot; id: number } | undefined,
  description: string,
  variables: Variables | undefined,
): Promise<Performed> {
  if (plan.method === "goBack" || plan.method === "goto") {
    if (plan.method === "goBack") {
      if ((await ctx.page.goBack()) === null)
        throw new ExplicitNotApplicable("there is no previous page to go back to");
    } else {
      const url = new URL(plan.argument!);
      if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new ExplicitNotApplicable("only http and https addresses are opened");
      await ctx.page.goto(url.href);
    }
    const args = plan.argument !== undefined ? [plan.argument] : [];
    return {
      action: { selector: "", description, method: plan.method, arguments: args },
      step: {
        selector: "",
        method: plan.method as ActMethod,
        arguments: args,
        description,
        role: "",
        name: "",
      },
    };
  }
  // The element of the chosen id, found once: recorded and acted on by performStep, its XPath
  // recorded.
  const target = on ? await on.snapshot.target(on.id) : undefined;
  try {
    const tag = target && on ? (await on.snapshot.element(on.id)).tag : "";
    const method = target ? methodFor(plan, target.role, tag) : (plan.method as ActMethod);
    const selector = target?.xpath ?? "";
    const role = target?.role ?? "";
    const name = target ? ctx.redactor.mask(target.name) : "";
    const args =
      plan.argument !== undefined && method !== "click" && method !== "check" ? [plan.argument] : [];
    const stepTarget = target ? { element: target, selector } : undefined;
    const step = await performStep(ctx, stepTarget, method, args, variables, { description, role, name });
    return { action: { selector, description, method, arguments: args }, step };
  } finally {
    releaseTarget(target);
  }
}

/** The act method for a step on an element of this role and tag. */
function methodFor(plan: ExplicitPlan, role: string, tag: string): ActMethod {
  switch (plan.method) {
    case "selectOption":
      // A custom dropdown opens and then needs its option found: not a single explicit step.
      if (tag !== "select")
        throw new ExplicitNotApplicable(`"${plan.target?.phrase}" is not a <select> (a custom dropdown)`);
      return "selectOption";
    case "set":
      if (tag === "select") return "selectOption";
      if (TEXT_FIELDS.includes(role) && tag !== "div") return "fill";
      throw new ExplicitNotApplicable(`"${plan.target?.phrase}" is neither a text field nor a <select>`);
    case "pick":
      return role === "option" ? "click" : "check";
    case "toggle":
      return "click";
    case "goBack":
    case "goto":
      throw new ExplicitNotApplicable("not a step on an element");
    default:
      return plan.method;
  }
}

/** Thrown (and caught) when the one element that fits cannot take the step in one go. */
class ExplicitNotApplicable extends Error {}

function describePlan(plan: ExplicitPlan): string {
  const target = plan.target ? plan.target.phrase.replace(/^(?:the|a|an) /i, "the ") : "";
  switch (plan.method) {
    case "press":
      if (plan.key) return `press ${target}`;
      return plan.target ? `press ${plan.argument} in ${target}` : `press ${plan.argument}`;
    case "fill":
      return plan.argument ? `type ${quoteText(plan.argument)} into ${target}` : `clear ${target}`;
    case "set":
      return `set ${target} to ${quoteText(plan.argument ?? "")}`;
    case "selectOption":
      return `select ${quoteText(plan.argument ?? "")} from ${target}`;
    case "pick":
      return `select ${target}`;
    case "doubleClick":
      return `double-click ${target}`;
    case "scrollByPage":
      return `scroll ${plan.argument}`;
    case "scrollIntoView":
      return `scroll to ${target}`;
    case "goBack":
      return "go back";
    case "goto":
      return `open ${plan.argument}`;
    default:
      return `${plan.method} ${target}`;
  }
}

function quoteText(text: string): string {
  return /^%[A-Za-z_][\w.-]*%$/.test(text) ? text : JSON.stringify(text);
}
