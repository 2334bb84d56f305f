// The `deckhand` export: a TypeScript program of act(action) steps, each with the instruction it
// came from beside it. While the page is unchanged it runs with no model call (act(action) checks
// that each XPath still leads to the element recorded); a step whose element is gone is found again
// by the model from its description (self-heal), and the program prints that it was.

import { envName, type ScriptPlan, VARIABLE_HELPER, valueCode, variableTokens } from "./steps.ts";

const str = (text: string) => JSON.stringify(text);
const comment = (text: string) => `// ${text.replace(/\s+/g, " ").trim()}`;

/** A page-level step as a call on the page; undefined for a method act(action) runs itself. */
function pageLevel(page: string, method: string, arg: string): string | undefined {
  const used = new Set<string>();
  switch (method) {
    case "goto":
      return `await ${page}.goto(${valueCode(arg, used)});`;
    case "goBack":
      return `await ${page}.goBack();`;
    case "press":
      return `await ${page}.keyPress(${valueCode(arg, used)});`;
    case "type":
      return `await ${page}.type(${valueCode(arg, used)});`;
    default:
      return undefined;
  }
}

export function deckhandScript(plan: ScriptPlan, header: string[]): string {
  const body: string[] = [];
  const pageVar = (tab: number) => (tab === 0 ? "page" : `page${tab}`);
  for (const step of plan.steps) {
    const page = pageVar(step.tab);
    switch (step.kind) {
      case "goto":
        body.push(`await ${page}.goto(${str(step.url)});`);
        break;
      case "act": {
        const { selector, description, method, arguments: args } = step.step;
        if (step.instruction && step.instruction !== description)
          body.push(comment(`act: ${step.instruction}`));
        // Steps on the page itself (an agent's keys, an explicit "go to ...") go to the page.
        const pageCall = selector ? undefined : pageLevel(page, method, args[0] ?? "");
        if (pageCall) {
          body.push(comment(description), pageCall);
          break;
        }
        const names = [...new Set(args.flatMap(variableTokens))];
        const action = `{ selector: ${str(selector)}, description: ${str(description)}, method: ${str(method)}, arguments: ${JSON.stringify(args)} }`;
        const vars = names.length
          ? `, { ${names.map((n) => `${/^[A-Za-z_]\w*$/.test(n) ? n : str(n)}: variable(${str(envName(n))})`).join(", ")} }`
          : "";
        const pageArg = step.tab === 0 ? "" : `, ${page}`;
        if (step.opens !== undefined) {
          body.push(`const ${pageVar(step.opens)}Opened = newTab();`);
          body.push(`await step(${action}${vars || (pageArg ? ", {}" : "")}${pageArg});`);
          body.push(`const ${pageVar(step.opens)} = await ${pageVar(step.opens)}Opened;`);
        } else body.push(`await step(${action}${vars || (pageArg ? ", {}" : "")}${pageArg});`);
        break;
      }
      case "missing":
        body.push(comment(`act "${step.instruction}" did nothing that can be replayed: ${step.why}`));
        break;
      case "extract":
        body.push(comment(`extract: ${step.instruction || "the page text"}`));
        break;
      case "observe":
        body.push(comment(`observe: ${step.instruction || "every interactive element"}`));
        break;
      case "wait":
        body.push(comment("the agent waited here"), `await ${page}.waitForTimeout(${step.ms});`);
        break;
    }
  }
  return [
    ...header.map((h) => comment(h)),
    "",
    'import { type Action, Deckhand, type Page } from "deckhand";',
    "",
    ...VARIABLE_HELPER,
    "",
    "// The model is asked only when a step's element is gone (self-heal); an unchanged page needs none.",
    "const dh = new Deckhand({",
    '  env: "LOCAL",',
    '  model: process.env.DECKHAND_MODEL ?? "openai/gpt-4.1-mini",',
    "  verbose: 0,",
    "  disablePino: true,",
    "});",
    "await dh.init();",
    "const page = dh.page;",
    "",
    "/** Runs one recorded step; says so when its element had to be found again. */",
    "async function step(action: Action, variables: Record<string, string> = {}, on: Page = page): Promise<void> {",
    "  const result = await dh.act(action, { variables, page: on });",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the generated code
    "  if (!result.success) throw new Error(`${action.description}: ${result.message}`);",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the generated code
    '  if (result.message.includes("Self-healed")) console.log(`healed: ${result.message}`);',
    "}",
    "",
    "/** The next tab the page opens. */",
    "function newTab(): Promise<Page> {",
    "  const before = new Set(dh.context.pages());",
    "  return new Promise((resolve) => {",
    "    const poll = () => {",
    "      const opened = dh.context.pages().find((p) => !before.has(p));",
    "      if (opened) resolve(opened);",
    "      else setTimeout(poll, 50);",
    "    };",
    "    poll();",
    "  });",
    "}",
    "",
    "try {",
    ...body.map((l) => `  ${l}`),
    "} finally {",
    "  await dh.close();",
    "}",
    "",
  ].join("\n");
}
