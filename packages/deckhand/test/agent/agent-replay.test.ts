// Replay without a model (LOCAL, cacheDir): a successful run is stored as its deterministic steps;
// the same execute later replays them with no model call at all (zero usage, metadata cacheHit),
// heals an element that moved (by its role and name, no model) and writes the healed step back,
// and falls back to the model when the page no longer fits.

import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pagesDir } from "@deckhand/testkit";
import { tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type OpsFixture, opsFixture } from "../ops/helpers.ts";
import { actByRules, agentRequests, call, scriptAgent, verifyWith } from "./helpers.ts";

const PASSWORD = "correct-horse-42";
const LOGIN = readFileSync(join(pagesDir, "agent/login.html"), "utf8");
/** The same login with the Username field moved into a wrapper (a new XPath, same role and name). */
const MOVED = LOGIN.replace(
  '<label for="user">Username</label>',
  '<div class="row"><label for="user">Username</label>',
).replace(
  '<input id="user" name="user" autocomplete="username">',
  '<input id="user" name="user" autocomplete="username"></div>',
);
/** A login whose Username field is gone (the page no longer fits the stored run). */
const GONE = LOGIN.replace('<label for="user">Username</label>', "").replace(
  '<input id="user" name="user" autocomplete="username">',
  "",
);

describe("agent replay (LOCAL, cacheDir)", () => {
  let fx: OpsFixture;
  let dir: string;
  let html = LOGIN;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "deckhand-agent-replay-"));
    fx = await opsFixture("LOCAL", { cacheDir: dir });
    fx.site.route("/replay/login.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(html);
    });
    fx.site.route("/replay/account.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(readFileSync(join(pagesDir, "agent/account.html"), "utf8"));
    });
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    fx.model.clear();
    fx.model.resetRequests();
  });

  const script = () => {
    actByRules(fx.model, [
      { when: /%user%/, line: /textbox: Username/, method: "fill", args: ["%user%"] },
      { when: /%password%/, line: /textbox: Password/, method: "fill", args: ["%password%"] },
      { when: /Sign in/i, line: "button: Sign in", method: "click" },
    ]);
    verifyWith(fx.model, (r) => r.text.includes("heading: Welcome, %user%"));
    scriptAgent(fx.model, [
      [call("ariaTree")],
      [call("act", { action: "type %user% into the Username field" })],
      [call("act", { action: "type %password% into the Password field" })],
      [call("act", { action: "click the Sign in button" })],
      [call("done", { reasoning: "Signed in", taskComplete: true })],
    ]);
  };
  const task = () =>
    fx.dh.agent().execute({
      instruction: "Sign in",
      variables: { user: "carol", password: PASSWORD },
    });

  it("stores a successful run, replays it with no model call, heals a moved field and writes it back", {
    timeout: 60_000,
  }, async () => {
    html = LOGIN;
    await fx.dh.page.goto(fx.site.url("replay/login.html"));
    script();
    const first = await task();
    expect(first.success).toBe(true);
    expect(first.metadata?.cacheHit).toBeUndefined();
    const files = (await readdir(dir)).filter((f) => f.endsWith(".json"));
    const stored = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
    const entry = stored.find((text) => text.includes("deckhand-agent-run"))!;
    expect(entry).toBeDefined();
    expect(entry).toContain("%password%");
    expect(stored.join("\n")).not.toContain(PASSWORD);
    expect(stored.join("\n")).not.toContain("sk-test-ops");

    // Same task, same start page: no model request at all.
    await fx.dh.page.goto(fx.site.url("replay/login.html"));
    const calls = fx.model.callCount;
    const before = await fx.dh.metrics;
    const second = await task();
    expect(fx.model.callCount).toBe(calls);
    expect(second).toMatchObject({ success: true, completed: true, message: "Signed in" });
    expect(second.metadata).toMatchObject({ cacheHit: true });
    expect(typeof second.metadata?.cacheTimestamp).toBe("string");
    expect(second.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      reasoning_tokens: 0,
      cached_input_tokens: 0,
      inference_time_ms: 0,
    });
    expect((await fx.dh.metrics).totalPromptTokens).toBe(before.totalPromptTokens);
    expect(fx.dh.page.url()).toContain("account.html?user=carol");
    // How long it took is reported (not compared with the first run: on a busy machine either may be slower).
    expect(Number(second.metadata?.durationMs)).toBeGreaterThan(0);

    // The Username field moved: healed by its role and name (still no model), and written back.
    html = MOVED;
    await fx.dh.page.goto(fx.site.url("replay/login.html"));
    const third = await task();
    expect(fx.model.callCount).toBe(calls);
    expect(third.metadata).toMatchObject({ cacheHit: true, healed: true });
    expect(fx.dh.page.url()).toContain("account.html?user=carol");
    const rewritten = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
    expect(rewritten.find((t) => t.includes("deckhand-agent-run"))).toContain("div[1]/input[1]");

    // The page no longer fits (no Username field): the model takes over.
    html = GONE;
    await fx.dh.page.goto(fx.site.url("replay/login.html"));
    fx.model.clear();
    fx.model.resetRequests();
    verifyWith(fx.model, () => false);
    scriptAgent(fx.model, [[call("done", { reasoning: "There is no username field", taskComplete: false })]]);
    const fourth = await task();
    expect(agentRequests(fx.model)).toHaveLength(1);
    expect(fourth.success).toBe(false);
    expect(fourth.metadata?.cacheHit).toBeUndefined();
  });

  it("does not store a run that used a tool it cannot check again (a custom tool)", async () => {
    await fx.dh.page.goto(fx.site.url("agent/login.html"));
    const before = (await readdir(dir)).length;
    verifyWith(fx.model, () => true);
    scriptAgent(fx.model, [
      [call("lookup", { q: "x" })],
      [call("done", { reasoning: "looked it up", taskComplete: true })],
    ]);
    const result = await fx.dh
      .agent({
        tools: {
          lookup: tool({
            description: "Look something up",
            inputSchema: z.object({ q: z.string() }),
            execute: async () => "found",
          }),
        },
      })
      .execute("Look it up");
    expect(result.success).toBe(true);
    expect(result.actions[0]).toMatchObject({ type: "lookup", arguments: { q: "x" }, success: true });
    expect((await readdir(dir)).length).toBe(before);
  });
});
