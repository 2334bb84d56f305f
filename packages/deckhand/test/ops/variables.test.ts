// `%name%` variables: the model sees names (and descriptions), the page gets the values, and no
// value reaches a prompt, a log line (even at verbose 2), the history, an inference file or a
// later snapshot of the page. In REMOTE mode the values travel to the service, and reach neither
// its replay record nor its log.

import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedRequest } from "@deckhand/testkit";
import { Deckhand, type LogLine } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  idOf,
  MODES,
  modelConfig,
  type OpsFixture,
  onAct,
  open,
  opsFixture,
  step,
  textOf,
} from "./helpers.ts";

const USER = "alice-7d1f93";
const PASSWORD = "hunter2-c04e5a";
const variables = {
  user: USER,
  pass: { value: PASSWORD, description: "the account password" },
};

function containsSecret(text: string): boolean {
  return text.includes(USER) || text.includes(PASSWORD);
}

describe.each(MODES)("%s", (mode) => {
  const lines: LogLine[] = [];
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode, { verbose: 2, logger: (line) => lines.push(line) });
  });
  afterAll(async () => {
    await fx?.close();
  });
  afterEach(() => {
    fx.model.clear();
  });

  /** The model signs in in two steps: the user name, then the password, each as a `%name%`. */
  function scriptSignIn(): void {
    onAct(fx.model, (request: ScriptedRequest) =>
      request.lastUserText.includes("Steps already done")
        ? step({
            elementId: idOf(request, "textbox: Password"),
            method: "fill",
            arguments: ["%pass%"],
            description: "enter the password",
          })
        : step({
            elementId: idOf(request, "textbox: Username"),
            method: "fill",
            arguments: ["%user%"],
            description: "enter the user name",
            completed: false,
          }),
    );
  }

  describe("a run with variables", () => {
    let result: Awaited<ReturnType<Deckhand["act"]>>;
    let firstRequest: number;
    beforeAll(async () => {
      await open(fx, "form.html");
      scriptSignIn();
      firstRequest = fx.model.requests.length;
      result = await fx.dh.act("sign in as %user% with password %pass%", { variables });
    });

    it("types the values into the page", async () => {
      expect(result.success).toBe(true);
      expect(await fx.dh.page.locator("#username").inputValue()).toBe(USER);
      expect(await fx.dh.page.locator("#password").inputValue()).toBe(PASSWORD);
    });

    it("shows the model the names and descriptions, never a value", () => {
      const requests = fx.model.requests.slice(firstRequest);
      expect(requests).toHaveLength(2);
      for (const request of requests) {
        // The whole HTTP body, not only the parsed messages.
        expect(containsSecret(JSON.stringify(request.body))).toBe(false);
        expect(request.lastUserText).toContain("- %user%\n- %pass%: the account password");
      }
    });

    it("reports the actions with %name% tokens, not values", () => {
      expect(result.actions?.map((a) => a.arguments)).toEqual([["%user%"], ["%pass%"]]);
      expect(containsSecret(JSON.stringify(result))).toBe(false);
    });

    it("writes no value into any log line, even at verbose 2", () => {
      // The prompts themselves were logged (so the check below looked at them): in REMOTE mode by
      // the service, whose lines reach the client through the operation's event stream.
      const promptLine = (l: LogLine) =>
        mode === "LOCAL"
          ? l.level === 2 && l.message === "act prompt and answer"
          : l.category === "remote" && l.message === "llm: act prompt and answer";
      expect(lines.some(promptLine)).toBe(true);
      expect(containsSecret(JSON.stringify(lines))).toBe(false);
    });

    it.runIf(mode === "REMOTE")("keeps values out of the service's replay record and its log", async () => {
      const replay = JSON.stringify(await fx.service!.replay(fx.dh.sessionId!));
      // The act is there, with its variables' names.
      expect(replay).toContain("sign in as %user% with password %pass%");
      expect(replay).toContain('"user"');
      expect(containsSecret(replay)).toBe(false);
      expect(fx.service!.logText()).toContain(fx.dh.sessionId!);
      expect(containsSecret(fx.service!.logText())).toBe(false);
    });

    it("records names in the history, never values", async () => {
      const history = JSON.stringify(await fx.dh.history);
      expect(history).toContain("%user%");
      expect(containsSecret(history)).toBe(false);
    });

    it("shows the filled fields as their %name% in later page text", async () => {
      const { pageText } = await fx.dh.extract();
      expect(pageText).toContain("[2] textbox: Username value=%user%");
      expect(containsSecret(pageText)).toBe(false);
    });

    it("shows the filled fields as their %name% to the model in a later act", async () => {
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Sign in"), method: "click" }));
      await fx.dh.act("click sign in");
      expect(fx.model.lastRequest?.lastUserText).toContain("textbox: Username value=%user%");
      expect(containsSecret(JSON.stringify(fx.model.lastRequest?.body))).toBe(false);
      // The page itself got the real values.
      expect(await textOf(fx.dh.page, "#result")).toContain(`"username":"${USER}"`);
    });
  });

  describe("masking what a field shows", () => {
    it("keeps text typed after a variable's value masked", async () => {
      await open(fx, "form.html");
      await fx.dh.act(
        { selector: "#username", description: "user", method: "fill", arguments: ["%user%"] },
        { variables },
      );
      await fx.dh.act({ selector: "#username", description: "user", method: "type", arguments: [" jr"] });
      expect(await fx.dh.page.locator("#username").inputValue()).toBe(`${USER} jr`);
      const { pageText } = await fx.dh.extract();
      expect(pageText).toContain('textbox: Username value="%user% jr"');
      expect(containsSecret(pageText)).toBe(false);
    });

    it("shows a variable inside longer text as the text written", async () => {
      await open(fx, "form.html");
      await fx.dh.act(
        { selector: "#username", description: "user", method: "fill", arguments: ["id:%user%!"] },
        { variables },
      );
      expect(await fx.dh.page.locator("#username").inputValue()).toBe(`id:${USER}!`);
      expect((await fx.dh.extract()).pageText).toContain('textbox: Username value="id:%user%!"');
    });

    it("shows plain text again once a masked field is filled with it", async () => {
      await open(fx, "form.html");
      await fx.dh.act(
        { selector: "#username", description: "user", method: "fill", arguments: ["%user%"] },
        { variables },
      );
      await fx.dh.act({ selector: "#username", description: "user", method: "fill", arguments: ["bob"] });
      expect((await fx.dh.extract()).pageText).toContain('textbox: Username value="bob"');
    });
  });

  describe("a value the page echoes into its text", () => {
    const NAME = "Ada Lovelace";
    const named = { name: NAME };
    let before: number;
    beforeAll(async () => {
      await open(fx, "echo.html");
      before = fx.model.requests.length;
      await fx.dh.act(
        { selector: "#name", description: "name field", method: "fill", arguments: ["%name%"] },
        { variables: named },
      );
      expect(await textOf(fx.dh.page, "#greeting")).toBe(`Hello, ${NAME}!`);
    });

    it("reaches the model as its %name% in the page's text too, not only in the field", async () => {
      onAct(fx.model, (request) => step({ elementId: idOf(request, "button: Submit"), method: "click" }));
      await fx.dh.act("submit");
      const request = fx.model.lastRequest!;
      expect(request.lastUserText).toContain("Hello, %name%!");
      expect(JSON.stringify(request.body)).not.toContain(NAME);
    });

    it("is its %name% in results: page text, extracted data, history", async () => {
      const { pageText } = await fx.dh.extract();
      expect(pageText).toContain("Hello, %name%!");
      expect(pageText).not.toContain(NAME);
      // The model quotes the greeting as it was shown.
      fx.model.on(
        (r) => r.schemaName === "extract",
        (r) => ({ extraction: /Hello, [^!]*!/.exec(r.lastUserText)?.[0] ?? "" }),
      );
      const { extraction } = await fx.dh.extract("the greeting");
      expect(extraction).toBe("Hello, %name%!");
      expect(JSON.stringify(await fx.dh.history)).not.toContain(NAME);
      for (const request of fx.model.requests.slice(before))
        expect(JSON.stringify(request.body)).not.toContain(NAME);
    });

    it.runIf(mode === "REMOTE")("stays out of the service's replay record", async () => {
      expect(JSON.stringify(await fx.service!.replay(fx.dh.sessionId!))).not.toContain(NAME);
      expect(await fx.service!.storedText()).not.toContain(NAME);
    });
  });

  describe("short values", () => {
    it("one of 3 to 7 characters is masked where it stands alone, and words that contain it stay whole", async () => {
      await open(fx, "echo.html");
      const start = lines.length;
      await fx.dh.act(
        { selector: "#initial", description: "initial field", method: "fill", arguments: ["%initial%"] },
        { variables: { initial: "mit" } },
      );
      expect(await textOf(fx.dh.page, "#initials")).toBe("Initial: mit");
      const { pageText } = await fx.dh.extract();
      // Standing alone, the value is masked...
      expect(pageText).toContain("Initial: %initial%");
      expect(pageText).not.toMatch(/Initial: mit\b/);
      // ...and a word with the value in it is untouched: nothing garbled, no holes to guess from.
      expect(pageText).toContain("button: Submit");
      expect(pageText).not.toContain("[redacted]");
      expect(JSON.stringify(lines.slice(start))).not.toContain("[redacted]");
    });

    it("one of one or two characters stays hidden in its field and is not looked for in text", async () => {
      await open(fx, "echo.html");
      await fx.dh.act(
        { selector: "#initial", description: "initial field", method: "fill", arguments: ["%initial%"] },
        { variables: { initial: "u" } },
      );
      const { pageText } = await fx.dh.extract();
      expect(pageText).toContain("textbox: Initial value=%initial%");
      // Masking "u" in text would garble every word with a u in it and tell the value by the holes.
      expect(pageText).toContain("Your details");
      expect(pageText).toContain("button: Submit");
      expect(pageText).not.toContain("[redacted]");
    });
  });

  describe("act(action) with variables", () => {
    it("substitutes the values without calling the model", async () => {
      const page = await open(fx, "form.html");
      const before = fx.model.callCount;
      const result = await fx.dh.act(
        { selector: "#password", description: "password field", method: "fill", arguments: ["%pass%"] },
        { variables },
      );
      expect(result.success).toBe(true);
      expect(await page.locator("#password").inputValue()).toBe(PASSWORD);
      expect(fx.model.callCount).toBe(before);
    });

    it("types a placeholder with no matching variable as it is written", async () => {
      const page = await open(fx, "form.html");
      await fx.dh.act(
        { selector: "#username", description: "user", method: "fill", arguments: ["%nobody%"] },
        { variables },
      );
      expect(await page.locator("#username").inputValue()).toBe("%nobody%");
    });
  });

  // LOCAL only: in REMOTE mode the model is called, and inference files would be written, by the
  // service, not by the client.
  it.skipIf(mode === "REMOTE")("writes no value into inference files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "deckhand-inference-"));
    const context = await fx.dh.context.browser.newContext();
    const cwd = process.cwd();
    let dh: Deckhand;
    // Inference files go to ./inference_summary of the working directory the instance starts in.
    process.chdir(dir);
    try {
      dh = Deckhand.inContext(context, {
        verbose: 0,
        disablePino: true,
        model: modelConfig(fx.model),
        logInferenceToFile: true,
      });
    } finally {
      process.chdir(cwd);
    }
    try {
      await dh.init();
      await open(fx, "form.html", dh);
      scriptSignIn();
      expect((await dh.act("sign in as %user% with password %pass%", { variables })).success).toBe(true);
      const files = await readdir(join(dir, "inference_summary"));
      expect(files).toHaveLength(2);
      const contents = await Promise.all(
        files.map((f) => readFile(join(dir, "inference_summary", f), "utf8")),
      );
      expect(contents.join("\n")).toContain("%pass%");
      expect(containsSecret(contents.join("\n"))).toBe(false);
    } finally {
      await dh.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
