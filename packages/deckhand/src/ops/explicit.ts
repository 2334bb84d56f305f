// Explicit instructions: act without a model when the instruction says plainly what to do and to
// which element ("click the Sign in button", "type %email% into the Email field", "select Germany
// from the Country dropdown", "check Remember me", "press Enter").
//
// Two halves. parseExplicit() reads the instruction against a small grammar: one verb, one target
// named by its accessible name (quoted or plain, with an optional kind word such as "button" or
// "field"), and for typing a quoted text or a %variable%. Anything else (two actions, a position,
// a condition, a description instead of a name, unquoted text to type) is not explicit. Then
// resolveExplicit() reads the whole page (every frame, no token budget) and looks for elements
// whose role fits the verb (and the kind word) and whose accessible name is exactly the name
// given (case and spacing aside). Only when exactly one such element can be seen is it acted on;
// none or several means the model decides (or, with no model, MissingLLMConfigurationError).
//
// The rule is "never a wrong element": a plain instruction whose target is not unique costs a
// model call, never a guess.

import { domRuntime } from "../browser/in-page.ts";
import { type Snapshot, takeSnapshot } from "../snapshot/snapshot.ts";
import { type ActResult, RESOLVED_WITHOUT_MODEL, type Variables } from "../types.ts";
import { actResult, failureText, type Performed } from "./act-common.ts";
import type { OperationContext } from "./context.ts";
import { isRecoverable, runStep } from "./execute.ts";
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

/** Kind words an instruction may put before or after a name, and the roles each allows. */
const KINDS: [RegExp, string[]][] = [
  [/^(?:push |toggle |radio |submit )?buttons?$/, ["button", "radio", "switch"]],
  [/^(?:hyper)?links?$/, ["link"]],
  [/^tabs?$/, ["tab"]],
  [/^menu ?items?$/, ["menuitem", "menuitemcheckbox", "menuitemradio"]],
  [/^check ?box(?:es)?$/, ["checkbox", "menuitemcheckbox"]],
  [/^(?:radio|radio option|option)$/, ["radio", "option", "menuitemradio"]],
  [/^(?:switch|toggle)$/, ["switch", "checkbox"]],
  [
    /^(?:(?:text |input |search |entry |form )?(?:field|box|input|area|bar)|textbox|textarea)$/,
    ["textbox", "searchbox", "combobox", "spinbutton", "checkbox"],
  ],
  [
    /^(?:drop[- ]?down(?: list| menu| box)?|select(?: box| list| menu)?|list ?box|combo ?box|picker|selector|menu|list)$/,
    ["combobox", "listbox"],
  ],
];

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

/** One way to read the target: a name, and the roles it may have. */
interface Reading {
  name: string;
  roles: readonly string[];
}

/** What an explicit instruction asks for. */
export interface ExplicitPlan {
  method: Extract<
    ActMethod,
    "click" | "doubleClick" | "hover" | "fill" | "selectOption" | "check" | "uncheck" | "press"
  >;
  /** Ways to read the target (any fits); none for a key pressed on the page. */
  target?: { phrase: string; readings: Reading[] };
  /** The text, option or key. */
  argument?: string;
}

/** Why an instruction is left to the model. */
export interface NotExplicit {
  needsModel: string;
}

const QUOTED = /^(?:"([^"]+)"|'([^']+)'|\u201c([^\u201d]+)\u201d|\u2018([^\u2019]+)\u2019|`([^`]+)`)$/;

/** The text inside matching quotes, or undefined. */
function unquote(text: string): string | undefined {
  const m = QUOTED.exec(text);
  return m ? m.slice(1).find((g) => g !== undefined) : undefined;
}

/** A text to type: quoted, or one %variable% that is given. */
function textArgument(text: string, variables: Variables | undefined): string | undefined {
  const quoted = unquote(text);
  if (quoted !== undefined) return quoted;
  const variable = /^%([A-Za-z_][\w.-]*)%$/.exec(text);
  if (variable && variables && Object.hasOwn(variables, variable[1]!)) return text;
  return undefined;
}

