// From the record of a session (the replay record's operations: LOCAL keeps them in the instance,
// the service in its store) to the steps a script performs. Both modes read the same rows through
// this one function, so a REMOTE export is the LOCAL one.
//
// Where a step ran is read from its operation's `recorded` (types.ts RecordedOperation): the tab,
// and the URL at its start and end. A tab whose URL changed between two operations with nothing
// recorded in between was sent there (page.goto): the script opens that URL. A tab first seen
// after another tab's step was opened by that step.

import type { Action, RecordedOperation, RecordedStep, ReplayAction } from "../types.ts";

/** One operation of the record: method, parameters (variable values redacted), result, start time. */
export type RecordedRow = Pick<ReplayAction, "method" | "parameters" | "result" | "timestamp">;

export type ScriptStep =
  | { kind: "goto"; tab: number; url: string }
  | {
      kind: "act";
      tab: number;
      /** The act's instruction (or the Action's description). */
      instruction: string;
      step: RecordedStep;
      /** The tab this step opened, if it opened one. */
      opens?: number;
    }
  /** An act that ran no step the record can replay (it failed, or was recorded before steps were). */
  | { kind: "missing"; tab: number; instruction: string; why: string }
  | { kind: "extract"; tab: number; instruction: string; value: unknown }
  | { kind: "observe"; tab: number; instruction: string; found: string[] }
  /** An agent's wait (a page that needed time it did not signal). */
  | { kind: "wait"; tab: number; ms: number };

export interface ScriptPlan {
  steps: ScriptStep[];
  /** Where the run started, and when (epoch ms); undefined for an empty record. */
  startUrl: string | undefined;
  startedAt: number | undefined;
  tabs: number;
}

function recordedOf(result: Record<string, unknown>): RecordedOperation | undefined {
  const recorded = result.recorded as RecordedOperation | undefined;
  return recorded && typeof recorded.page === "string" && Array.isArray(recorded.steps)
    ? recorded
    : undefined;
}

function instructionOf(row: RecordedRow): string {
  const p = row.parameters;
  if (typeof p.input === "string") return p.input;
  if (p.input && typeof p.input === "object") return String((p.input as Action).description ?? "");
  return typeof p.instruction === "string" ? p.instruction : "";
}

/** The steps a script performs to do what the record says, in order. */
export function planScript(rows: readonly RecordedRow[]): ScriptPlan {
  const steps: ScriptStep[] = [];
  const tabs = new Map<string, number>();
  const urls: (string | undefined)[] = [];
  let startUrl: string | undefined;
  let startedAt: number | undefined;
  /** The last act step, which opened any tab seen for the first time after it. */
  let lastAct: Extract<ScriptStep, { kind: "act" }> | undefined;

  const tabOf = (recorded: RecordedOperation): number => {
    let tab = tabs.get(recorded.page);
    if (tab !== undefined) return tab;
    tab = tabs.size;
    tabs.set(recorded.page, tab);
    if (tab > 0 && lastAct && lastAct.opens === undefined) {
      lastAct.opens = tab;
      urls[tab] = recorded.startUrl;
    }
    return tab;
  };

  for (const row of rows) {
    // The service's note of the tokens an agent's tools spent: not an operation of its own.
    if (row.parameters.by === "agentExecute") continue;
    if (row.method === "navigate") {
      const url = typeof row.parameters.url === "string" ? row.parameters.url : undefined;
      if (!url) continue;
      steps.push({ kind: "goto", tab: 0, url });
      urls[0] = typeof row.result.url === "string" ? row.result.url : url;
      startUrl ??= url;
      startedAt ??= row.timestamp;
      continue;
    }
    const recorded = recordedOf(row.result);
    if (!recorded) {
      // extract and observe keep their results as the caller got them: they ran on the tab in use.
      const tab = lastAct?.opens ?? lastAct?.tab ?? 0;
      if (row.method === "extract") {
        steps.push({ kind: "extract", tab, instruction: instructionOf(row), value: row.result });
      } else if (row.method === "observe") {
        const found = Array.isArray(row.result.actions)
          ? (row.result.actions as Action[]).map((a) => String(a.description ?? ""))
          : [];
        steps.push({ kind: "observe", tab, instruction: instructionOf(row), found });
      }
      continue;
    }
    const tab = tabOf(recorded);
    startUrl ??= recorded.startUrl;
    startedAt ??= row.timestamp;
    if (urls[tab] !== recorded.startUrl) steps.push({ kind: "goto", tab, url: recorded.startUrl });
    const instruction = instructionOf(row);
    if (row.method === "agentExecute") {
      for (const step of agentSteps(row.result.actions, tab, urls)) {
        if (step.kind === "act") lastAct = step;
        steps.push(step);
      }
    } else if (row.method === "act") {
      if (recorded.steps.length === 0) {
        steps.push({
          kind: "missing",
          tab,
          instruction,
          why:
            row.result.success === false ? String(row.result.message ?? "it failed") : "it performed no step",
        });
      }
      for (const step of recorded.steps) {
        lastAct = { kind: "act", tab, instruction, step };
        steps.push(lastAct);
      }
    }
    urls[tab] = recorded.endUrl;
  }
  return { steps, startUrl, startedAt, tabs: Math.max(tabs.size, 1) };
}

