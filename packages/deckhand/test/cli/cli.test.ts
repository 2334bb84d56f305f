// The `deckhand` command, run for real as a child process: commands generated from the tool
// definitions, JSON output when not on a terminal, exit codes per kind of failure, explicit
// instructions with no key, a model reached with --model/--base-url, and --keep-open chaining
// commands on one browser that `deckhand close` ends without leaving anything behind.

import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type FixtureServer,
  match,
  processesMentioning,
  type ScriptedModel,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { TOOLS } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, scriptAgent, verifyWith } from "../agent/helpers.ts";
import { startDeckhand } from "../support/browser.ts";
import { startTestService } from "../support/service.ts";
import { cleanEnv, deckhand, NODE_ARGS } from "./helpers.ts";

let site: FixtureServer;
let model: ScriptedModel;
let dir: string;
beforeAll(async () => {
  [site, model] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  dir = mkdtempSync(join(tmpdir(), "deckhand-cli-test-"));
});
afterAll(async () => {
  await Promise.all([site?.close(), model?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Waits until no process mentions `text` (a kept browser's keeper, by its profile path); what is left after 60 s. */
async function waitForNoProcess(text: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    const left = processesMentioning(text);
    if (left.length === 0 || Date.now() >= until) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const env = () => cleanEnv({ DECKHAND_CLI_STATE: join(dir, "state.json") });

// Each command is a Node process of its own that starts (and most launch) a browser: on a loaded
// machine a test of four or five of them takes minutes (154 s in a busy-loop run of the suite), not
// the 30 s of one operation. The tests run at once (each mostly waits for its processes; each keeps
// its own state file), except the three that script answers of the shared model, which run one
// after the other.
describe("deckhand", { timeout: 300_000 }, () => {
  it.concurrent("lists every tool of the definitions as a command", async () => {
    const run = await deckhand(["help"], env());
    expect(run.code).toBe(0);
    for (const tool of TOOLS) expect(run.stdout).toContain(`\n  ${tool.name.padEnd(11)} ${tool.title}\n`);
    const act = await deckhand(["help", "act"], env());
    expect(act.stdout).toContain("deckhand act [url] <instruction>");
    expect(act.stdout).toContain("--variables");
  });

  it.concurrent("carries out an explicit instruction with no key, printing JSON when not on a terminal", async () => {
    const run = await deckhand(["act", site.url("explicit/login.html"), "click the Sign in button"], env());
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({
      ok: true,
      command: "act",
      result: { success: true, actionDescription: "click the Sign in button" },
      tokens: { prompt: 0, completion: 0 },
    });
  });

  it.concurrent("exits 3 when the instruction needs a model, saying why", async () => {
    const run = await deckhand(["act", site.url("explicit/sections.html"), "click Save"], env());
    expect(run.code).toBe(3);
    expect(run.json).toMatchObject({
      ok: false,
      error: { name: "MissingLLMConfigurationError" },
      exitCode: 3,
    });
    const message = (run.json.error as { message: string }).message;
    expect(message).toContain('2 visible elements on the page fit "Save"');
    // The way to fix it in the command's terms: its variable and flag, not the library's options.
    expect(message).toContain("Set OPENAI_API_KEY in the environment (and --model provider/model");
    expect(message).not.toContain("llmClient");
  });

  it.concurrent("exits 1 when the operation was not done", async () => {
    const run = await deckhand(["act", site.url("explicit/decoys.html"), "click Submit order"], env());
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, result: { success: false } });
  });

  it.concurrent("exits 2 on a usage mistake: one JSON object on stdout with the usage, as every outcome off a terminal", async () => {
    const usageError = (run: { json: Record<string, unknown> }) =>
      run.json.error as { name: string; message: string; usage: string };
    const unknown = await deckhand(["act", site.url("explicit/login.html"), "x", "--nope"], env());
    expect(unknown.code).toBe(2);
    expect(unknown.json).toMatchObject({ ok: false, exitCode: 2, error: { name: "UsageError" } });
    expect(usageError(unknown).message).toContain("Unknown option --nope");
    expect(usageError(unknown).usage).toContain("deckhand act");
    const missing = await deckhand(["act"], env());
    expect(missing.code).toBe(2);
    expect(usageError(missing).message).toContain("instruction");
    const command = await deckhand(["fly"], env());
    expect(command.code).toBe(2);
    expect(command.json).toMatchObject({ ok: false, command: "fly", exitCode: 2 });
    const noUrl = await deckhand(["text", "--max-tokens", "5", "--json"], env());
    expect(noUrl.code).toBe(2);
    expect(noUrl.json).toMatchObject({
      ok: false,
      command: "text",
      exitCode: 2,
      error: { name: "UsageError" },
    });
  });

  it.concurrent("exits 6 when the service --remote names does not answer, naming --remote", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const address = `http://127.0.0.1:${closed}`;
    const run = await deckhand(["text", site.url("explicit/login.html"), "--remote", address], {
      ...env(),
      PLATFORM_API_KEY: "dh_unused_key",
    });
    expect(run.code).toBe(6);
    expect(run.json).toMatchObject({ ok: false, exitCode: 6, error: { name: "ServiceUnreachableError" } });
    const message = (run.json.error as { message: string }).message;
    expect(message).toContain(`The Deckhand service at ${address} could not be reached`);
    expect(message).toContain("ECONNREFUSED");
    expect(message).toContain("--remote");
    expect(message).not.toContain("apiUrl");
  });

  it("reaches a model with --model and --base-url, and reports its tokens", async () => {
    model.on(match.schemaName("act"), (request) => {
      const id = Number(/\[(\d+)\] button: Sign in\n/.exec(request.text)![1]);
      return { elementId: id, method: "click", arguments: [], description: "click Sign in", completed: true };
    });
    try {
      const run = await deckhand(
        [
          "act",
          site.url("explicit/login.html"),
          "log in",
          "--model",
          "openai/gpt-4.1-mini",
          "--base-url",
          model.baseURL,
        ],
        env() &&
          cleanEnv({ DECKHAND_CLI_STATE: join(dir, "state.json"), OPENAI_API_KEY: "sk-test-cli-0123456789" }),
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const tokens = run.json.tokens as { prompt: number; completion: number };
      expect(tokens.prompt).toBeGreaterThan(0);
      expect(run.stdout).not.toContain("sk-test-cli");
    } finally {
      model.clear();
    }
  });

  it.concurrent("writes a screenshot to the file -o names", async () => {
    const file = join(dir, "shot.png");
    const run = await deckhand(["screenshot", site.url("explicit/login.html"), "-o", file], env());
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, result: { file } });
    expect(readFileSync(file).subarray(1, 4).toString()).toBe("PNG");
  });

  it.concurrent("takes %variables% from DECKHAND_VAR_ and keeps their values out of its output", async () => {
    const state = join(dir, "vars-state.json");
    const e = cleanEnv({ DECKHAND_CLI_STATE: state, DECKHAND_VAR_email: "ann.secret@example.com" });
    try {
      const run = await deckhand(
        ["act", site.url("explicit/login.html"), "type %email% into the Email field", "--keep-open"],
        e,
      );
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain("ann.secret@example.com");
      const text = await deckhand(["text"], e);
      expect((text.json.result as { pageText: string }).pageText).toContain('textbox: Email value="%email%"');
    } finally {
      await deckhand(["close"], e);
    }
  });

  it.concurrent("chains commands on one browser with --keep-open, and close ends it and its profile", async () => {
    const state = join(dir, "chain-state.json");
    const e = cleanEnv({ DECKHAND_CLI_STATE: state });
    const first = await deckhand(
      ["act", site.url("explicit/widgets.html"), "type 'Ann' into the First name field", "--keep-open"],
      e,
    );
    expect(first.code).toBe(0);
    const kept = JSON.parse(readFileSync(state, "utf8")) as { pid: number; userDataDir: string };
    const second = await deckhand(["act", "select France from the Country dropdown"], e);
    expect(second.code).toBe(0);
    expect(second.json.keptOpen).toBe(true);
    const text = await deckhand(["text"], e);
    const pageText = (text.json.result as { pageText: string }).pageText;
    expect(pageText).toContain('textbox: First name value="Ann"');
    expect(pageText).toContain('combobox: Country value="France"');
    const tabs = await deckhand(["tabs"], e);
    expect(tabs.json.result).toEqual([
      expect.objectContaining({ index: 0, current: true, title: "Preferences" }),
    ]);

    const closed = await deckhand(["close"], e);
    expect(closed.json).toMatchObject({ ok: true, ended: `browser ${kept.pid}` });
    expect(await waitForNoChrome(kept.userDataDir)).toEqual([]);
    expect(existsSync(kept.userDataDir)).toBe(false);
    expect(existsSync(state)).toBe(false);
    // Its keeper went with it.
    expect(await waitForNoProcess(kept.userDataDir)).toEqual([]);
  });

  it.concurrent("exports the commands of a --keep-open browser as a Playwright spec with export -o", async () => {
    const state = join(dir, "export-state.json");
    const e = cleanEnv({ DECKHAND_CLI_STATE: state });
    const file = join(dir, "recorded.spec.ts");
    try {
      const first = await deckhand(
        ["act", site.url("explicit/widgets.html"), "type 'Ann' into the First name field", "--keep-open"],
        e,
      );
      expect(first.code).toBe(0);
      expect((await deckhand(["act", "select France from the Country dropdown"], e)).code).toBe(0);
      const run = await deckhand(["export", "playwright-test", "-o", file], e);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.json).toMatchObject({ ok: true, command: "export", file });
      const spec = readFileSync(file, "utf8");
      expect(run.json.result).toBe(spec);
      expect(spec).toContain(`await page.goto(${JSON.stringify(site.url("explicit/widgets.html"))});`);
      expect(spec).toMatch(/getByRole\("textbox", \{ name: "First name", exact: true \}\)\s*\.fill\("Ann"\)/);
      expect(spec).toMatch(/\.selectOption\("France"\)/);
    } finally {
      await deckhand(["close"], e);
    }
    expect(existsSync(`${state}.record.json`)).toBe(false);
  });

  it.concurrent("exports a saved LOCAL report's run with export --from-report, and says clearly when a file has none", async () => {
    const dh = await startDeckhand({}, { report: join(dir, "reports") });
    let file: string;
    try {
      await dh.page.goto(site.url("explicit/widgets.html"));
      const typed = await dh.act("type 'Ann' into the First name field");
      expect(typed.success, typed.message).toBe(true);
      file = await dh.writeReport();
    } finally {
      await dh.close();
    }
    const out = join(dir, "from-report.spec.ts");
    const run = await deckhand(["export", "deckhand", "--from-report", file, "-o", out], env());
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.json).toMatchObject({ ok: true, command: "export", from: file, file: out });
    const script = readFileSync(out, "utf8");
    expect(script).toContain(`in the report ${file}`);
    expect(script).toContain('method: "fill"');
    expect(script).toContain('arguments: ["Ann"]');

    const page = join(dir, "not-a-report.html");
    writeFileSync(page, "<!doctype html><title>Hello</title><p>secret text of another page</p>");
    const refused = await deckhand(["export", "--from-report", page], env());
    expect(refused.code).not.toBe(0);
    const message = (refused.json.error as { message: string }).message;
    expect(message).toContain("has no run to export (no Deckhand record in it)");
    expect(message).not.toContain("secret text");
  });

  it.concurrent("ends a kept browser no command used for --idle-timeout, with its profile, even when its state file is gone", async () => {
    const state = join(dir, "idle-state.json");
    const e = cleanEnv({ DECKHAND_CLI_STATE: state });
    const first = await deckhand(
      ["text", site.url("explicit/widgets.html"), "--keep-open", "--idle-timeout", "1s"],
      e,
    );
    expect(first.code, first.stderr).toBe(0);
    const kept = JSON.parse(readFileSync(state, "utf8")) as {
      pid: number;
      userDataDir: string;
      keeperPid: number;
      idleMs: number;
    };
    expect(kept.idleMs).toBe(1_000);
    // The script that kept it lost its state file (the orphan of issue 18): no `deckhand close`
    // can find the browser any more, and it still goes.
    rmSync(state);
    // Bounds only a stalled keeper can reach: the browser goes a second after the command ended.
    expect(await waitForNoChrome(kept.userDataDir)).toEqual([]);
    expect(await waitForNoProcess(kept.userDataDir)).toEqual([]);
    expect(existsSync(kept.userDataDir)).toBe(false);
  });

  it.concurrent("counts a kept browser's idle time from the last command that used it", async () => {
    const state = join(dir, "use-state.json");
    const e = cleanEnv({ DECKHAND_CLI_STATE: state });
    try {
      expect((await deckhand(["text", site.url("explicit/widgets.html"), "--keep-open"], e)).code).toBe(0);
      const before = JSON.parse(readFileSync(state, "utf8")) as { lastUsedAt: number; idleMs: number };
      expect(before.idleMs).toBe(5 * 60_000);
      // A later command marks its use, and may change the timeout.
      const second = await deckhand(["text", "--idle-timeout", "10m"], e);
      expect(second.code, second.stderr).toBe(0);
      const after = JSON.parse(readFileSync(state, "utf8")) as { lastUsedAt: number; idleMs: number };
      expect(after.lastUsedAt).toBeGreaterThan(before.lastUsedAt);
      expect(after.idleMs).toBe(10 * 60_000);
    } finally {
      await deckhand(["close"], e);
    }
  });

  it.concurrent("refuses an --idle-timeout that is no duration", async () => {
    const run = await deckhand(["text", "--keep-open", "--idle-timeout", "forever"], env());
    expect(run.code).toBe(2);
    // Off a terminal a usage mistake is one JSON object on stdout.
    expect((run.json.error as { message: string }).message).toContain(
      '--idle-timeout takes a duration from 1 ms to 24h: milliseconds, or a number with s, m or h (90s, 10m); got "forever".',
    );
  });

  it("runs the agent on a task with --model, its steps in the result", async () => {
    verifyWith(model, (r) => r.text.includes("Remember me"));
    scriptAgent(model, [
      [call("act", { action: "check Remember me" })],
      [call("done", { reasoning: "The box is checked", taskComplete: true })],
    ]);
    try {
      const run = await deckhand(
        [
          "agent",
          site.url("explicit/login.html"),
          "tick the remember-me box",
          "--model",
          "openai/gpt-4.1-mini",
          "--base-url",
          model.baseURL,
        ],
        cleanEnv({ DECKHAND_CLI_STATE: join(dir, "state.json"), OPENAI_API_KEY: "sk-test-cli-0123456789" }),
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const result = run.json.result as { success: boolean; actions: { type: string }[] };
      expect(result.success).toBe(true);
      expect(result.actions.map((a) => a.type)).toContain("act");
      expect((run.json.tokens as { prompt: number }).prompt).toBeGreaterThan(0);
    } finally {
      model.clear();
    }
  });

  it.skipIf(!existsSync("/usr/bin/script")).concurrent(
    "on a terminal, says what it did, the result and the tokens, with progress",
    async () => {
      const args = [...NODE_ARGS, "act", site.url("explicit/login.html"), "check Remember me"];
      const quoted = [process.execPath, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
      const { stdout } = await promisify(execFile)("script", ["-qec", quoted, "/dev/null"], {
        env: env(),
        timeout: 150_000, // as deckhand() in helpers.ts: a bound only a stall reaches
      });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
      const out = stdout.replace(/\x1b\[\d+m/g, "").replace(/\r/g, "");
      expect(out).toContain("… starting the browser");
      expect(out).toContain(`… opening ${site.url("explicit/login.html")}`);
      expect(out).toContain(`✔ act ${site.url("explicit/login.html")}`);
      expect(out).toContain("Done without a model (explicit instruction): check Remember me.");
      expect(out).toMatch(/no model tokens · \d+ ms/);
      expect(out).not.toContain('{"ok"');
    },
  );

  it.concurrent("works in a session of a service with --remote and PLATFORM_API_KEY", async () => {
    const service = await startTestService();
    try {
      const run = await deckhand(
        [
          "act",
          site.url("explicit/widgets.html"),
          "select France from the Country dropdown",
          "--remote",
          service.url,
        ],
        cleanEnv({ DECKHAND_CLI_STATE: join(dir, "remote-state.json"), PLATFORM_API_KEY: service.apiKey }),
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.json).toMatchObject({ ok: true, result: { success: true } });
      const refused = await deckhand(
        ["text", site.url("explicit/widgets.html"), "--remote", service.url],
        cleanEnv({
          DECKHAND_CLI_STATE: join(dir, "remote-state.json"),
          PLATFORM_API_KEY: "dh_wrong_key_0123456789",
        }),
      );
      expect(refused.code).toBe(6);
    } finally {
      await service.close();
    }
  });

  it("extracts with a JSON Schema file through the model", async () => {
    const schemaFile = join(dir, "schema.json");
    writeFileSync(
      schemaFile,
      JSON.stringify({ type: "object", properties: { heading: { type: "string" } }, required: ["heading"] }),
    );
    model.on(match.schemaName("extract"), () => ({ heading: "Sign in to Acme" }));
    try {
      const run = await deckhand(
        [
          "extract",
          site.url("explicit/login.html"),
          "the page heading",
          "--schema",
          schemaFile,
          "--model",
          "openai/gpt-4.1-mini",
          "--base-url",
          model.baseURL,
        ],
        cleanEnv({ DECKHAND_CLI_STATE: join(dir, "state.json"), OPENAI_API_KEY: "sk-test-cli-0123456789" }),
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.json.result).toEqual({ heading: "Sign in to Acme" });
    } finally {
      model.clear();
    }
  });
});