/** A key or key combination ("Enter", "Control+A", "shift+tab"), as the keyboard names it. */
function keyArgument(text: string): string | undefined {
  const plain = text.replace(/^the /i, "").replace(/ key$/i, "").trim();
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

/** Roles of a kind word, if it is one. */
function kindRoles(word: string): string[] | undefined {
  const lower = word.toLowerCase();
  return KINDS.find(([pattern]) => pattern.test(lower))?.[1];
}

/**
 * The ways to read a target phrase: `"Name"`, `the "Name" button`, `the button "Name"`, `the
 * button labelled Name`, `Name button`, `Name`. Each reading is tried; the readings must together
 * fit exactly one element.
 */
function readTarget(phrase: string, verbRoles: readonly string[]): Reading[] | undefined {
  let rest = phrase.trim();
  if (!rest) return undefined;
  const readings: Reading[] = [];
  const add = (name: string, roles: readonly string[]) => {
    const fitting = roles.filter((r) => verbRoles.includes(r));
    if (name.trim() && fitting.length) readings.push({ name: name.trim(), roles: fitting });
  };
  const article = /^(?:the|a|an) /i.exec(rest);
  // "the" may be part of a name ("The End"): the whole phrase is one more reading.
  if (article) {
    const whole = rest;
    rest = rest.slice(article[0].length);
    if (!unquote(rest) && !/["'\u201c\u201d\u2018\u2019`]/.test(rest)) add(whole, verbRoles);
  }

  const quoted = unquote(rest);
  if (quoted !== undefined) {
    add(quoted, verbRoles);
    return readings;
  }
  // `"Name" button`, `button "Name"`, `button labelled Name`
  const quotedThenKind = /^(".+"|'.+'|\u201c.+\u201d|\u2018.+\u2019|`.+`) ([a-z][a-z -]*)$/i.exec(rest);
  if (quotedThenKind) {
    const roles = kindRoles(quotedThenKind[2]!);
    const name = unquote(quotedThenKind[1]!);
    if (!roles || name === undefined) return undefined;
    add(name, roles);
    return readings;
  }
  const kindThenName =
    /^([a-z][a-z -]*?) (?:(?:named|labell?ed|called|titled|saying|with (?:the )?(?:text|label|name)) )?(".+"|'.+'|\u201c.+\u201d|\u2018.+\u2019|`.+`)$/i.exec(
      rest,
    ) ?? /^([a-z][a-z -]*?) (?:named|labell?ed|called|titled|saying) (.+)$/i.exec(rest);
  if (kindThenName) {
    const roles = kindRoles(kindThenName[1]!);
    const name = unquote(kindThenName[2]!) ?? kindThenName[2]!;
    if (roles) {
      add(name, roles);
      return readings;
    }
  }
  // Quotes anywhere else: not a plain name.
  if (/["\u201c\u201d`]/.test(rest)) return undefined;

  add(rest, verbRoles);
  // A trailing kind word ("Sign in button", "Email field", "Country drop-down list").
  const words = rest.split(" ");
  for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
    const roles = kindRoles(words.slice(-n).join(" "));
    if (roles) {
      add(words.slice(0, -n).join(" "), roles);
      break;
    }
  }
  return readings.length ? readings : undefined;
}

/**
 * Words that make an instruction more than one plain step (a sequence, a condition, a repeat).
 * Positions and descriptions ("the first Save button", "the cheapest plan") need no list: they
 * are not an element's name, so nothing matches them exactly.
 */
const NOT_PLAIN = /\b(?:then|until|unless|if|twice|times|again)\b|;/i;

/**
 * Reads an instruction as an explicit one, or says why it is not. Only the shapes listed in the
 * module comment are explicit; the name must then match an element exactly (resolveExplicit).
 */
export function parseExplicit(instruction: string, variables?: Variables): ExplicitPlan | NotExplicit {
  const text = instruction
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\s*[.!]$/, "");
  const notPlain = { needsModel: "it is not a plain instruction naming one element" };
  if (!text || text.length > 200) return notPlain;
  // Conditions, sequences and positions need judgement. Quoted names are exempt (a quoted name
  // may say anything), so the check runs on the instruction with its quoted parts taken out.
  const unquoted = text.replace(/"[^"]*"|\u201c[^\u201d]*\u201d|`[^`]*`|(?<!\w)'[^']*'(?!\w)/g, '""');
  if (NOT_PLAIN.test(unquoted)) return notPlain;
  const typed = (value: string | undefined, phrase: string): ExplicitPlan | NotExplicit =>
    value === undefined
      ? { needsModel: "the text to type is neither quoted nor a %variable% that is given" }
      : target("fill", phrase, TEXT_FIELDS, value);
  const rules: [RegExp, (m: string[]) => ExplicitPlan | NotExplicit | undefined][] = [
    // press a key (on the page, or in/on an element); "press the Add button" is a click (below)
    [
      /^(?:press|hit|tap|push) (.+?)(?: (?:in|on|into) (.+))?$/i,
      (m) => {
        const key = keyArgument(m[1]!);
        if (!key) return undefined;
        if (!m[2]) return { method: "press", argument: key };
        return target("press", m[2], [...TEXT_FIELDS, ...CLICKABLE], key);
      },
    ],
    [/^double[- ]?click(?: on)? (.+)$/i, (m) => target("doubleClick", m[1]!, CLICKABLE)],
    [/^(?:click|tap|press|push|hit)(?: on)? (.+)$/i, (m) => target("click", m[1]!, CLICKABLE)],
    [
      /^(?:hover|mouse)(?: over| on)? (.+)$/i,
      (m) => target("hover", m[1]!, [...CLICKABLE, ...TEXT_FIELDS, "image", "heading"]),
    ],
    // type "text" into the Name field / fill the Name field with "text" / clear the Name field
    [
      /^(?:type|enter|input|write|put|fill in) (.+?) (?:into|in|in to|inside) (.+)$/i,
      (m) => typed(textArgument(m[1]!, variables), m[2]!),
    ],
    [
      /^(?:fill|fill in|fill out|set) (.+?) (?:with|to) (.+)$/i,
      (m) => typed(textArgument(m[2]!, variables), m[1]!),
    ],
    [/^(?:clear|empty) (.+)$/i, (m) => target("fill", m[1]!, TEXT_FIELDS, "")],
    // select Germany from the Country dropdown
    [
      /^(?:select|choose|pick) (.+?) (?:from|in|on|of) (.+)$/i,
      (m) => {
        const quoted = unquote(m[1]!);
        const plain = /["'\u201c\u201d`]/.test(m[1]!) ? undefined : m[1]!.replace(/^the /i, "");
        const option = quoted ?? plain;
        return option ? target("selectOption", m[2]!, CHOOSERS, option) : notPlain;
      },
    ],
    // check Remember me / uncheck Newsletter
    [
      /^(?:uncheck|untick|un-check|un-tick|deselect|turn off|disable) (.+)$/i,
      (m) => target("uncheck", m[1]!, UNCHECKABLE),
    ],
    [/^(?:check|tick|turn on|enable) (.+)$/i, (m) => target("check", m[1]!, CHECKABLE)],
  ];
  for (const [pattern, plan] of rules) {
    const m = pattern.exec(text);
    if (!m) continue;
    const planned = plan([...m].map((g) => g ?? ""));
    if (planned) return planned;
  }
  return notPlain;

  function target(
    method: ExplicitPlan["method"],
    phrase: string,
    roles: readonly string[],
    argument?: string,
  ): ExplicitPlan | NotExplicit {
    const readings = readTarget(phrase, roles);
    if (!readings) return notPlain;
    return { method, target: { phrase, readings }, ...(argument !== undefined ? { argument } : {}) };
  }
}

// ---------- resolving and acting ----------

/** Names compared as a person reads them: case, spacing, and a trailing ":" or "*" aside. */
export function sameName(a: string, b: string): boolean {
  return normalName(a) === normalName(b);
}

function normalName(name: string): string {
  return name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/[\s:*]+$/, "")
    .trim();
}

/** The outcome of trying an instruction without a model. */
export type ExplicitOutcome =
  /** Done (or tried and failed on the one element that fits): the result to return. */
  | { resolved: true; result: ActResult; failed: boolean }
  /** Not explicit, or no single element fits: the model decides. */
  | { resolved: false; reason: string };

/**
 * Tries `instruction` without a model: parses it, reads the page, and acts on the element that
 * fits if exactly one visible element does.
 */
export async function actExplicitly(
  ctx: OperationContext,
  instruction: string,
  variables: Variables | undefined,
): Promise<ExplicitOutcome> {
  const plan = parseExplicit(instruction, variables);
  if ("needsModel" in plan) return { resolved: false, reason: plan.needsModel };
  const description = describePlan(plan);
  let performed: Performed;
  if (!plan.target) {
    performed = await perform(ctx, plan, undefined, description, variables);
    return { resolved: true, failed: false, result: done(instruction, description, performed) };
  }
  const snapshot = await takeSnapshot(ctx.page, {
    tokenBudget: false,
    domSettleTimeout: ctx.domSettleTimeout,
    signal: ctx.deadline.signal,
  });
  ctx.deadline.check();
  const found = await fitting(snapshot, plan.target.readings);
  if (found.length !== 1) {
    const what = `"${plan.target.phrase}"`;
    return {
      resolved: false,
      reason:
        found.length === 0
          ? `no visible element on the page is named ${what} with a role that fits`
          : `${found.length} visible elements on the page fit ${what}`,
    };
  }
  const id = found[0]!;
  try {
    performed = await perform(ctx, plan, { snapshot, id }, description, variables);
  } catch (error) {
    if (error instanceof ExplicitNotApplicable) return { resolved: false, reason: error.message };
    if (!isRecoverable(error)) throw error;
    return {
      resolved: true,
      failed: true,
      result: actResult(false, `Could not ${description}: ${failureText(error)}`, instruction, []),
    };
  }
  return { resolved: true, failed: false, result: done(instruction, description, performed) };
}

function done(instruction: string, description: string, performed: Performed): ActResult {
  const result = actResult(
    true,
    `Done without a model (explicit instruction): ${description}.`,
    instruction,
    [performed],
  );
  Object.defineProperty(result, RESOLVED_WITHOUT_MODEL, { value: true, enumerable: true });
  return result;
}

/** The ids of the visible elements that fit any reading. */
async function fitting(snapshot: Snapshot, readings: Reading[]): Promise<number[]> {
  const ids = snapshot.ids();
  if (ids.length === 0) return [];
  const refs = await snapshot.elements(ids);
  const matches = refs
    .filter((ref) => readings.some((r) => r.roles.includes(ref.role) && sameName(ref.name, r.name)))
    .map((ref) => ref.id);
  const seen: number[] = [];
  for (const id of matches) {
    const { frame, handle } = await snapshot.handle(id);
    try {
      if (await frame.invoke(domRuntime, "perceivable", handle)) seen.push(id);
    } finally {
      void frame.release(handle);
    }
  }
  return seen;
}

async function perform(
  ctx: OperationContext,
  plan: ExplicitPlan,
  on: { snapshot: Snapshot; id: number } | undefined,
  description: string,
  variables: Variables | undefined,
): Promise<Performed> {
  let selector = "";
  let role = "";
  let name = "";
  let expectedNode: number | undefined;
  if (on) {
    const [ref, node] = await Promise.all([on.snapshot.element(on.id), on.snapshot.backendNodeId(on.id)]);
    if (plan.method === "selectOption" && ref.tag !== "select") {
      // A custom dropdown opens and then needs its option found: not a single explicit step.
      throw new ExplicitNotApplicable(`"${plan.target?.phrase}" is not a <select> (a custom dropdown)`);
    }
    selector = ref.xpath;
    role = ref.role;
    name = ctx.redactor.mask(ref.name);
    expectedNode = node;
  }
  const args = plan.argument !== undefined ? [plan.argument] : [];
  await runStep(ctx, on ? { selector, expectedNode } : undefined, plan.method, args, variables);
  return {
    action: { selector, description, method: plan.method, arguments: args },
    step: { selector, method: plan.method, arguments: args, description, role, name },
  };
}

/** Thrown (and caught) when the one element that fits cannot take the step in one go. */
class ExplicitNotApplicable extends Error {}

function describePlan(plan: ExplicitPlan): string {
  const target = plan.target ? plan.target.phrase.replace(/^(?:the|a|an) /i, "the ") : "";
  switch (plan.method) {
    case "press":
      return plan.target ? `press ${plan.argument} in ${target}` : `press ${plan.argument}`;
    case "fill":
      return plan.argument ? `type ${quoteText(plan.argument)} into ${target}` : `clear ${target}`;
    case "selectOption":
      return `select ${quoteText(plan.argument ?? "")} from ${target}`;
    case "doubleClick":
      return `double-click ${target}`;
    default:
      return `${plan.method} ${target}`;
  }
}

function quoteText(text: string): string {
  return /^%[A-Za-z_][\w.-]*%$/.test(text) ? text : JSON.stringify(text);
}
