import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { DeckhandLog, formatLogLine, type LogLine, SecretRedactor } from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startDeckhand } from "../support/browser.ts";

describe("log lines", () => {
  test("a logger receives every line at or below verbose, with category, message, level and timestamp", () => {
    const lines: LogLine[] = [];
    const log = new DeckhandLog({ verbose: 1, logger: (l) => lines.push(l) });
    log.error("browser", "crashed");
    log.info("init", "ready", { ms: 12, ok: true, where: "here", data: { a: 1 } });
    log.debug("cdp", "noise");
    expect(lines.map((l) => [l.category, l.message, l.level])).toEqual([
      ["browser", "crashed", 0],
      ["init", "ready", 1],
    ]);
    expect(Number.isNaN(Date.parse(lines[0]!.timestamp))).toBe(false);
    expect(lines[1]!.auxiliary).toEqual({
      ms: { value: "12", type: "integer" },
      ok: { value: "true", type: "boolean" },
      where: { value: "here", type: "string" },
      data: { value: '{"a":1}', type: "object" },
    });
  });

  test("verbose 0 keeps only essential lines and verbose 2 keeps debug lines", () => {
    const quiet: LogLine[] = [];
    const loud: LogLine[] = [];
    for (const [verbose, sink] of [
      [0, quiet],
      [2, loud],
    ] as const) {
      const log = new DeckhandLog({ verbose, logger: (l) => sink.push(l) });
      log.error("a", "e");
      log.info("a", "i");
      log.debug("a", "d");
    }
    expect(quiet.map((l) => l.message)).toEqual(["e"]);
    expect(loud.map((l) => l.message)).toEqual(["e", "i", "d"]);
  });

  test("secrets are removed from messages and auxiliary values, and secret-named fields are blanked", () => {
    const lines: LogLine[] = [];
    const redactor = new SecretRedactor();
    redactor.add("sk-live-abcdef123456");
    redactor.add("hunter2-password");
    const log = new DeckhandLog({ verbose: 2, logger: (l) => lines.push(l), redactor });
    log.info("llm", "calling with key sk-live-abcdef123456", {
      headers: { authorization: "Bearer x" },
      note: "pw hunter2-password",
    });
    log.debug("cfg", "options", { apiKey: "anything-at-all", nested: { password: "p" } });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("sk-live-abcdef123456");
    expect(text).not.toContain("hunter2-password");
    expect(text).not.toContain("anything-at-all");
    expect(text).not.toContain("Bearer x");
    expect(text).toContain("[redacted]");
  });

  test("a throwing logger does not break the caller", () => {
    const log = new DeckhandLog({
      verbose: 2,
      logger: () => {
        throw new Error("bad logger");
      },
    });
    expect(() => log.info("x", "y")).not.toThrow();
  });

  test("disablePino with no logger is silent (nothing is delivered)", () => {
    const log = new DeckhandLog({ verbose: 2, disablePino: true });
    expect(log.enabled(0)).toBe(false);
  });
});

describe("the client's logging", () => {
  test("init logs through the logger, and the model key never appears", async () => {
    const lines: LogLine[] = [];
    const dh = await startDeckhand(
      {},
      {
        verbose: 2,
        logger: (l) => lines.push(l),
        model: { modelName: "openai/gpt-4.1-mini", apiKey: "sk-test-never-logged-9876" },
      },
    );
    await dh.close();
    expect(lines.some((l) => l.category === "init")).toBe(true);
    expect(JSON.stringify(lines)).not.toContain("sk-test-never-logged-9876");
  });
});

