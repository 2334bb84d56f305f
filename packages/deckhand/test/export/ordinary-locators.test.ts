// The record-time locator choice on the project's ordinary fixture pages (issue 20's figure): each
// step a person would address by what the page shows (its role and name, its label, its
// placeholder) must be exported with that locator, not with CSS or a test.fixme. Recorded with the
// scripted model through the real act path; `npm run bench -- --only=export` runs the same kind of
// runs' specs with the real Playwright runner.

import type { Deckhand } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idOf, type OpsFixture, onAct, opsFixture, step } from "../ops/helpers.ts";

interface Step {
  line: RegExp;
  method?: string;
  args?: string[];
  /** The locator a person expects in the exported spec. */
  expect: string;
}

const role = (r: string, name: string) =>
  `getByRole(${JSON.stringify(r)}, { name: ${JSON.stringify(name)}, exact: true })`;
const label = (text: string) => `getByLabel(${JSON.stringify(text)}, { exact: true })`;

const PAGES: { path: string; steps: Step[] }[] = [
  {
    path: "form.html",
    steps: [
      { line: /textbox: Username/, method: "fill", args: ["ada"], expect: role("textbox", "Username") },
      { line: /checkbox: Remember me/, method: "check", expect: role("checkbox", "Remember me") },
      { line: /button: Sign in/, expect: role("button", "Sign in") },
    ],
  },
  {
    path: "inputs.html",
    steps: [
      {
        line: /textbox: Email address/,
        method: "fill",
        args: ["a@b.c"],
        expect: role("textbox", "Email address"),
      },
      { line: /textbox: Secret code/, method: "fill", args: ["1234"], expect: label("Secret code") },
      { line: /spinbutton: Quantity/, method: "fill", args: ["7"], expect: role("spinbutton", "Quantity") },
      {
        line: /textbox: Phone number/,
        method: "fill",
        args: ["555"],
        expect: role("textbox", "Phone number"),
      },
      {
        line: /textbox: Website address/,
        method: "fill",
        args: ["https://example.com"],
        expect: role("textbox", "Website address"),
      },
      {
        line: /searchbox: Search the site/,
        method: "fill",
        args: ["k"],
        expect: role("searchbox", "Search the site"),
      },
      { line: /radio: Express/, method: "check", expect: role("radio", "Express") },
      { line: /textbox: Comments/, method: "fill", args: ["x"], expect: role("textbox", "Comments") },
      { line: /combobox: Size/, method: "selectOption", args: ["Large"], expect: role("combobox", "Size") },
      { line: /textbox: Rich text/, method: "fill", args: ["y"], expect: role("textbox", "Rich text") },
    ],
  },
  {
    path: "select.html",
    steps: [
      {
        line: /combobox: Country/,
        method: "selectOption",
        args: ["Japan"],
        expect: role("combobox", "Country"),
      },
      { line: /(?:button|combobox): Choose a color/, expect: role("button", "Choose a color") },
      { line: /option: Blue/, expect: role("option", "Blue") },
    ],
  },
  {
    path: "login-small.html",
    steps: [
      { line: /textbox: Email/, method: "fill", args: ["a@b.c"], expect: role("textbox", "Email") },
      { line: /checkbox: Keep me signed in/, method: "check", expect: role("checkbox", "Keep me signed in") },
      { line: /button: Sign in/, expect: role("button", "Sign in") },
    ],
  },
  {
    path: "accname.html",
    steps: [
      {
        line: /textbox: Billing address/,
        method: "fill",
        args: ["1"],
        expect: role("textbox", "Billing address"),
      },
      {
        line: /textbox: Placeholder only/,
        method: "fill",
        args: ["w"],
        expect: role("textbox", "Placeholder only"),
      },
      { line: /button: Favourite/, expect: role("button", "Favourite") },
      { line: /button: Labelled div button/, expect: role("button", "Labelled div button") },
    ],
  },
  {
    path: "svg-button.html",
    steps: [
      { line: /button: Close dialog/, expect: role("button", "Close dialog") },
      { line: /button: Search/, expect: role("button", "Search") },
    ],
  },
  {
    path: "contenteditable.html",
    steps: [{ line: /textbox: Editor/, method: "fill", args: ["New"], expect: role("textbox", "Editor") }],
  },
  {
    path: "shadow/slots.html",
    steps: [
      { line: /button: Card action/, expect: role("button", "Card action") },
      { line: /button: Slotted button/, expect: role("button", "Slotted button") },
    ],
  },

  {
    path: "roles.html",
    steps: [
      { line: /textbox: Name/, method: "fill", args: ["Ada"], expect: role("textbox", "Name") },
      { line: /textbox: Email here/, method: "fill", args: ["a@b.c"], expect: role("textbox", "Email here") },
      { line: /combobox: S1/, method: "selectOption", args: ["Two"], expect: role("combobox", "S1") },
      { line: /button: Btn/, expect: role("button", "Btn") },
      { line: /button: Close/, expect: role("button", "Close") },
    ],
  },
  {
    path: "dialog.html",
    steps: [
      { line: /button: Open dialog/, expect: role("button", "Open dialog") },
      { line: /textbox: Name/, method: "fill", args: ["Grace"], expect: role("textbox", "Name") },
      { line: /button: Save/, expect: role("button", "Save") },
    ],
  },
  {
    path: "actions.html",
    steps: [
      { line: /button: Rename/, method: "doubleClick", expect: role("button", "Rename") },
      { line: /button: Help/, method: "hover", expect: role("button", "Help") },
    ],
  },
  {
    path: "keyboard.html",
    steps: [{ line: /textbox: Text/, method: "press", args: ["Enter"], expect: role("textbox", "Text") }],
  },
  {
    path: "shadow/open.html",
    steps: [
      {
        line: /textbox: Shadow input/,
        method: "fill",
        args: ["deep"],
        expect: role("textbox", "Shadow input"),
      },
      { line: /button: Open shadow button/, expect: role("button", "Open shadow button") },
    ],
  },
];

describe("LOCAL: ordinary fixture pages", () => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
  });
  afterAll(async () => {
    await fx?.close();
  });

  async function record(dh: Deckhand, s: Step) {
    const rule = onAct(fx.model, (request) =>
      step({
        elementId: idOf(request, s.line),
        method: s.method ?? "click",
        arguments: s.args ?? [],
        description: String(s.line),
      }),
    );
    try {
      const result = await dh.act(`act on ${s.line}`);
      expect(result.success, result.message).toBe(true);
    } finally {
      rule.remove();
    }
  }

  for (const p of PAGES) {
    it(`${p.path}: each step by its user-facing locator`, async () => {
      await fx.dh.page.goto(fx.site.url(p.path));
      for (const s of p.steps) await record(fx.dh, s);
      const spec = await fx.dh.exportScript({ format: "playwright-test" });
      // The spec holds the whole session: only this page's steps are compared.
      const own = spec.slice(spec.lastIndexOf(`goto(${JSON.stringify(fx.site.url(p.path))})`));
      // Compared without the formatter's line breaks and trailing commas.
      const flat = (text: string) => text.replace(/\s+/g, "").replace(/,([})])/g, "$1");
      for (const s of p.steps) expect(flat(own), `${s.line}\n${own}`).toContain(flat(s.expect));
      expect(own).not.toContain("test.fixme");
      expect(own).not.toMatch(/\.locator\("(?!iframe)/);
    });
  }
});
