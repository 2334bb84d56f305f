// The `playwright-test` export: a @playwright/test spec that does what the run did with no Deckhand
// and no model. Each step's element is reached by a locator the record-time check found unique
// (user-facing first, CSS from the element's own attributes after); a step no locator can address
// safely becomes a test.fixme with the reason, never a locator that might hit another element.

import type { StepLocator, StepLocators } from "../types.ts";
import { type ScriptPlan, type ScriptStep, VARIABLE_HELPER, valueCode, variableTokens } from "./steps.ts";

export interface PlaywrightOptions {
  /** Each extract becomes an expect that the page shows what was extracted. */
  assertExtracts?: boolean;
}

const str = (text: string) => JSON.stringify(text);

function locatorCode(locator: StepLocator): string {
  switch (locator.kind) {
    case "role":
      return `getByRole(${str(locator.role)}, { name: ${str(locator.name)}, exact: true })`;
    case "label":
      return `getByLabel(${str(locator.text)}, { exact: true })`;
    case "placeholder":
      return `getByPlaceholder(${str(locator.text)}, { exact: true })`;
    case "text":
      return `getByText(${str(locator.text)}, { exact: true })`;
    case "testId":
      return `getByTestId(${str(locator.value)})`;
    case "css":
      return `locator(${str(locator.selector)})`;
  }
}

/** The element's locator from the tab's page, through its frames; undefined with the reason when there is none. */
export function elementCode(
  page: string,
  locators: StepLocators | undefined,
): { code?: string; why?: string } {
  if (!locators) return { why: "its element was not checked for a unique locator when it ran" };
  if (locators.unaddressable || locators.candidates.length === 0)
    return { why: locators.unaddressable ?? "no locator matched it alone" };
  let code = page;
  for (const frame of locators.frames) code += `.locator(${str(frame)}).contentFrame()`;
  return { code: `${code}.${locatorCode(locators.candidates[0]!)}` };
}

/** Playwright's call for a method on a locator `el` (or on the page when the step has no element). */
function actionCode(
  step: ScriptStep & { kind: "act" },
  el: string | undefined,
  page: string,
  used: Set<string>,
) {
  const { method } = step.step;
  const arg = step.step.arguments[0] ?? "";
  const v = () => valueCode(arg, used);
  if (!el) {
    switch (method) {
      case "press":
        return `await ${page}.keyboard.press(${v()});`;
      case "type":
        return `await ${page}.keyboard.type(${v()});`;
      case "scrollByPage":
        return `await ${page}.mouse.wheel(0, ${arg === "up" ? "-" : ""}600);`;
      case "goto":
        return `await ${page}.goto(${v()});`;
      case "goBack":
        return `await ${page}.goBack();`;
      default:
        return undefined;
    }
  }
  switch (method) {
    case "click":
      return `await ${el}.click();`;
    case "doubleClick":
      return `await ${el}.dblclick();`;
    case "hover":
      return `await ${el}.hover();`;
    case "fill":
      return `await ${el}.fill(${v()});`;
    case "type":
      return `await ${el}.pressSequentially(${v()});`;
    case "press":
      return `await ${el}.press(${v()});`;
    case "check":
      return `await ${el}.check();`;
    case "uncheck":
      return `await ${el}.uncheck();`;
    case "scrollIntoView":
      return `await ${el}.scrollIntoViewIfNeeded();`;
    case "selectOption":
      // A native <select> takes the option. A custom dropdown was only opened by this step, as
      // Deckhand does it (the next recorded step clicked the option).
      if (step.step.locators?.tag === "select") return `await ${el}.selectOption(${v()});`;
      return `await ${el}.click();`;
    default:
      return undefined;
  }
}

/** Plain string leaves of an extracted value (what an expect can look for on the page). */
function leaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") {
    if (value.trim() && value.length <= 200 && variableTokens(value).length === 0) out.push(value.trim());
  } else if (typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) if (k !== "cacheStatus") leaves(v, out);
  return out;
}

const comment = (text: string) => `// ${text.replace(/\s+/g, " ").trim()}`;

export function playwrightTest(plan: ScriptPlan, header: string[], options: PlaywrightOptions): string {
  const used = new Set<string>();
  const body: string[] = [];
  let usesExpect = false;
  let usesContext = false;
  const pageVar = (tab: number) => (tab === 0 ? "page" : `page${tab}`);
  let n = 0;
  for (const step of plan.steps) {
    const page = pageVar(step.tab);
    switch (step.kind) {
      case "goto":
        body.push(`await ${page}.goto(${str(step.url)});`);
        break;
      case "act": {
        n++;
        const label = `Step ${n} (${step.step.description})`;
        body.push(
          comment(
            `${step.step.description}${step.instruction && step.instruction !== step.step.description ? ` (act: ${step.instruction})` : ""}`,
          ),
        );
        const el = step.step.selector ? elementCode(page, step.step.locators) : { code: undefined };
        const code = el.why ? undefined : actionCode(step, el.code, page, used);
        if (code === undefined) {
          const why = el.why ?? `the method ${step.step.method} has no Playwright equivalent here`;
          body.push(comment(`${label} cannot be addressed safely: ${why}.`));
          body.push(`test.fixme(true, ${str(`${label}: ${why}`)});`);
          break;
        }
        if (step.opens !== undefined) {
          usesContext = true;
          body.push(`const ${pageVar(step.opens)}Opened = context.waitForEvent("page");`);
          body.push(code);
          body.push(`const ${pageVar(step.opens)} = await ${pageVar(step.opens)}Opened;`);
          body.push(`await ${pageVar(step.opens)}.waitForLoadState();`);
        } else body.push(code);
        break;
      }
      case "missing":
        body.push(comment(`act "${step.instruction}" did nothing that can be replayed: ${step.why}`));
        break;
      case "extract": {
        const values = options.assertExtracts ? leaves(step.value) : [];
        body.push(comment(`extract: ${step.instruction || "the page text"}`));
        for (const value of values) {
          usesExpect = true;
          body.push(`await expect(${page}.locator("body")).toContainText(${str(value)});`);
        }
        break;
      }
      case "observe":
        body.push(comment(`observe: ${step.instruction || "every interactive element"}`));
        if (step.found.length) body.push(comment(`found: ${step.found.slice(0, 5).join("; ")}`));
        break;
      case "wait":
        body.push(comment("the agent waited here"), `await ${page}.waitForTimeout(${step.ms});`);
        break;
    }
  }
  const imports = usesExpect ? "expect, test" : "test";
  const lines = [...header.map((h) => comment(h)), "", `import { ${imports} } from "@playwright/test";`, ""];
  if (used.size > 0) {
    lines.push(...VARIABLE_HELPER, "");
  }
  const fixtures = usesContext ? "{ page, context }" : "{ page }";
  lines.push(`test("recorded run", async (${fixtures}) => {`);
  for (const line of body) lines.push(...line.split("\n").map((l) => (l.startsWith("  ") ? l : `  ${l}`)));
  lines.push("});", "");
  return lines.join("\n");
}
