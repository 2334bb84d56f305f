// The act methods, in one table: for each, its name and the other names models and callers use,
// what it needs (an element, an argument), the line the model reads about it, the roles it is the
// usual method for, how it runs (real input events) and how it checks that it applied. The
// prompts (prompts.ts), the executor (execute.ts), the answer schema and observe's defaults are
// generated from it, so a method is added or changed in one place.

import type { Locator, TimeoutOption } from "../browser/locator.ts";
import type { Page } from "../browser/page.ts";
import { ServiceClickError, ServiceError, ServiceInvalidArgumentError } from "../errors.ts";

/** One step as a method sees it. */
export interface MethodStep {
  page: Page;
  /** The element; undefined for a page-level step (a key to the focused element, scrolling the page). */
  locator: Locator | undefined;
  /** How the element is named in errors. */
  selector: string;
  /** arguments[0] with `%name%` variables replaced (or the method's fallback). */
  value: string;
  /**
   * The options of one wait for the element: a step of the operation's deadline limited to the
   * step's action timeout (or `limitMs`), so the wait fails with its own explanation and call log.
   */
  wait(limitMs?: number): TimeoutOption;
}

export interface MethodSpec<Ran = unknown> {
  /** Other names a model or caller may use (matched in lower case, letters only). */
  aliases: readonly string[];
  /** Whether it needs an element; "optional": without one it acts on the page. */
  element: "required" | "optional";
  /** What arguments[0] is: `required` ones fail the step when missing, others fall back. */
  argument?: { means: string; required?: boolean; fallback?: string };
  /** What the model reads about it in act's prompt (the name alone when it needs no words). */
  prompt?: string;
  /** Roles whose elements it is the usual method for (observe lists them with it). */
  defaultFor: readonly string[];
  /**
   * Its argument is typed into the element, replacing or after what it held: later outlines then
   * show `%name%` where a variable's value went (for "appends", `run` returns the text before).
   */
  typesText?: "replaces" | "appends";
  /** Carries it out with real input events; returns what `check` compares with. */
  run(step: MethodStep): Promise<Ran>;
  /**
   * Checks that it applied, and throws a typed error (reason `not-applied`, or why the element
   * cannot take it) when it did not. Where the running itself is the check (a click lands only
   * where a hit test says the element is), it says so and does nothing more.
   */
  check(step: MethodStep, ran: Ran): Promise<void>;
}

/** The element of a step that needs one. */
function element(step: MethodStep): Locator {
  if (!step.locator) throw new ServiceInvalidArgumentError("This action needs an element.");
  return step.locator;
}

/** What a field holds now, or null when it cannot be read (it left the page with the typing). */
async function fieldValue(step: MethodStep): Promise<string | null> {
  return element(step)
    .inputValue(step.wait(500))
    .catch(() => null);
}

function notApplied(step: MethodStep, verb: string, why: string): ServiceClickError {
  return new ServiceClickError(step.selector, why, "not-applied", verb);
}

/** Nothing to compare: the hit test before the input event is the check. */
const landed = async () => {};

/** An entry of the table, its types checked on their own (what `run` returns is what `check` gets). */
function spec<Ran>(entry: MethodSpec<Ran>): MethodSpec<Ran> {
  return entry;
}

