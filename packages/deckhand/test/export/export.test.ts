// Exporting a run as a script (issue 20). Each scenario is recorded with the scripted model on a
// fixture page (pages.ts), exported, and the export is run for real: the Playwright spec with the
// real @playwright/test runner on the system's Chromium, after type-checking it against
// @playwright/test's types. The page effects (server-side beacons: which element got which input)
// must be those of the recorded run. A variable's value appears in no exported file.

import {
  beaconsOf,
  beaconsSince,
  type FixtureRequest,
  match,
  runPlaywrightSpecs,
  serveExportPages,
  typeCheck,
} from "@deckhand/testkit";
import type { AgentResult, Deckhand, LogLine, Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actByRules, call, scriptAgent, verifyWith } from "../agent/helpers.ts";
import { anotherDeckhand, idOf, MODES, type OpsFixture, onAct, opsFixture, step } from "../ops/helpers.ts";

/** What each mode exported, by scenario, with the fixture site's origins written as placeholders. */
const exported: Record<string, Record<string, string>> = { LOCAL: {}, REMOTE: {} };

const PASSWORD = "s3cret-Pa55word-42";

/** A spec without its first two lines (where and when the run was recorded), origins as placeholders. */
const body = (text: string) => text.split("\n").slice(2).join("\n");

/**
 * The specs the Playwright runner has replayed, by scenario and body, with the beacons of the
 * replay. The two modes export the same script for the same run (the last test); a spec the other
 * mode already type-checked and replayed is not run again, and this run's effects are compared
 * with that replay's instead.
 */
const replayed = new Map<string, { beacons: string[] }>();

