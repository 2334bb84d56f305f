// export: runs recorded with the scripted model, each exported as a Playwright spec and run with the
// real @playwright/test runner on the system's Chromium. Two groups of pages: the edge cases the
// export was written for (its own fixture pages: a form, an out-of-process iframe, an open shadow
// root, a login with a variable, 200 identical buttons, a closed shadow root; and the hard pages: a
// cross-site frame inside a cross-site frame, a button three shadow roots deep, a 5,000-element
// page), and the project's ordinary fixture pages used as a person would (a sign-in form, every
// input type, selects, a dialog, pointer actions, editors, keys, icon buttons, name rules, roles,
// shadow roots, frames). Measured: the share of exported steps that use a user-facing locator
// (getByRole, getByLabel, getByPlaceholder, getByText, getByTestId) over all steps and per group,
// the share of specs that pass unchanged, and the time exportScript takes for a 100-step session
// (biome's formatting included).

import {
  beaconsSince,
  type FixtureServer,
  match,
  runPlaywrightSpec,
  type ScriptedModel,
  type ScriptedRequest,
  serveExportPages,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { Deckhand, exportScript, type RecordedOperation, type RecordedRow } from "deckhand";
import { benchOptions, startDeckhand } from "./support/browser.ts";
import { checkTarget, emptyOutput, fmtMs, type SuiteOutput } from "./support/report.ts";
import { median } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

interface Step {
  instruction: string;
  line: RegExp;
  method?: string;
  args?: string[];
  /** Which match of `line` in the outline (default the first). */
  nth?: number | "last";
}

interface Case {
  name: string;
  path: string;
  steps: Step[];
  variables?: Record<string, string>;
  /** The element cannot be addressed by a locator: the spec is expected to stop at a test.fixme. */
  unaddressable?: boolean;
  /** Whether beacons tell what happened (the export fixture pages); else only the runner's verdict. */
  beacons?: boolean;
  /**
   * Texts the page shows after the run (its own result or event log): checked on the recorded
   * page, then extracted, so that the spec (exported with assertExtracts) expects them too.
   */
  shows?: string[];
  /** "edge": written to test the export's edge cases; "ordinary": the project's ordinary fixture pages. */
  group: "edge" | "ordinary";
}

const PASSWORD = "bench-Secret-9";

const CASES: Case[] = [
  {
    name: "form: text, select, checkbox, radio",
    group: "edge",
    path: "/x/form.html",
    beacons: true,
    steps: [
      {
        instruction: "type Ada into the full name",
        line: /textbox: Full name/,
        method: "fill",
        args: ["Ada"],
      },
      { instruction: "choose Japan", line: /combobox: Country/, method: "selectOption", args: ["Japan"] },
      { instruction: "subscribe", line: /checkbox: Subscribe to news/, method: "check" },
      { instruction: "large size", line: /radio: Large/, method: "check" },
      { instruction: "place the order", line: /button: Place order/ },
    ],
  },
  {
    name: "out-of-process iframe",
    group: "edge",
    path: "/x/frame-outer.html",
    beacons: true,
    steps: [
      {
        instruction: "type Ada as the card holder",
        line: /textbox: Card holder/,
        method: "fill",
        args: ["Ada"],
      },
      { instruction: "pay", line: /button: Pay now/ },
    ],
  },
  {
    name: "open shadow root",
    group: "edge",
    path: "/x/shadow.html",
    beacons: true,
    steps: [{ instruction: "shadow action", line: /button: Shadow action/ }],
  },
  {
    name: "login with %password%",
    group: "edge",
    path: "/x/login.html",
    beacons: true,
    variables: { password: PASSWORD },
    steps: [
      { instruction: "type ada as the username", line: /textbox: Username/, method: "fill", args: ["ada"] },
      { instruction: "type the password", line: /textbox: Password/, method: "fill", args: ["%password%"] },
      { instruction: "sign in", line: /button: Sign in/ },
    ],
  },
  {
    name: "200 identical buttons",
    group: "edge",
    path: "/x/buttons.html",
    unaddressable: true,
    steps: [{ instruction: "click the 117th Add button", line: /button: Add/, nth: 116 }],
  },
  {
    name: "closed shadow root",
    group: "edge",
    path: "/x/closed.html",
    unaddressable: true,
    steps: [{ instruction: "open the vault", line: /button: Open vault/ }],
  },
  {
    name: "cross-site frame in a cross-site frame (hard)",
    group: "edge",
    path: "frames/mixed.html",
    steps: [{ instruction: "click the child button", line: /button: Child button/, nth: "last" }],
  },
  {
    // Its middle root is closed: Playwright cannot reach the button, so the spec stops at a fixme.
    name: "three shadow roots deep, the middle one closed (hard)",
    group: "edge",
    path: "shadow/nested.html",
    unaddressable: true,
    steps: [{ instruction: "click the deep button", line: /button: Deep button/ }],
  },
  {
    name: "5,000-element page (hard)",
    group: "edge",
    path: "/generated/large?elements=5000",
    steps: [{ instruction: "click the target button", line: /button: Target button/ }],
  },
];

/** A step on an ordinary page: the instruction, the outline line the model picks, the method. */
function on(instruction: string, line: RegExp, method = "click", args: string[] = []): Step {
  return { instruction, line, method, args };
}

// The project's ordinary fixture pages (packages/testkit/fixtures/pages), used as a person would:
// every control each page offers that a run would touch. They send no beacons: what the run did is
// checked by the page's own result or event log (`shows`), which the exported spec must expect too.
const ORDINARY: Case[] = [
  {
    name: "sign-in form (form.html)",
    path: "form.html",
    group: "ordinary",
    variables: { password: PASSWORD },
    shows: ['"username":"ada"', '"remember":true'],
    steps: [
      on("type ada as the username", /textbox: Username/, "fill", ["ada"]),
      on("type the password", /textbox: Password/, "fill", ["%password%"]),
      on("tick remember me", /checkbox: Remember me/, "check"),
      on("sign in", /button: Sign in/),
    ],
  },
  {
    name: "every input type (inputs.html)",
    path: "inputs.html",
    group: "ordinary",
    shows: [
      "text-input:change:Ada Lovelace",
      "email-input:change:ada@example.com",
      "password-input:change:1234",
      "number-input:change:7",
      "tel-input:change:555 0100",
      "url-input:change:https://example.com",
      "search-input:change:kettles",
      "checkbox-input:change:true",
      "shipping-express:change:express",
      "textarea-input:change:Ring twice",
      "select-input:change:l",
      "editable-input:input:Bold words",
    ],
    steps: [
      on("type Ada Lovelace as the full name", /textbox: Full name/, "fill", ["Ada Lovelace"]),
      on("type the email", /textbox: Email address/, "fill", ["ada@example.com"]),
      on("type the secret code", /textbox: Secret code/, "fill", ["1234"]),
      on("set the quantity to 7", /spinbutton: Quantity/, "fill", ["7"]),
      on("type the phone number", /textbox: Phone number/, "fill", ["555 0100"]),
      on("type the website", /textbox: Website address/, "fill", ["https://example.com"]),
      on("search the site for kettles", /searchbox: Search the site/, "fill", ["kettles"]),
      on("subscribe to the newsletter", /checkbox: Subscribe to newsletter/, "check"),
      on("choose express shipping", /radio: Express/, "check"),
      on("write the comments", /textbox: Comments/, "fill", ["Ring twice"]),
      on("choose the large size", /combobox: Size/, "selectOption", ["Large"]),
      on("write in the rich text", /textbox: Rich text/, "fill", ["Bold words"]),
    ],
  },
  {
    name: "native select and custom listbox (select.html)",
    path: "select.html",
    group: "ordinary",
    shows: ["jp:Japan"],
    steps: [
      on("choose Japan", /combobox: Country/, "selectOption", ["Japan"]),
      on("open the colour picker", /button: Choose a color/),
      on("pick blue", /option: Blue/),
    ],
  },
  {
    name: "small login page (login-small.html)",
    path: "login-small.html",
    group: "ordinary",
    variables: { password: PASSWORD },
    shows: ["signed in:ada@example.com"],
    steps: [
      on("type the email", /textbox: Email/, "fill", ["ada@example.com"]),
      on("type the password", /textbox: Password/, "fill", ["%password%"]),
      on("keep me signed in", /checkbox: Keep me signed in/, "check"),
      on("sign in", /button: Sign in/),
    ],
  },
  {
    name: "modal dialog (dialog.html)",
    path: "dialog.html",
    group: "ordinary",
    shows: ["closed:save:Grace"],
    steps: [
      on("open the dialog", /button: Open dialog/),
      on("type Grace as the name", /textbox: Name/, "fill", ["Grace"]),
      on("save", /button: Save/),
    ],
  },
  {
    name: "double click and hover (actions.html)",
    path: "actions.html",
    group: "ordinary",
    shows: ["rename dblclick", "help shown"],
    steps: [on("rename", /button: Rename/, "doubleClick"), on("show the help", /button: Help/, "hover")],
  },
  {
    name: "contenteditable editors (contenteditable.html)",
    path: "contenteditable.html",
    group: "ordinary",
    steps: [
      on("write in the editor", /textbox: Editor/, "fill", ["New text"]),
      on("write in the plain editor", /textbox: Plain text editor/, "fill", ["Plain words"]),
    ],
  },
  {
    name: "keys in a field (keyboard.html)",
    path: "keyboard.html",
    group: "ordinary",
    shows: ["submitted:hello"],
    steps: [
      on("type hello", /textbox: Text/, "fill", ["hello"]),
      on("press Enter in the text field", /textbox: Text/, "press", ["Enter"]),
    ],
  },
  {
    name: "icon buttons (svg-button.html)",
    path: "svg-button.html",
    group: "ordinary",
    shows: ["close clicked", "search clicked"],
    steps: [on("close the dialog", /button: Close dialog/), on("search", /button: Search/)],
  },
  {
    name: "accessible-name rules (accname.html)",
    path: "accname.html",
    group: "ordinary",
    steps: [
      on("type the billing address", /textbox: Billing address/, "fill", ["1 Main St"]),
      on("type the phone", /textbox: Phone/, "fill", ["555 0100"]),
      on("type into the placeholder field", /textbox: Placeholder only/, "fill", ["words"]),
      on("write notes", /textbox: Notes/, "fill", ["more notes"]),
      on("favourite it", /button: Favourite/),
      on("press the labelled div button", /button: Labelled div button/),
    ],
  },
  {
    name: "one element of each role (roles.html)",
    path: "roles.html",
    group: "ordinary",
    steps: [
      on("type a name", /textbox: Name/, "fill", ["Ada"]),
      on("type the email", /textbox: Email here/, "fill", ["ada@example.com"]),
      on("tick remember me", /checkbox: Remember me/, "check"),
      on("choose Two", /combobox: S1/, "selectOption", ["Two"]),
      on("press Btn", /button: Btn/),
      on("press the close button", /button: Close/),
    ],
  },
  {
    name: "open shadow root (shadow/open.html)",
    path: "shadow/open.html",
    group: "ordinary",
    shows: ["open shadow clicked:deep"],
    steps: [
      on("type deep into the shadow input", /textbox: Shadow input/, "fill", ["deep"]),
      on("press the shadow button", /button: Open shadow button/),
    ],
  },
  {
    name: "slotted content (shadow/slots.html)",
    path: "shadow/slots.html",
    group: "ordinary",
    shows: ["slotted clicked"],
    steps: [
      on("run the card action", /button: Card action/),
      on("press the slotted button", /button: Slotted button/),
    ],
  },
  {
    name: "same-origin iframe (frames/same-origin.html)",
    path: "frames/same-origin.html",
    group: "ordinary",
    steps: [
      on("type into the child input", /textbox: Child input/, "fill", ["inside"]),
      on("press the child button", /button: Child button/),
    ],
  },
  {
    name: "cross-site iframe (frames/cross-site.html)",
    path: "frames/cross-site.html",
    group: "ordinary",
    steps: [
      on("type into the child input", /textbox: Child input/, "fill", ["inside"]),
      on("press the child button", /button: Child button/),
    ],
  },
];

function idOf(request: ScriptedRequest, line: RegExp, nth: number | "last" = 0): number {
  const all = [...request.text.matchAll(new RegExp(`\\[(\\d+)\\] ${line.source}`, "g"))];
  const found = nth === "last" ? all.at(-1) : all[nth];
  if (!found) throw new Error(`No line ${line} (match ${nth}) in the outline:\n${request.text.slice(-4000)}`);
  return Number(found[1]);
}

const USER_FACING = new Set(["role", "label", "placeholder", "text", "testId"]);

interface CaseResult {
  name: string;
  group: Case["group"];
  /** Each step's locator kind ("role", "label", ..., "css", or "fixme"). */
  kinds: string[];
  steps: number;
  userFacing: number;
  passed: boolean;
  stoppedAtFixme: boolean;
  note: string;
}

async function runCase(
  browserDh: Deckhand,
  model: ScriptedModel,
  site: FixtureServer,
  c: Case,
): Promise<{ result: CaseResult; rows: readonly RecordedRow[] }> {
  const context = await browserDh.context.browser.newContext();
  const dh = Deckhand.inContext(context, benchOptions({ model: modelOf(model) }));
  await dh.init();
  let rows: readonly RecordedRow[];
  let spec: string;
  let recorded: string[];
  /** What the recorded run was expected to make the page show and did not. */
  const missing: string[] = [];
  try {
    await dh.page.goto(c.path.includes("://") ? c.path : site.url(c.path));
    const from = site.requests.length;
    for (const s of c.steps) {
      const rule = model.on(match.schemaName("act"), (request) => ({
        elementId: idOf(request, s.line, s.nth),
        method: s.method ?? "click",
        arguments: s.args ?? [],
        description: s.instruction,
        completed: true,
      }));
      try {
        const result = await dh.act(s.instruction, c.variables ? { variables: c.variables } : {});
        if (!result.success) throw new Error(`${c.name}: ${result.message}`);
      } finally {
        rule.remove();
      }
    }
    recorded = beaconsSince(site, from);
    for (const text of c.shows ?? []) {
      // The run really had this effect (read off the page, not the model's word), and the spec
      // exported with assertExtracts must find it again on the page it drives. A page may write
      // its result a moment after the act has returned (a dialog's close event is queued).
      let body = "";
      for (let i = 0; i < 50 && !body.includes(text); i++) {
        if (i) await new Promise((r) => setTimeout(r, 100));
        body = await dh.page.evaluate<string>("document.body.textContent ?? ''");
      }
      if (!body.includes(text)) {
        missing.push(text);
        continue;
      }
      const rule = model.on(match.schemaName("extract"), { extraction: text });
      try {
        await dh.extract(`what the page shows for ${text.split(":")[0]}`);
      } finally {
        rule.remove();
      }
    }
    rows = dh.historyRecorder.recordedRows();
    spec = await dh.exportScript({ format: "playwright-test", assertExtracts: true });
  } finally {
    await dh.close();
  }
  const steps = rows.flatMap((r) => (r.result.recorded as RecordedOperation | undefined)?.steps ?? []);
  const kinds = steps.map((s) =>
    s.locators?.unaddressable || !s.locators?.candidates[0] ? "fixme" : s.locators.candidates[0].kind,
  );
  const userFacing = kinds.filter((k) => USER_FACING.has(k)).length;
  const from = site.requests.length;
  const ran = await runPlaywrightSpec(spec, { PASSWORD });
  const stoppedAtFixme = ran.status === 0 && ran.output.includes("1 skipped");
  const sameEffects =
    !c.beacons || JSON.stringify(beaconsSince(site, from).sort()) === JSON.stringify([...recorded].sort());
  const passed = ran.status === 0 && ran.output.includes("1 passed") && sameEffects && missing.length === 0;
  const note = missing.length
    ? `the recorded run did not show ${missing.join(", ")}`
    : passed
      ? "passed"
      : stoppedAtFixme
        ? "stopped at its test.fixme"
        : ran.status !== 0
          ? `failed: ${ran.output.split("\n").find((l) => /Error|expect|Timeout/.test(l)) ?? "see the runner"}`
          : "other page effects than the recorded run";
  if (spec.includes(PASSWORD)) throw new Error(`${c.name}: the variable's value is in the exported spec`);
  if (!passed && process.env.DECKHAND_BENCH_EXPORT_DEBUG) console.error(`${c.name}\n${spec}\n${ran.output}`);
  return {
    result: {
      name: c.name,
      group: c.group,
      kinds,
      steps: steps.length,
      userFacing,
      passed,
      stoppedAtFixme,
      note,
    },
    rows,
  };
}

function modelOf(model: ScriptedModel) {
  return { modelName: "openai/gpt-4.1-mini", apiKey: "sk-bench-export-0123456789", baseURL: model.baseURL };
}

export const exportSuite: Suite = {
  name: "export",
  title: "runs exported as Playwright specs: user-facing locators, specs passing, export time",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const out = emptyOutput();
    const [model, site] = await Promise.all([startScriptedModel(), startFixtureServer()]);
    const unserve = serveExportPages(site);
    const dh = await startDeckhand({ model: modelOf(model) });
    const results: CaseResult[] = [];
    let sample: readonly RecordedRow[] = [];
    try {
      for (const c of [...CASES, ...ORDINARY]) {
        ctx.progress(`export: ${c.name}`);
        const { result, rows } = await runCase(dh, model, site, c);
        results.push(result);
        if (c.name.startsWith("form")) sample = rows;
      }
    } finally {
      await dh.close();
      unserve();
      await Promise.all([model.close(), site.close()]);
    }

    // A 100-step session: the form run's act rows, repeated.
    const actRows = sample.filter((r) => r.method === "act");
    const hundred: RecordedRow[] = [];
    while (
      hundred.reduce((n, r) => n + ((r.result.recorded as RecordedOperation).steps.length ?? 0), 0) < 100
    )
      hundred.push(...actRows.map((r) => ({ ...r })));
    const times: number[] = [];
    for (let i = 0; i < ctx.reps(15, 5); i++) {
      const started = performance.now();
      exportScript(hundred, { format: "playwright-test" });
      times.push(performance.now() - started);
    }
    const exportMs = median(times);

    const all = [...CASES, ...ORDINARY];
    const addressable = results.filter((r) => !all.find((c) => c.name === r.name)!.unaddressable);
    const passed = addressable.filter((r) => r.passed).length;
    const fixmes = results.filter((r) => r.stoppedAtFixme).length;
    /** Steps, user-facing steps and their share over some runs. */
    const tally = (rs: CaseResult[]) => {
      const steps = rs.reduce((n, r) => n + r.steps, 0);
      const userFacing = rs.reduce((n, r) => n + r.userFacing, 0);
      return { steps, userFacing, share: steps ? (100 * userFacing) / steps : 0 };
    };
    const overall = tally(results);
    const ordinary = tally(results.filter((r) => r.group === "ordinary"));
    const edge = tally(results.filter((r) => r.group === "edge"));
    const addressableTally = tally(addressable);
    const byKind: Record<string, number> = {};
    for (const r of results) for (const k of r.kinds) byKind[k] = (byKind[k] ?? 0) + 1;
    out.tables.push({
      title: "Exported Playwright specs, run with the real test runner",
      columns: ["run", "pages", "steps", "user-facing", "locators", "spec"],
      rows: results.map((r) => [
        r.name,
        r.group,
        String(r.steps),
        String(r.userFacing),
        r.kinds.join(" "),
        r.note,
      ]),
      notes: [
        "user-facing: the step's locator is getByRole/getByLabel/getByPlaceholder/getByText/getByTestId, checked unique when the step ran.",
        "edge: the export's own fixture pages and the hard pages, written for its edge cases; ordinary: the project's ordinary fixture pages (packages/testkit/fixtures/pages).",
        "The 200-buttons and both closed-shadow runs have no safe locator by design: their specs stop at a test.fixme with the reason.",
        "An ordinary page's spec also expects what the recorded run made the page show (its result or event log), through the run's extracts (assertExtracts).",
      ],
    });
    const passShare = addressable.length ? (100 * passed) / addressable.length : 0;
    out.targets.push(
      checkTarget(
        "exported steps with a user-facing locator, all pages (%)",
        Math.round(overall.share),
        "%",
        ">=",
        90,
      ),
    );
    out.targets.push(
      checkTarget(
        "exported steps with a user-facing locator, ordinary pages (%)",
        Math.round(ordinary.share),
        "%",
        ">=",
        90,
      ),
    );
    out.targets.push(
      checkTarget(
        "exported steps with a user-facing locator, edge-case pages (%)",
        Math.round(edge.share),
        "%",
        ">=",
        90,
      ),
    );
    out.targets.push(
      checkTarget(
        "steps a locator can address with a user-facing one (%)",
        Math.round(addressableTally.share),
        "%",
        ">=",
        90,
      ),
    );
    out.targets.push(
      checkTarget("specs of addressable runs that pass unchanged (%)", Math.round(passShare), "%", "==", 100),
    );
    out.targets.push(
      checkTarget("exportScript, 100-step session (median ms)", Math.round(exportMs), "ms", "<=", 200),
    );
    out.notes.push(
      `${overall.userFacing}/${overall.steps} steps user-facing (ordinary pages ${ordinary.userFacing}/${ordinary.steps}, ` +
        `edge-case pages ${edge.userFacing}/${edge.steps}; locators: ${JSON.stringify(byKind)}); ` +
        `${passed}/${addressable.length} addressable specs passed; ` +
        `${fixmes} stopped at their test.fixme; export of ${hundred.length} act rows (` +
        `${hundred.reduce((n, r) => n + (r.result.recorded as RecordedOperation).steps.length, 0)} steps): ` +
        `median ${fmtMs(exportMs)} ms over ${times.length} runs.`,
    );
    out.figures = {
      results,
      userFacingShare: overall.share,
      ordinaryShare: ordinary.share,
      edgeShare: edge.share,
      passShare,
      exportMs: times,
    };
    return out;
  },
};
