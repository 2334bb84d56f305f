// `%name%` variables. The model only ever sees names (and descriptions); values are put in
// locally, just before they are typed, and are kept out of prompts, logs, history and files.

import { ServiceInvalidArgumentError } from "../errors.ts";
import type { SecretRedactor } from "../log.ts";
import type { VariablePrimitive, Variables, VariableValue } from "../types.ts";

const TOKEN = /%([A-Za-z_][\w.-]*)%/g;

export function variableValue(variable: VariableValue): VariablePrimitive {
  return typeof variable === "object" && variable !== null ? variable.value : variable;
}

/** The values of a set of variables (what must never be shown), in order. */
export function variableValues(variables: Variables | undefined): VariablePrimitive[] {
  return Object.values(variables ?? {}).map(variableValue);
}

/** Checks variable names and values, and registers every value as a secret. */
export function registerVariables(variables: Variables | undefined, redactor: SecretRedactor): void {
  if (!variables) return;
  if (typeof variables !== "object" || Array.isArray(variables)) {
    throw new ServiceInvalidArgumentError("`variables` must be an object of name -> value.");
  }
  for (const [name, variable] of Object.entries(variables)) {
    if (!/^[A-Za-z_][\w.-]*$/.test(name)) {
      throw new ServiceInvalidArgumentError(
        `Variable name ${JSON.stringify(name)} must be letters, digits, _ . or -.`,
      );
    }
    const value = variableValue(variable);
    if (!["string", "number", "boolean"].includes(typeof value)) {
      throw new ServiceInvalidArgumentError(`Variable %${name}% needs a string, number or boolean value.`);
    }
    redactor.add(String(value), name);
  }
}

/** The lines that tell a model which variables exist: names and descriptions, never values. */
export function describeVariables(variables: Variables | undefined): string {
  if (!variables || Object.keys(variables).length === 0) return "";
  const lines = Object.entries(variables).map(([name, v]) => {
    const description = typeof v === "object" && v !== null ? v.description : undefined;
    return `- %${name}%${description ? `: ${description}` : ""}`;
  });
  return `Variables (write %name% where a value goes; the program fills it in, you never see it):\n${lines.join("\n")}`;
}

/** The text with every known `%name%` replaced by its value (unknown names stay as they are). */
export function substitute(text: string, variables: Variables | undefined): string {
  if (!variables) return text;
  return text.replace(TOKEN, (whole, name: string) =>
    Object.hasOwn(variables, name) ? String(variableValue(variables[name]!)) : whole,
  );
}

/** Whether a text uses any of the given variables (its value is secret once substituted). */
export function usesVariable(text: string, variables: Variables | undefined): boolean {
  if (!variables) return false;
  for (const [, name] of text.matchAll(TOKEN)) if (Object.hasOwn(variables, name!)) return true;
  return false;
}

/** Variables as they may be recorded (history, cache, replay): names and descriptions only. */
export function redactVariables(variables: Variables | undefined): Record<string, string> | undefined {
  if (!variables) return undefined;
  return Object.fromEntries(
    Object.entries(variables).map(([name, v]) => [
      name,
      typeof v === "object" && v !== null && v.description ? `%${name}% (${v.description})` : `%${name}%`,
    ]),
  );
}
