// In-page scripts composed from modules (browser/injected-script.ts), in a real page: a script's
// modules are installed once and shared; an extension is installed on its base's object only when
// one of its methods is first called, reuses the base's modules (their state, not copies), and is
// installed again in the next document. And the outline that every document compiles leaves out
// the record-time locator check, which is such an extension.

import type { Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compactSource,
  defineInjectedModule,
  defineInjectedScript,
  extendInjectedScript,
} from "../../src/browser/injected-script.ts";
import { outlineScript, stepScript } from "../../src/snapshot/in-page.ts";
import { installLocators } from "../../src/snapshot/injected/locators.ts";
import { installNames } from "../../src/snapshot/injected/names.ts";
import { installOutline } from "../../src/snapshot/injected/outline.ts";
import { installRoles } from "../../src/snapshot/injected/roles.ts";
import { installStepElement } from "../../src/snapshot/injected/step-element.ts";
import { type BrowserFixture, closeFixture, openFixture, openPage, visit } from "./helpers.ts";

/** A module with state: how many times `bump` was called in this document. */
const counter = defineInjectedModule(() => {
  let count = 0;
  return {
    bump(): number {
      count += 1;
      return count;
    },
    count: () => count,
  };
});

const base = defineInjectedScript(
  "test-base",
  (c: { bump(): number }) => ({ bump: () => c.bump() }),
  counter,
);

/** Says in the page when it is installed, so the test can see that it was not installed earlier. */
const extension = extendInjectedScript(
  base,
  "test-extension",
  (b: { bump(): number }, c: { count(): number }) => {
    (window as unknown as { extensionInstalls: number }).extensionInstalls =
      ((window as unknown as { extensionInstalls?: number }).extensionInstalls ?? 0) + 1;
    return {
      bumpThenCount: () => {
        b.bump();
        return c.count();
      },
      count: () => c.count(),
    };
  },
  base.main,
  counter,
);

let fx: BrowserFixture;
let page: Page;

beforeAll(async () => {
  fx = await openFixture();
  page = await openPage(fx, "/login.html");
});

afterAll(async () => {
  await closeFixture(fx);
});

const installs = () => page.evaluate<number | null>("window.extensionInstalls ?? null");

describe("an extension of an injected script", () => {
  it("is installed on first use only, once per document, sharing the base's modules", async () => {
    await visit(fx, page, "/login.html");
    const frame = page.mainFrame();
    expect(await frame.invoke(base, "bump")).toBe(1);
    expect(await frame.invoke(base, "bump")).toBe(2);
    expect(await installs()).toBeNull();
    // The base's counter, not a copy of its own: it sees the two bumps.
    expect(await frame.invoke(extension, "count")).toBe(2);
    expect(await frame.invoke(extension, "bumpThenCount")).toBe(3);
    expect(await frame.invoke(base, "bump")).toBe(4);
    expect(await installs()).toBe(1);

    // A new document: installed again, on the new document's base, on first use.
    await visit(fx, page, "/login.html");
    expect(await installs()).toBeNull();
    expect(await frame.invoke(extension, "count")).toBe(0);
    expect(await frame.invoke(base, "bump")).toBe(1);
    expect(await frame.invoke(extension, "count")).toBe(1);
    expect(await installs()).toBe(1);
  });

  it("sends only the modules the base does not have", () => {
    expect(extension.source).not.toContain("count += 1;");
    expect(base.source).toContain("count += 1;");
  });
});

describe("the outline script", () => {
  it("compiled in every document, leaves out the record-time locator check", () => {
    const sent = (install: (...dependencies: never[]) => unknown) => compactSource(install.toString());
    expect(outlineScript.source).toContain(sent(installOutline));
    expect(outlineScript.source).not.toContain(sent(installLocators));
    expect(outlineScript.source).not.toContain(sent(installStepElement));
    // The check's extension sends the check and its own names (they read unmasked values); the
    // outline and the roles come from the outline's object.
    expect(stepScript.source).toContain(sent(installLocators));
    expect(stepScript.source).toContain(sent(installNames));
    expect(stepScript.source).not.toContain(sent(installOutline));
    expect(stepScript.source).not.toContain(sent(installRoles));
  });
});

describe("a module's source as the page gets it", () => {
  it("loses indentation, blank lines and whole-line comments, and nothing inside a literal", () => {
    const source = [
      "function install() {",
      "  // a note",
      "  /**",
      "   * More notes.",
      "   */",
      '  const pad = "  "; // two spaces',
      "",
      "  const url = `//` + pad + `x`; /* kept */",
      "  return { pad, url, re: /\\/\\// };",
      "}",
    ].join("\n");
    const compact = compactSource(source);
    expect(compact).toBe(
      [
        "function install() {",
        'const pad = "  "; // two spaces',
        "const url = `//` + pad + `x`; /* kept */",
        "return { pad, url, re: /\\/\\// };",
        "}",
      ].join("\n"),
    );
    expect(new Function(`return (${compact})();`)()).toEqual(new Function(`return (${source})();`)());
  });

  it("is left as it is when a line break may be inside a literal", () => {
    const template = "function install() {\n  return `a\n    b`;\n}";
    expect(compactSource(template)).toBe(template);
    const continued = 'function install() {\n  return "a\\\n    b";\n}';
    expect(compactSource(continued)).toBe(continued);
    const comment = "function install() {\n  let a = 1; /* a\n  b */\n  return a;\n}";
    expect(compactSource(comment)).toBe(comment);
  });

  it("is what every script sends", () => {
    for (const script of [outlineScript, stepScript]) {
      for (const module of script.modules) {
        const own = module.install.toString();
        if (script.source.includes(compactSource(own))) continue;
        // An extension's shared modules are the base's objects: not sent at all.
        expect(script.base?.modules).toContain(module);
      }
    }
  });
});
