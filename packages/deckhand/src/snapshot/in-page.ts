// The snapshot's in-page code, composed from its modules (see browser/injected-script.ts): roles,
// names, values and states apart from the walk that writes the outline.

import { quietness, shadowAccess, xpathAccess } from "../browser/in-page.ts";
import {
  defineInjectedModule,
  defineInjectedScript,
  type InjectedScript,
} from "../browser/injected-script.ts";
import { installLocators, type Locators } from "./injected/locators.ts";
import { installNames } from "./injected/names.ts";
import { installOutline, type Outline } from "./injected/outline.ts";
import { installRoles } from "./injected/roles.ts";
import { installStates } from "./injected/states.ts";
import { installText } from "./injected/text.ts";
import { installValues } from "./injected/values.ts";

const text = defineInjectedModule(installText);
const roles = defineInjectedModule(installRoles);
const values = defineInjectedModule(installValues);
const names = defineInjectedModule(installNames, shadowAccess, roles, values, text);
const states = defineInjectedModule(installStates, values, text);

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
);

/** The record-time locator check (injected/locators.ts): its own script, installed on first use. */
export const locatorScript: InjectedScript<Locators> = defineInjectedScript(
  "locators",
  installLocators,
  roles,
  names,
  text,
);