/** The deterministic steps of an agent run's actions (what its replay would do, in order). */
function agentSteps(actions: unknown, tab: number, urls: (string | undefined)[]): ScriptStep[] {
  if (!Array.isArray(actions)) return [];
  const out: ScriptStep[] = [];
  const pageStep = (instruction: string, method: string, args: string[]): ScriptStep => ({
    kind: "act",
    tab,
    instruction,
    step: { selector: "", method, arguments: args, description: instruction, role: "", name: "" },
  });
  for (const action of actions as {
    type?: string;
    arguments?: Record<string, unknown>;
    success?: boolean;
    playwrightArguments?: unknown;
  }[]) {
    if (action.success === false) continue;
    const args = action.arguments ?? {};
    switch (action.type) {
      case "act":
      case "fillForm": {
        const instruction = typeof args.action === "string" ? args.action : `agent ${action.type}`;
        const performed = Array.isArray(action.playwrightArguments)
          ? (action.playwrightArguments as RecordedStep[])
          : [];
        for (const step of performed) {
          out.push({
            kind: "act",
            tab,
            instruction,
            step: { ...step, role: step.role ?? "", name: step.name ?? "", arguments: step.arguments ?? [] },
          });
        }
        break;
      }
      case "goto":
        if (typeof args.url === "string") {
          out.push({ kind: "goto", tab, url: args.url });
          urls[tab] = args.url;
        }
        break;
      case "navback":
        out.push(pageStep("go back", "goBack", []));
        break;
      case "keys": {
        const value = String(args.value ?? "");
        if (args.method === "type") out.push(pageStep(`type ${value}`, "type", [value]));
        else {
          const times = typeof args.repeat === "number" ? args.repeat : 1;
          for (let i = 0; i < times; i++) out.push(pageStep(`press ${value}`, "press", [value]));
        }
        break;
      }
      case "scroll":
        out.push(
          pageStep(`scroll ${args.direction === "up" ? "up" : "down"}`, "scrollByPage", [
            args.direction === "up" ? "up" : "down",
          ]),
        );
        break;
      case "wait":
        out.push({ kind: "wait", tab, ms: Number(args.timeMs ?? 0) });
        break;
    }
  }
  return out;
}

/** `%name%` tokens of a text, in order. */
export function variableTokens(text: string): string[] {
  return [...text.matchAll(/%([A-Za-z_][\w-]*)%/g)].map((m) => m[1]!);
}

/** The environment variable a `%name%` variable is read from: NAME, upper case, `_` for anything else. */
export function envName(variable: string): string {
  return variable.replace(/[^A-Za-z0-9]/g, "_").toUpperCase();
}

/** A string argument as code: a literal, or with `%name%` variables read from the environment. */
export function valueCode(text: string, used: Set<string>): string {
  const tokens = variableTokens(text);
  if (tokens.length === 0) return JSON.stringify(text);
  for (const t of tokens) used.add(t);
  const whole = /^%([A-Za-z_][\w-]*)%$/.exec(text);
  if (whole) return `variable(${JSON.stringify(envName(whole[1]!))})`;
  const parts = text.split(/(%[A-Za-z_][\w-]*%)/).filter((p) => p !== "");
  return parts
    .map((p) => {
      const m = /^%([A-Za-z_][\w-]*)%$/.exec(p);
      return m
        ? `\${variable(${JSON.stringify(envName(m[1]!))})}`
        : p.replace(/[`\\]/g, "\\$&").replace(/\$\{/g, "\\${");
    })
    .join("")
    .replace(/^/, "`")
    .replace(/$/, "`");
}

/**
 * The generated scripts' helper that reads a variable of the run from the environment, as lines of
 * code (both formats write it; its value is never written into a script).
 */
export const VARIABLE_HELPER: readonly string[] = [
  "/** A variable of the run, read from the environment (its value is never written here). */",
  "function variable(name: string): string {",
  "  const value = process.env[name];",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the generated code
  "  if (value === undefined) throw new Error(`Set the environment variable ${name}: the run used it.`);",
  "  return value;",
  "}",
];
