// The snapshot's in-page code, composed from its modules (see browser/injected-script.ts): roles,
// names, values and states apart from the walk that writes the outline; and the record-time
// locator check, an extension of the outline script installed in a document only when a step is
// recorded there, so that an act describes its element and checks its locators in one evaluation
// (injected/step-element.ts) while the outline every document compiles leaves the check out.

import { quietness, shadowAccess, xpathAccess } from "../browser/in-page.ts";
import {
  defineInjectedModule,
  defineInjectedScript,
  extendInjectedScript,
  type InjectedScript,
} from "../browser/injected-script.ts";
import { installElementKinds } from "./injected/element-kinds.ts";
import { installLocators } from "./injected/locators.ts";
import { installNames } from "./injected/names.ts";
import { installOutline, type Outline } from "./injected/outline.ts";
import { installOutlineLines } from "./injected/outline-lines.ts";
import { installOutlineRegistry } from "./injected/outline-registry.ts";
import { installOutlineStructures } from "./injected/outline-structures.ts";
import { installRoles } from "./injected/roles.ts";
import { installStates } from "./injected/states.ts";
import { installStepElement, type StepElement } from "./injected/step-element.ts";
import { installText } from "./injected/text.ts";
import { installValues } from "./injected/values.ts";

const text = defineInjectedModule(installText);
const roles = defineInjectedModule(installRoles);
const values = defineInjectedModule(installValues);
const names = defineInjectedModule(installNames, shadowAccess, roles, values, text);
const states = defineInjectedModule(installStates, values, text);
const lines = defineInjectedModule(installOutlineLines, text);
const kinds = defineInjectedModule(installElementKinds);
const structures = defineInjectedModule(installOutlineStructures, roles, lines);
const registry = defineInjectedModule(installOutlineRegistry, xpathAccess, text);

/** The outline: installed in every document as it appears (Browser.prewarm). */
export const outlineScript: InjectedScript<Outline> = defineInjectedScript(
  "outline",
  installOutline,
  shadowAccess,
  xpathAccess,
  quietness,
  roles,
  names,
  states,
  values,
  text,
  lines,
  kinds,
  structures,
  registry,
);

// The locator check counts names as Playwright sees the page: a field's real value, not the
// outline's `%name%` for text typed from a variable. So its names read values through a copy of
// the values module of their own, which holds no notes of typed text (the outline's copy does).
// The values found are never sent anywhere: recordLocators drops a locator that shows a secret.
const unmaskedValues = defineInjectedModule(installValues);
const unmaskedNames = defineInjectedModule(installNames, shadowAccess, roles, unmaskedValues, text);
const locators = defineInjectedModule(installLocators, roles, unmaskedNames, text);

/**
 * The record-time locator check (injected/locators.ts), with the outline's description of the
 * same element in one call: installed on the outline's object when a step first needs it.
 */
export const stepScript: InjectedScript<StepElement> = extendInjectedScript(
  outlineScript,
  "step",
  installStepElement,
  outlineScript.main,
  locators,
);