describe("the rule for secrets of every length", () => {
  test("a value of 8 characters or more is masked wherever it appears, even inside a word", () => {
    const redactor = new SecretRedactor();
    redactor.add("hunter2-c04e5a");
    expect(redactor.redact("pw=hunter2-c04e5a; again:xhunter2-c04e5ax")).toBe(
      "pw=[redacted]; again:x[redacted]x",
    );
  });

  test("a value of 3 to 7 characters is masked only where it stands alone, so words that contain it stay whole", () => {
    const redactor = new SecretRedactor();
    redactor.add("mit");
    redactor.add("4217");
    expect(redactor.redact("mit signed in at Submit with PIN 4217 (not 42170 or x_4217)")).toBe(
      "[redacted] signed in at Submit with PIN [redacted] (not 42170 or x_4217)",
    );
    expect(redactor.redact("mit,mit;mit")).toBe("[redacted],[redacted];[redacted]");
  });

  test("a value of one or two characters is not looked for in text: no text is garbled by it", () => {
    const redactor = new SecretRedactor();
    redactor.add("0");
    redactor.add("u");
    expect(redactor.redact("127.0.0.1: user u logged in")).toBe("127.0.0.1: user u logged in");
    expect(redactor.size).toBe(0);
  });

  test("mask() writes a variable's value as its %name%, and other secrets as [redacted]", () => {
    const redactor = new SecretRedactor();
    redactor.add("Ada Lovelace", "name");
    redactor.add("sk-live-0123456789");
    expect(redactor.mask("Hello, Ada Lovelace! key sk-live-0123456789")).toBe(
      "Hello, %name%! key [redacted]",
    );
    expect(redactor.maskValue({ greeting: ["Hi Ada Lovelace"], n: 1 })).toEqual({
      greeting: ["Hi %name%"],
      n: 1,
    });
  });
});

const run = promisify(execFile);

describe("the default logger's format", () => {
  const child = fileURLToPath(new URL("./children/log-format.ts", import.meta.url));
  let site: FixtureServer;
  beforeAll(async () => {
    site = await startFixtureServer();
  });
  afterAll(async () => {
    await site?.close();
  });

  /** Runs the child with stderr a pipe, or (tty) a pseudo-terminal made by script(1); answers stderr. */
  async function stderrOf(format: string, tty: boolean, env: NodeJS.ProcessEnv = {}): Promise<string> {
    const node = [
      process.execPath,
      "--conditions=deckhand-source",
      "--no-warnings",
      child,
      format,
      site.url("explicit/login.html"),
    ];
    const fullEnv = { ...process.env, DECKHAND_LOG_FORMAT: "", ...env };
    if (!tty) {
      const { stderr } = await run(node[0]!, node.slice(1), { env: fullEnv, timeout: 60_000 });
      return stderr;
    }
    // script(1) gives the child a terminal; what it wrote there comes back on script's stdout.
    const quoted = node.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    const { stdout } = await run("script", ["-qec", `${quoted} 1>/dev/null`, "/dev/null"], {
      env: fullEnv,
      timeout: 60_000,
    });
    return stdout;
  }

  test("formats a line as time, level, category, message and key=value details", () => {
    const line: LogLine = {
      category: "act",
      message: "Done: click the Sign in button.",
      level: 1,
      timestamp: "2026-11-23T07:50:01.234Z",
      auxiliary: { success: { value: "true", type: "boolean" }, why: { value: "two words", type: "string" } },
    };
    expect(formatLogLine(line, "info")).toBe(
      '07:50:01.234 INFO  [act] Done: click the Sign in button.  success=true why="two words"',
    );
    expect(formatLogLine(line, "warn", true)).toContain("\x1b[33mWARN \x1b[0m");
  });

  test.skipIf(!existsSync("/usr/bin/script"))(
    "is readable on a terminal by default",
    async () => {
      const raw = await stderrOf("unset", true);
      expect(raw).toContain("\x1b["); // tinted for the terminal
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
      const out = raw.replace(/\x1b\[\d+m/g, "");
      expect(out).toMatch(
        /\d\d:\d\d:\d\d\.\d{3} .*INFO .*\[act\].* explicit instruction carried out without a model/,
      );
      expect(out).not.toMatch(/^\{"level"/m);
      expect(out).not.toContain("hunter2-log-secret");
    },
    90_000,
  );

  test("is JSON lines when stderr is not a terminal, and readable when asked", async () => {
    const json = await stderrOf("unset", false);
    const lines = json.split("\n").filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map((l) => JSON.parse(l).category)).toContain("act");
    const pretty = await stderrOf("pretty", false);
    expect(pretty).toMatch(/INFO {2}\[act\] /);
    expect(pretty).not.toContain('{"level"');
    const byEnv = await stderrOf("unset", false, { DECKHAND_LOG_FORMAT: "pretty" });
    expect(byEnv).toMatch(/INFO {2}\[act\] /);
    for (const out of [json, pretty, byEnv]) expect(out).not.toContain("hunter2-log-secret");
  }, 120_000);
});
