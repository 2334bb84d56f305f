// Every example in examples/ runs, as a user would run it, against the bundled pages. The ones
// that need a model get the scripted model server (OpenAI's wire, reached through the real
// provider code) through the examples' own settings: DECKHAND_MODEL_BASE_URL and the usual key
// variable. The rest run with no key at all.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FixtureServer,
  match,
  processesMentioning,
  type ScriptedModel,
  startFixtureServer,
  startScriptedModel,
  waitForNoChrome,
} from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.ts";

const root = fileURLToPath(new URL("../../../../", import.meta.url));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Longest an example may run: far beyond what one takes on a busy machine (a minute); a stall. */
const RUN_LIMIT_MS = 150_000;
/** A test's own limit: beyond RUN_LIMIT_MS, so that a stalled example is stopped and cleaned up by run(). */
const TEST_LIMIT_MS = RUN_LIMIT_MS + 30_000;

/**
 * Runs a command in a process group of its own, as a terminal would; past RUN_LIMIT_MS the whole
 * group is killed (a shell script's children too, not only the shell), and its output so far is
 * the result (code -1).
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    let stalled = false;
    const limit = setTimeout(() => {
      stalled = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }, RUN_LIMIT_MS);
    child.on("close", (code) => {
      clearTimeout(limit);
      resolve({
        code: stalled ? -1 : (code ?? -1),
        stdout,
        stderr: stalled ? `${stderr}\n(stopped after ${RUN_LIMIT_MS} ms)` : stderr,
      });
    });
  });
}

/** Kills whatever still runs with `dir` on its command line (a browser whose profile is there, its keeper). */
function killEverythingIn(dir: string): void {
  for (const { pid } of processesMentioning(dir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** No model key, no service settings: a fresh machine. */
function freshEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/_API_KEY$|^PLATFORM_|^DECKHAND_/.test(key)) delete env[key];
  return { ...env, ...extra };
}

const example = (name: string, env: NodeJS.ProcessEnv) =>
  run(process.execPath, ["--conditions=deckhand-source", "--no-warnings", join("examples", name)], env);

let model: ScriptedModel;
let dir: string;
beforeAll(async () => {
  model = await startScriptedModel();
  dir = mkdtempSync(join(tmpdir(), "deckhand-examples-test-"));
});
afterAll(async () => {
  await model?.close();
  if (dir) {
    killEverythingIn(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

const withModel = () =>
  freshEnv({
    DECKHAND_MODEL: "openai/gpt-4.1-mini",
    DECKHAND_MODEL_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test-examples-0123456789",
  });

// The examples that need no scripted model answers run at once (each is a process that mostly
// waits for its browser); the two that script the shared model run one after the other.
describe("examples/", { timeout: TEST_LIMIT_MS }, () => {
  it("scrape-list.ts: the shirts as typed data", async () => {
    model.on(match.schemaName("extract"), () => ({
      shirts: [
        { name: "Blue shirt", price: "$24.00" },
        { name: "Red shirt", price: "$22.00" },
        { name: "Green shirt", price: "$26.50" },
      ],
    }));
    try {
      const ran = await example("scrape-list.ts", withModel());
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain("Blue shirt: $24.00\nRed shirt: $22.00\nGreen shirt: $26.50");
      // The model was shown the page.
      expect(model.lastRequest?.text).toContain("Green shirt, $26.50");
    } finally {
      model.clear();
    }
  });

  it("action-cache.ts: the model the first time, the cache the second", async () => {
    model.on(match.schemaName("act"), (request) => {
      const id = Number(/Red shirt, \$22\.00\n\s*\[(\d+)\] button: Add to cart/.exec(request.text)![1]);
      return {
        elementId: id,
        method: "click",
        arguments: [],
        description: "click Add to cart for the red shirt",
        completed: true,
      };
    });
    try {
      const asked = model.requests.length;
      const ran = await example("action-cache.ts", withModel());
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toMatch(
        /run 1: Done: click Add to cart for the red shirt\. \([1-9]\d* prompt tokens\) -> In your cart: Red shirt\./,
      );
      expect(ran.stdout).toMatch(
        /run 2: Done from the action cache: .*\(0 prompt tokens\) -> In your cart: Red shirt\./,
      );
      expect(model.requests.length - asked).toBe(1);
    } finally {
      model.clear();
    }
  });

  it.concurrent("login-with-variables.ts: signed in, with no model and the password nowhere", async () => {
    const ran = await example("login-with-variables.ts", freshEnv());
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.match(/^ok: /gm)).toHaveLength(4);
    expect(ran.stdout).toContain("Welcome back! You are signed in and will stay signed in.");
    expect(ran.stdout).toContain("history mentions the password: false");
    expect(ran.stdout + ran.stderr).not.toContain("correct horse battery");
  });

  it.concurrent("custom-llm-client.ts: a model of one's own", async () => {
    const ran = await example("custom-llm-client.ts", freshEnv());
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("In your cart: Green shirt.");
  });

  it.concurrent("playwright-page.ts: Playwright and Deckhand on one page", async () => {
    const ran = await example("playwright-page.ts", freshEnv());
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("In your cart: Blue shirt.");
    expect(ran.stdout).toContain("Full name: Grace Hopper, country: Spain");
  });

  it.concurrent("mcp-client.ts: an MCP client driving the shop", async () => {
    const ran = await example("mcp-client.ts", freshEnv());
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      "tools: navigate, act, extract, observe, text, screenshot, tabs, back, forward, agent",
    );
    expect(ran.stdout).toContain("[13] checkbox: Gift wrap checked");
  });

  it.concurrent("service.ts: REMOTE mode against a service it starts", async () => {
    const ran = await example("service.ts", freshEnv());
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/Session [0-9a-f-]{36}/);
    expect(ran.stdout).toContain("Welcome back! You are signed in.");
  });

  it.concurrent("cli.sh: commands chained on one kept browser, nothing left running after it", {
    timeout: TEST_LIMIT_MS,
  }, async () => {
    const state = join(dir, "cli.json");
    try {
      const ran = await run(
        "bash",
        ["examples/cli.sh"],
        freshEnv({ DECKHAND_CLI_STATE: state, TMPDIR: dir }),
      );
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      expect(ran.stdout).toContain(
        'Done without a model (explicit instruction): select "Germany" from the Country dropdown.',
      );
      expect(ran.stdout).toContain("Order placed for Ada Lovelace: nothing to Germany.");
      expect(ran.stdout).toMatch(/screenshot: \d+ bytes/);
      // Its `deckhand close` ended the kept browser and its keeper (their profile is under `dir`).
      expect(await waitForNoChrome(dir)).toEqual([]);
      expect(processesMentioning(dir)).toEqual([]);
      expect(existsSync(state)).toBe(false);
    } finally {
      // Whatever happened (a stalled script, a failed close): end what it kept, and anything else
      // it started, before afterAll removes the directory it all lives in.
      if (existsSync(state)) {
        const kept = JSON.parse(readFileSync(state, "utf8")) as { pid?: number };
        if (kept.pid) {
          try {
            process.kill(-kept.pid, "SIGKILL");
          } catch {
            // gone meanwhile
          }
        }
      }
      killEverythingIn(dir);
    }
  });

  describe("service-curl.sh", { timeout: TEST_LIMIT_MS }, () => {
    let service: TestService;
    let site: FixtureServer;
    beforeAll(async () => {
      [service, site] = await Promise.all([startTestService(), startFixtureServer()]);
      site.route("/example-shop.html", async (_req, res) => {
        const { readFile } = await import("node:fs/promises");
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(await readFile(join(root, "examples/pages/shop.html")));
      });
    });
    afterAll(async () => {
      await site?.close();
      await service?.close();
    });

    it("starts a session, acts, reads the page and ends it, with curl", async () => {
      const ran = await run(
        "bash",
        ["examples/service-curl.sh"],
        freshEnv({
          PLATFORM_API_URL: service.url,
          PLATFORM_API_KEY: service.apiKey,
          PAGE_URL: site.url("example-shop.html"),
        }),
      );
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toMatch(/^session [0-9a-f-]{36}$/m);
      expect(ran.stdout).toContain("Done without a model (explicit instruction): check Gift wrap.");
      expect(ran.stdout).toContain('textbox: Full name value="Ada Lovelace"');
      expect(ran.stdout).toContain("checkbox: Gift wrap checked");
    });
  });
});
