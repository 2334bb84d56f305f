// The browser layer's in-page code, composed from its modules (see injected-script.ts): shadow
// root access, XPath, and the DOM runtime that locators, input and settle call, itself made of a
// module per job.

import { installComposedTree } from "./injected/composed-tree.ts";
import { installDomRuntime } from "./injected/dom-runtime.ts";
import { installElementChanges } from "./injected/element-changes.ts";
import { installElementReads } from "./injected/element-reads.ts";
import { installHitTest } from "./injected/hit-test.ts";
import { installQuiet } from "./injected/quiet.ts";
import { installReachability } from "./injected/reachability.ts";
import { installSelectorEngines } from "./injected/selector-engines.ts";
import { installShadowAccess } from "./injected/shadow-access.ts";
import { installXPath } from "./injected/xpath.ts";
import { defineInjectedModule, defineInjectedScript } from "./injected-script.ts";

/** Open and closed shadow roots (shared by every script that walks the composed tree). */
export const shadowAccess = defineInjectedModule(installShadowAccess);

/** Writing and resolving Deckhand's absolute XPaths. */
export const xpathAccess = defineInjectedModule(installXPath, shadowAccess);

/** How far a document has come and whether it is still changing. */
export const quietness = defineInjectedModule(installQuiet);

const composedTree = defineInjectedModule(installComposedTree, shadowAccess);
const selectorEngines = defineInjectedModule(installSelectorEngines, composedTree, xpathAccess);
const elementReads = defineInjectedModule(installElementReads, shadowAccess, composedTree);
const hitTest = defineInjectedModule(installHitTest, shadowAccess, composedTree, elementReads, quietness);
const elementChanges = defineInjectedModule(installElementChanges, elementReads);
const reachability = defineInjectedModule(installReachability, composedTree, elementReads);

/** Locating elements, hit tests, input preparation, the page's quiet state. */
export const domRuntime = defineInjectedScript(
  "dom",
  installDomRuntime,
  shadowAccess,
  xpathAccess,
  quietness,
  composedTree,
  selectorEngines,
  elementReads,
  hitTest,
  elementChanges,
  reachability,
);
