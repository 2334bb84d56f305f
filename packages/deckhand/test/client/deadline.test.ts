// The deadline's call log on its own (bounded, folded, masked), and the rule that no layer starts
// a deadline or takes a limit of its own except where deadline.ts's list says so.

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CALL_LOG_LINE_CHARS,
  CALL_LOG_LINES,
  CallLog,
  callLogText,
  Deadline,
  splitCallLog,
} from "../../src/deadline.ts";
import { ServiceClickError, ServiceTimeoutError } from "../../src/errors.ts";

const SRC = path.resolve(import.meta.dirname, "../../src");

describe("the call log", () => {
  it("folds a line repeated at once into one, with its count", () => {
    const log = new CallLog();
    log.write('waiting for locator("#go")');
    for (let i = 0; i < 5; i++) log.write("element is not visible - retrying");
    log.write("element is disabled - retrying");
    log.write("element is not visible - retrying");
    expect(log.lines()).toEqual([
      'waiting for locator("#go")',
      "element is not visible - retrying x 5",
      "element is disabled - retrying",
      "element is not visible - retrying",
    ]);
  });

  it("keeps the first lines and the latest, and says how many it left out", () => {
    const log = new CallLog();
    for (let i = 0; i < 100; i++) log.write(`line ${i}`);
    const lines = log.lines();
    expect(lines).toHaveLength(CALL_LOG_LINES + 1);
    expect(lines.slice(0, 4)).toEqual(["line 0", "line 1", "line 2", "line 3"]);
    expect(lines[4]).toBe(`... ${100 - CALL_LOG_LINES} more lines ...`);
    expect(lines.at(-1)).toBe("line 99");
  });

  it("cuts a long line and masks every line as it is written", () => {
    const log = new CallLog((text) => text.replaceAll("hunter2", "%password%"));
    log.write(`<input value="hunter2"> intercepts pointer events ${"x".repeat(1000)}`);
    const [line] = log.lines();
    expect(line).toHaveLength(CALL_LOG_LINE_CHARS);
    expect(line).toMatch(/^<input value="%password%"> intercepts/);
  });

  it("ends an error's message with the log once, and the log can be read back off it", () => {
    const deadline = Deadline.start("click()");
    deadline.log('waiting for locator("#go")');
    deadline.child("a step").log("<div id=consent> intercepts pointer events - retrying");
    const error = deadline.explain(new ServiceClickError("#go", "it is covered"));
    deadline.explain(error);
    deadline.dispose();
    expect(error.callLog).toEqual([
      'waiting for locator("#go")',
      "<div id=consent> intercepts pointer events - retrying",
    ]);
    expect(error.message).toBe(`Could not click "#go": it is covered${callLogText(error.callLog!)}`);
    expect(splitCallLog(error.message)).toEqual({
      text: 'Could not click "#go": it is covered',
      lines: error.callLog,
    });
  });

  it("ends the operation's own ServiceTimeoutError with the log", async () => {
    const deadline = Deadline.start("act()", { timeout: 20 });
    deadline.log("waiting for the page to settle");
    const reason = await new Promise<unknown>((resolve) =>
      deadline.signal.addEventListener("abort", () => resolve(deadline.signal.reason)),
    );
    expect(reason).toBeInstanceOf(ServiceTimeoutError);
    expect((reason as ServiceTimeoutError).callLog).toEqual(["waiting for the page to settle"]);
  });

  it("lets a limit on retries run out without aborting, while its parent's end still aborts it", () => {
    const parent = Deadline.start("act()");
    const step = parent.limited("click", 0);
    expect(step.timeLeft()).toBe(0);
    expect(step.expired).toBe(true);
    expect(step.aborted).toBe(false);
    parent.abort(new ServiceTimeoutError("act()", 1));
    expect(step.aborted).toBe(true);
    expect(step.expired).toBe(false);
    parent.dispose();
  });
});

/** Every .ts file under `dir`, relative to src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith(".ts") ? [path.relative(SRC, full)] : [];
  });
}

/** The arguments of the call whose `(` is at `open`, up to its matching `)`. */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if ("([{".includes(text[i]!)) depth++;
    else if (")]}".includes(text[i]!) && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** Whether a call's arguments hold more than one at the top level. */
function severalArguments(args: string): boolean {
  let depth = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!;
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (c === "," && depth === 0 && args.slice(i + 1).trim()) return true;
  }
  return false;
}

/** The call sites that start a deadline or take a limit of their own, as "kind file". */
function callSites(): string[] {
  const found: string[] = [];
  for (const file of sources()) {
    if (file === "deadline.ts") continue;
    const text = readFileSync(path.join(SRC, file), "utf8");
    const count = (pattern: RegExp) => [...text.matchAll(pattern)].length;
    for (let i = count(/Deadline\.(start|none)\(/g); i > 0; i--) found.push(`start ${file}`);
    for (let i = count(/\.(limited|withLimit)\(/g); i > 0; i--) found.push(`limit ${file}`);
    for (const m of text.matchAll(/\.child\(/g)) {
      if (severalArguments(argumentsAt(text, m.index + m[0].length - 1))) found.push(`limit ${file}`);
    }
  }
  return found.sort();
}

/** The list at the top of deadline.ts, as "kind file". */
function documented(): string[] {
  const text = readFileSync(path.join(SRC, "deadline.ts"), "utf8");
  return [...text.matchAll(/^\/\/ - (start|limit) ([\w/.-]+\.ts):/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
}

describe("where deadlines start", () => {
  it("is only where deadline.ts's list says (the facade, the public APIs) and every limit of a layer's own is listed", () => {
    expect(documented().length).toBeGreaterThan(0);
    expect(callSites()).toEqual(documented());
  });

  it("is checked: a new Deadline.start would be caught", () => {
    // The check itself must be able to fail: the finder sees a call written as the code writes it.
    const text = 'const d = Deadline.start("x", { signal });\nconst s = d.child("y", 500);\nd.child("z");';
    expect([...text.matchAll(/Deadline\.(start|none)\(/g)]).toHaveLength(1);
    const childCalls = [...text.matchAll(/\.child\(/g)].map((m) =>
      severalArguments(argumentsAt(text, m.index + m[0].length - 1)),
    );
    expect(childCalls).toEqual([true, false]);
  });
});