/** A recorded run's export, waiting for its mode's replay (the mode's last test). */
interface Recorded {
  name: string;
  /** The scenario and the spec's body (origins as placeholders): what `replayed` is keyed by. */
  key: string;
  spec: string;
  /** The beacons of the recorded run. */
  recorded: string[];
  /** What the runner needs in its environment (a variable's value). */
  env: Record<string, string>;
  /** The spec is expected to stop at a test.fixme (the beacons are not compared). */
  fixme: boolean;
}

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  let unserve: () => void;

  beforeAll(async () => {
    fx = await opsFixture(mode);
    unserve = serveExportPages(fx.site);
  });
  afterAll(async () => {
    unserve?.();
    await fx?.close();
  });

  /** act(instruction), the scripted model answering with the element on outline line `line`. */
  async function actOn(
    dh: Deckhand,
    instruction: string,
    line: string | RegExp,
    method = "click",
    args: string[] = [],
    options: Parameters<Deckhand["act"]>[1] = {},
  ) {
    const rule = onAct(fx.model, (request) =>
      step({ elementId: idOf(request, line), method, arguments: args, description: instruction }),
    );
    try {
      const result = await dh.act(instruction, options);
      expect(result.success, result.message).toBe(true);
    } finally {
      rule.remove();
    }
  }

  /** This mode's exports, in the order recorded; the mode's last test replays them. */
  const recordedRuns: Recorded[] = [];

  /**
   * Records a run of `perform` in a session of its own and exports it in both formats. The spec is
   * type-checked and replayed by the mode's last test, all of the mode's specs in one run of the
   * Playwright runner (a runner and a browser start each would cost more than the rest of the
   * file), which must leave the beacons of the recorded run.
   */
  async function recordAndExport(
    name: string,
    perform: (dh: Deckhand) => Promise<void>,
    options: {
      env?: Record<string, string>;
      /** The spec is expected to stop at a test.fixme (the beacons are not compared). */
      fixme?: boolean;
      assertExtracts?: boolean;
      logs?: LogLine[];
    } = {},
  ): Promise<{ spec: string; recorded: string[]; script: string }> {
    const logs = options.logs;
    const dh = await anotherDeckhand(fx, logs ? { logger: (line) => logs.push(line), verbose: 2 } : {});
    let spec: string;
    let script: string;
    let recorded: string[];
    try {
      const from = fx.site.requests.length;
      await perform(dh);
      recorded = beaconsSince(fx.site, from);
      spec = await dh.exportScript({ format: "playwright-test", assertExtracts: options.assertExtracts });
      script = await dh.exportScript({ format: "deckhand" });
    } finally {
      await dh.close();
    }
    const general = (text: string) =>
      text.split(fx.site.origin).join("ORIGIN").split(fx.site.crossOrigin).join("CROSS_ORIGIN");
    exported[mode]![name] = general(spec);
    exported[mode]![`${name} (deckhand)`] = general(script);
    recordedRuns.push({
      name,
      key: `${name}\n${body(exported[mode]![name]!)}`,
      spec,
      recorded,
      env: options.env ?? {},
      fixme: options.fixme ?? false,
    });
    return { spec, recorded, script };
  }

  it("a form with a text field, a select, a checkbox and a radio button; an extract becomes an expect", async () => {
    const { spec, recorded } = await recordAndExport(
      "form",
      async (dh) => {
        await dh.page.goto(fx.site.url("/x/form.html"));
        await actOn(dh, "type Ada Lovelace into the full name", "textbox: Full name", "fill", [
          "Ada Lovelace",
        ]);
        await actOn(dh, "choose Japan as the country", "combobox: Country", "selectOption", ["Japan"]);
        await actOn(dh, "subscribe to the news", "checkbox: Subscribe to news", "check");
        await actOn(dh, "pick the large size", "radio: Large", "check");
        const rule = fx.model.on(match.schemaName("extract"), { extraction: "Order" });
        expect(await dh.extract("the page's heading")).toMatchObject({ extraction: "Order" });
        rule.remove();
        await actOn(dh, "place the order", "button: Place order");
      },
      { assertExtracts: true },
    );
    expect(recorded.sort()).toEqual(
      ["country=jp", "name=Ada Lovelace", "size=l", "submit=Ada Lovelace|jp|true|l", "subscribe=true"].sort(),
    );
    expect(spec).toContain('getByRole("textbox", { name: "Full name", exact: true })');
    expect(spec).toContain('.selectOption("Japan")');
    expect(spec).toContain('toContainText("Order")');
    expect(spec).not.toContain("xpath=");
    expect(spec).not.toContain("test.fixme");
  });

  it("a custom dropdown: opened, then its option clicked", async () => {
    const { spec, recorded } = await recordAndExport("dropdown", async (dh) => {
      await dh.page.goto(fx.site.url("/x/dropdown.html"));
      // As a model does it: selectOption opens the custom list, then the option is clicked.
      let asked = 0;
      const rule = onAct(fx.model, (request) =>
        asked++ === 0
          ? step({
              elementId: idOf(request, /(?:button|combobox): Choose a fruit/),
              method: "selectOption",
              arguments: ["Cherry"],
              description: "open the fruit picker",
              completed: false,
            })
          : step({
              elementId: idOf(request, "option: Cherry"),
              method: "click",
              description: "click Cherry",
            }),
      );
      const result = await dh.act("pick Cherry in the fruit picker");
      rule.remove();
      expect(result.success, result.message).toBe(true);
    });
    expect(recorded).toEqual(["fruit=Cherry"]);
    expect(spec).toContain('getByRole("option", { name: "Cherry", exact: true })');
  });

  it("an out-of-process iframe on a second site, reached through its frame", async () => {
    const { spec, recorded } = await recordAndExport("iframe", async (dh) => {
      await dh.page.goto(fx.site.url("/x/frame-outer.html"));
      // The payment frame really is another renderer process (a target of its own).
      expect(dh.page.frames().some((f) => f.isOutOfProcess)).toBe(true);
      await actOn(dh, "type Ada as the card holder", "textbox: Card holder", "fill", ["Ada"]);
      await actOn(dh, "pay", "button: Pay now");
    });
    expect(recorded.sort()).toEqual(["holder=Ada", "pay=clicked"]);
    expect(spec).toContain("locator('iframe[title=\"Payment\"]')");
    expect(spec).toContain(".contentFrame()");
  });

  it("an open shadow root, through Playwright's own piercing", async () => {
    const { spec, recorded } = await recordAndExport("shadow", async (dh) => {
      await dh.page.goto(fx.site.url("/x/shadow.html"));
      await actOn(dh, "run the shadow action", "button: Shadow action");
    });
    expect(recorded).toEqual(["shadow=clicked"]);
    expect(spec).toContain('getByRole("button", { name: "Shadow action", exact: true })');
  });

  it("a link that opens a new tab, followed there", async () => {
    const { spec, recorded } = await recordAndExport("new tab", async (dh) => {
      await dh.page.goto(fx.site.url("/x/tabs.html"));
      const opened = new Promise<Page>((resolve) => {
        const off = dh.context.onPage((p) => {
          off();
          resolve(p);
        });
      });
      await actOn(dh, "open the details", "link: Open details");
      const tab = await opened;
      await tab.waitForLoadState("load");
      await actOn(dh, "confirm the details", "button: Confirm details", "click", [], { page: tab });
    });
    expect(recorded).toEqual(["open=details", "confirm=details"]);
    expect(spec).toContain('context.waitForEvent("page")');
    expect(spec).toMatch(/page1\s*\.getByRole\("button", \{ name: "Confirm details", exact: true \}\)/);
  });

  it("a login with a %password% variable: its value is in no export, log or runner output", async () => {
    const logs: LogLine[] = [];
    const { spec, script, recorded } = await recordAndExport(
      "login",
      async (dh) => {
        await dh.page.goto(fx.site.url("/x/login.html"));
        await actOn(dh, "type ada as the username", "textbox: Username", "fill", ["ada"]);
        await actOn(dh, "type %password% as the password", /textbox: Password/, "fill", ["%password%"], {
          variables: { password: PASSWORD },
        });
        await actOn(dh, "sign in", "button: Sign in");
      },
      { env: { PASSWORD }, logs },
    );
    // The page got the password: the run and the spec typed the real value.
    expect(recorded).toEqual([`login=ada:${PASSWORD}`]);
    expect(spec).toContain('variable("PASSWORD")');
    expect(script).toContain('"%password%"');
    // (Nor in the runner's output: the replay checks every variable's value.)
    for (const text of [spec, script, JSON.stringify(logs)]) expect(text).not.toContain(PASSWORD);
    expect(logs.length).toBeGreaterThan(0);
  });

  it("200 identical buttons: the one only its position tells apart is a test.fixme, never a locator", async () => {
    const { spec } = await recordAndExport(
      "buttons",
      async (dh) => {
        await dh.page.goto(fx.site.url("/x/buttons.html"));
        const rule = onAct(fx.model, (request) => {
          const ids = [...request.text.matchAll(/\[(\d+)\] button: Add/g)].map((m) => Number(m[1]));
          expect(ids.length).toBe(200);
          return step({ elementId: ids[116]!, method: "click", description: "click the 117th Add button" });
        });
        const result = await dh.act("click the 117th Add button");
        rule.remove();
        expect(result.success, result.message).toBe(true);
      },
      { fixme: true },
    );
    expect(spec).toContain("test.fixme(");
    expect(spec).toContain("only its position tells it apart");
    expect(spec).not.toContain(".click()");
  });

  /**
   * The agent run of the scenarios below, the scripted model answering: its act, keys and wait
   * steps. With `stream`, through the AI SDK stream (`stream: true`), read to its end.
   */
  async function orderForGrace(dh: Deckhand, stream = false): Promise<void> {
    await dh.page.goto(fx.site.url("/x/form.html"));
    const rules = actByRules(fx.model, [
      { when: /full name/, line: "textbox: Full name", method: "fill", args: ["Grace Hopper"] },
      { when: /place the order/, line: "button: Place order", method: "click" },
    ]);
    const verdict = verifyWith(fx.model, () => true);
    const turns = scriptAgent(fx.model, [
      [call("act", { action: "type Grace Hopper into the full name" })],
      [call("keys", { method: "press", value: "Tab" })],
      [call("wait", { timeMs: 10 })],
      [call("act", { action: "place the order" })],
      [call("done", { reasoning: "The order is placed", taskComplete: true })],
    ]);
    try {
      let result: AgentResult;
      if (stream) {
        const streamed = await dh.agent({ stream: true }).execute("order for Grace Hopper");
        for await (const _ of streamed.fullStream);
        result = await streamed.result;
      } else result = await dh.agent().execute("order for Grace Hopper");
      expect(result.success, result.message).toBe(true);
    } finally {
      for (const rule of [rules, verdict, turns]) rule.remove();
    }
  }

  it("an agent run: its act, keys and wait steps", async () => {
    const { spec, recorded } = await recordAndExport("agent", (dh) => orderForGrace(dh));
    expect(recorded.sort()).toEqual(["name=Grace Hopper", "submit=Grace Hopper||false|"]);
    expect(spec).toMatch(
      /getByRole\("textbox", \{ name: "Full name", exact: true \}\)\s*\.fill\("Grace Hopper"\)/,
    );
    expect(spec).toContain('await page.keyboard.press("Tab");');
    expect(spec).toContain("await page.waitForTimeout(10);");
  });

  it("a streamed agent run (stream: true) exports as the same run not streamed, and its spec runs", async () => {
    // REMOTE refuses stream: true (the run is on the service, streamed to the client as events),
    // so there the run is the plain one: the check across modes below then compares the LOCAL
    // streamed run's export with the service's.
    const streamed = mode === "LOCAL";
    const { spec, recorded } = await recordAndExport("agent (stream)", (dh) => orderForGrace(dh, streamed));
    expect(recorded.sort()).toEqual(["name=Grace Hopper", "submit=Grace Hopper||false|"]);
    expect(spec).toContain('await page.keyboard.press("Tab");');
    // Both formats, the header (where and when it was recorded) aside.
    const body = (text: string) => text.split("\n").slice(2).join("\n");
    const run = exported[mode]!;
    expect(body(run["agent (stream)"]!)).toBe(body(run.agent!));
    expect(body(run["agent (stream) (deckhand)"]!)).toBe(body(run["agent (deckhand)"]!));
  });

  it("an unknown format is a clear error; REMOTE: another project's key gets nothing of the script", async () => {
    const dh = await anotherDeckhand(fx);
    try {
      await dh.page.goto(fx.site.url("/x/shadow.html"));
      await actOn(dh, "run the shadow action", "button: Shadow action");
      await expect(dh.exportScript({ format: "python" as never })).rejects.toThrow(
        'exportScript() format must be one of playwright-test, deckhand; got "python".',
      );
      if (fx.service) {
        const path = `${fx.service.url}/v1/sessions/${dh.sessionId}/script`;
        const own = { "x-platform-api-key": fx.service.apiKey };
        const bad = await fetch(`${path}?format=python`, { headers: own });
        expect(bad.status).toBe(400);
        expect(((await bad.json()) as { error: string }).error).toContain("format");
        // The attack: a valid key of another project asks for this session's script.
        const foreign = await fetch(`${path}?format=deckhand`, {
          headers: { "x-platform-api-key": fx.service.otherApiKey },
        });
        expect(foreign.status).toBe(404);
        const body = await foreign.text();
        expect(body).not.toContain("Shadow action");
        expect(body).not.toContain("act(");
        const mine = await fetch(`${path}?format=deckhand`, { headers: own });
        expect(mine.status).toBe(200);
        expect(await mine.text()).toContain('description: "run the shadow action"');
      }
    } finally {
      await dh.close();
    }
  });

  it("a closed shadow root: a test.fixme with the reason", async () => {
    const { spec } = await recordAndExport(
      "closed shadow",
      async (dh) => {
        await dh.page.goto(fx.site.url("/x/closed.html"));
        await actOn(dh, "open the vault", "button: Open vault");
      },
      { fixme: true },
    );
    expect(spec).toContain("inside a closed shadow root");
    expect(spec).not.toContain(".click()");
  });

  // Last, as a project would run its recorded specs: one runner, one browser, one context per test.
  it("every exported spec type-checks, and the Playwright runner replays each with the recorded run's effects", async () => {
    expect(recordedRuns.length).toBeGreaterThan(0);
    const toRun = recordedRuns.filter((run) => !replayed.has(run.key));
    const file = (run: Recorded) =>
      `${recordedRuns.indexOf(run)}-${run.name.replace(/[^a-z0-9]+/gi, "-")}.spec.ts`;
    const env: Record<string, string> = {};
    for (const run of recordedRuns)
      for (const [name, value] of Object.entries(run.env)) {
        expect(env[name] ?? value, `two specs need different values of ${name}`).toBe(value);
        env[name] = value;
      }
    if (toRun.length > 0) {
      const specs = Object.fromEntries(toRun.map((run) => [file(run), run.spec]));
      const checked = await typeCheck(specs);
      expect(checked.status, checked.output).toBe(0);
      const from = fx.site.requests.length;
      const ran = await runPlaywrightSpecs(specs, env);
      const requests = fx.site.requests.slice(from);
      // A variable's value reaches no part of the runner's output.
      for (const value of Object.values(env)) expect(ran.output).not.toContain(value);
      // Each spec's one test ended as it should: a spec that stops at a test.fixme is skipped.
      const started: { run: Recorded; at: number }[] = [];
      for (const run of toRun) {
        const results = ran.results.get(file(run)) ?? [];
        expect(results, `${run.name}: ${ran.output}`).toHaveLength(1);
        const [result] = results;
        expect(result!.status, `${run.name}: ${result!.errors.join("\n")}\n${run.spec}`).toBe(
          run.fixme ? "skipped" : "passed",
        );
        started.push({ run, at: result!.startedAt });
      }
      expect(ran.status, ran.output).toBe(0);
      // The tests ran one after the other: each request came from the last test started before it.
      started.sort((a, b) => a.at - b.at);
      const beacons = new Map<Recorded, FixtureRequest[]>(toRun.map((run) => [run, []]));
      for (const request of requests) {
        const by = started.findLast((test) => test.at <= request.at);
        expect(by, `a request before the first test began: ${request.path}`).toBeDefined();
        beacons.get(by!.run)!.push(request);
      }
      for (const run of toRun) replayed.set(run.key, { beacons: beaconsOf(beacons.get(run)!).sort() });
    }
    // The same effects as the recorded run; a field's change event may come at another moment
    // (Playwright's fill leaves the focus where it is), so they are compared as a set, and the
    // submit beacons carry the whole form. A spec that stops at a test.fixme has none to compare.
    for (const run of recordedRuns)
      if (!run.fixme)
        expect(replayed.get(run.key)!.beacons, `${run.name}\n${run.spec}`).toEqual([...run.recorded].sort());
  }, 600_000);
});

describe("REMOTE and LOCAL", () => {
  it("export the same script for the same run", () => {
    const names = Object.keys(exported.LOCAL!);
    expect(names.length).toBeGreaterThan(0);
    expect(Object.keys(exported.REMOTE!)).toEqual(names);
    // The first two lines say where and when the run was recorded: the rest is the same.
    for (const name of names) expect(body(exported.REMOTE![name]!), name).toBe(body(exported.LOCAL![name]!));
  });
});