const TABLE = {
  click: spec({
    aliases: [],
    element: "required",
    defaultFor: ["button", "link", "switch", "tab", "menuitem", "option", "treeitem", "generic"],
    run: (step) => element(step).click(step.wait()),
    check: landed,
  }),
  doubleClick: spec({
    aliases: ["dblclick"],
    element: "required",
    defaultFor: [],
    run: (step) => element(step).dblclick(step.wait()),
    check: landed,
  }),
  hover: spec({
    aliases: [],
    element: "required",
    defaultFor: [],
    run: (step) => element(step).hover(step.wait()),
    async check(step) {
      const state = await element(step).elementState(step.wait());
      if (!state.hovered)
        throw notApplied(step, "hover over", "the pointer is not over it after moving there");
    },
  }),
  check: spec({
    aliases: [],
    element: "required",
    defaultFor: ["checkbox", "radio"],
    // Locator.check clicks and then reads the box back, and fails when it is not checked.
    run: (step) => element(step).check(step.wait()),
    check: landed,
  }),
  uncheck: spec({
    aliases: [],
    element: "required",
    defaultFor: [],
    run: (step) => element(step).uncheck(step.wait()),
    check: landed,
  }),
  scrollIntoView: spec({
    aliases: ["scrollto"],
    element: "required",
    defaultFor: [],
    run: (step) => element(step).scrollIntoView(step.wait()),
    async check(step) {
      const state = await element(step).elementState(step.wait());
      if (!state.inView)
        throw notApplied(step, "scroll to", "it is not in view after scrolling (it may be hidden)");
    },
  }),
  fill: spec({
    aliases: [],
    element: "required",
    argument: { means: "the text", fallback: "" },
    prompt: "replace a field's text with arguments[0]",
    defaultFor: ["textbox", "searchbox", "spinbutton", "slider"],
    typesText: "replaces",
    run: (step) => element(step).fill(step.value, step.wait()),
    async check(step) {
      const now = await fieldValue(step);
      if (now !== null && now !== step.value)
        throw notApplied(step, "fill", "the text did not land in the field (it holds something else now)");
    },
  }),
  type: spec({
    aliases: [],
    element: "required",
    argument: { means: "the text", fallback: "" },
    prompt: "add arguments[0] to the text",
    defaultFor: [],
    typesText: "appends",
    async run(step): Promise<string | null> {
      const before = await fieldValue(step);
      await element(step).type(step.value, step.wait());
      return before;
    },
    async check(step, before: string | null) {
      const now = await fieldValue(step);
      if (now !== null && before !== null && now !== before + step.value && now !== step.value)
        throw notApplied(
          step,
          "type into",
          "the text did not land in the field (it holds something else now)",
        );
    },
  }),
  press: spec({
    aliases: ["presskey", "keypress"],
    element: "optional",
    argument: { means: "the key", fallback: "Enter" },
    prompt: "arguments[0] is a key like Enter, Tab, Escape or Control+A; elementId may be -1 for the page",
    defaultFor: [],
    async run(step) {
      if (!step.locator) return step.page.keyPress(step.value);
      // The key goes to the element only if it takes the focus; a key sent to whatever else has it
      // would be a success claimed for something that did not happen.
      await step.locator.focus(step.wait());
      const state = await step.locator.elementState(step.wait());
      if (!state.focused) {
        throw new ServiceInvalidArgumentError(
          `Cannot press ${step.value} on ${JSON.stringify(step.selector)}: it does not take the keyboard focus.`,
          { reason: "not-focusable" },
        );
      }
      await step.page.keyPress(step.value);
    },
    // Whether the key did what the page makes of it cannot be known here; that it reached the
    // element is checked before it is pressed.
    check: landed,
  }),
  selectOption: spec({
    aliases: ["selectoptionfromdropdown", "select"],
    element: "required",
    argument: { means: "the option", required: true },
    prompt: "arguments[0] is the option to choose in a combobox with options=[...]",
    defaultFor: ["combobox", "listbox"],
    async run(step): Promise<"selected" | "opened"> {
      const locator = element(step);
      try {
        // A native <select>: the page reads the selection back after its change events.
        await locator.selectOption(step.value, step.wait());
        return "selected";
      } catch (error) {
        if (!(error instanceof ServiceError) || error.reason !== "not-a-select") throw error;
      }
      // A custom dropdown opens on click (the next step picks the option); a text field does not.
      const state = await locator.elementState(step.wait());
      if (!state.choosable) {
        throw new ServiceInvalidArgumentError(
          `Cannot select ${JSON.stringify(step.value)} in ${JSON.stringify(step.selector)}: it is ` +
            `${state.editable ? "a text field" : `a <${state.tag}>`}, not a <select> or a list to choose from` +
            (state.editable ? "; use fill to type into it." : "."),
          { reason: "not-a-select" },
        );
      }
      await locator.click(step.wait());
      return "opened";
    },
    check: landed,
  }),
  scrollByPage: spec({
    aliases: ["nextchunk", "prevchunk"],
    element: "optional",
    argument: { means: "down or up", fallback: "down" },
    prompt: "arguments[0] is down or up",
    defaultFor: [],
    run(step): Promise<boolean> {
      const direction = /up|prev|back/i.test(step.value) ? "up" : "down";
      return step.locator
        ? step.locator.scrollByPage(direction, step.wait())
        : step.page.scrollByPage(direction);
    },
    async check(step, moved: boolean) {
      if (!moved)
        throw notApplied(step, "scroll", "it did not move: it is at its end, or it does not scroll");
    },
  }),
  dragAndDrop: spec({
    aliases: ["dragto"],
    element: "required",
    argument: { means: "the element to drop onto", required: true },
    prompt:
      "arguments[0] is the id of the element to drop onto or, when it has no id, its text exactly as the outline shows it",
    defaultFor: [],
    run: (step) => element(step).dragTo(step.page.deepLocator(step.value), step.wait()),
    // Both ends are hit-tested before the mouse goes down and up.
    check: landed,
  }),
};

export type ActMethod = keyof typeof TABLE;

/** Every method, in the table's order. */
export const ACT_METHODS = Object.keys(TABLE) as [ActMethod, ...ActMethod[]];

/** The table entry of a method. */
export function methodSpec(method: ActMethod): MethodSpec {
  return TABLE[method] as MethodSpec;
}

const BY_NAME = new Map<string, ActMethod>();
for (const method of ACT_METHODS) {
  BY_NAME.set(method.toLowerCase(), method);
  for (const alias of TABLE[method].aliases) BY_NAME.set(alias, method);
}

function key(name: string): string {
  return name.replace(/[^a-z]/gi, "").toLowerCase();
}

/** The method a name stands for (click when none is given); ServiceInvalidArgumentError for an unknown one. */
export function normalizeMethod(method: string | undefined): ActMethod {
  const known = BY_NAME.get(key(method ?? "click"));
  if (!known) {
    throw new ServiceInvalidArgumentError(
      `Unknown action method ${JSON.stringify(method)}. Use one of: ${ACT_METHODS.join(", ")}.`,
    );
  }
  return known;
}

/** The method a name stands for, or undefined (a model's answer that names none we know). */
export function knownMethod(method: string | undefined): ActMethod | undefined {
  return method ? BY_NAME.get(key(method)) : undefined;
}

/** The usual method for an element of this role (observe lists elements with it). */
export function defaultMethodFor(role: string): ActMethod {
  return ACT_METHODS.find((m) => (TABLE[m].defaultFor as readonly string[]).includes(role)) ?? "click";
}

/** The methods as act's prompt describes them: the plain ones by name, then the ones with words. */
export function methodsPromptLine(): string {
  const plain = ACT_METHODS.filter((m) => !methodSpec(m).prompt);
  const described = ACT_METHODS.filter((m) => methodSpec(m).prompt).map(
    (m) => `${m} (${methodSpec(m).prompt})`,
  );
  return `Methods: ${plain.join(", ")}; ${described.join("; ")}.`;
}
