// A program written for the reference library's v3 API (v3-program.ts, its import line changed and
// nothing else) runs to the end in its own Node process, LOCAL and against the Deckhand service,
// with the scripted model on loopback speaking OpenAI's wire.

import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FixtureServer,
  match,
  type ScriptedModel,
  type ScriptedRequest,
  startFixtureServer,
  startScriptedModel,
} from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.ts";

const PROGRAM = path.join(path.dirname(fileURLToPath(import.meta.url)), "v3-program.ts");
const MODEL_KEY = "sk-test-v3-program-0123456789";

let site: FixtureServer;
let model: ScriptedModel;
let service: TestService;

function idIn(request: ScriptedRequest, line: string): number {
  const found = new RegExp(`\\[(\\d+)\\] ${line}`).exec(request.text);
  if (!found) throw new Error(`no ${line} in the outline:\n${request.text}`);
  return Number(found[1]);
}

beforeAll(async () => {
  [site, model, service] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    startTestService(),
  ]);
  model.on(match.schemaName("act"), (request) => ({
    elementId: idIn(request, "textbox: Username"),
    method: "fill",
    arguments: ["alice"],
    description: "the Username field",
    completed: true,
  }));
  model.on(match.schemaName("extract"), { heading: "Sign in" });
  model.on(match.schemaName("observe"), (request) => ({
    elements: [
      {
        elementId: idIn(request, "button: Sign in"),
        description: "the Sign in button",
        method: "click",
        arguments: [],
      },
    ],
  }));
});

afterAll(async () => {
  await Promise.all([site?.close(), model?.close(), service?.close()]);
});

/** Runs the program to its end; its RESULT line, parsed. */
async function runProgram(env: Record<string, string>): Promise<Record<string, unknown>> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=deckhand-source", "--no-warnings", PROGRAM],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        START_URL: site.url("form.html"),
        OPENAI_API_KEY: MODEL_KEY,
        OPENAI_BASE_URL: model.baseURL,
        ...env,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  expect(code, `the program failed:\n${err}\n${out}`).toBe(0);
  const line = /^RESULT (.*)$/m.exec(out);
  expect(line, out).not.toBeNull();
  return JSON.parse(line![1]!);
}

function expectRanToTheEnd(result: Record<string, unknown>): void {
  expect(result).toMatchObject({
    typed: true,
    heading: "Sign in",
    observed: {
      description: "the Sign in button",
      method: "click",
      arguments: [],
      selector: expect.stringMatching(/^xpath=|^\//),
    },
    clicked: true,
  });
  // The form really got the typed name and the click submitted it.
  expect(JSON.parse(result.result as string)).toMatchObject({ username: "alice" });
  expect(result.totalPromptTokens).toBeGreaterThan(0);
  expect(result.actPromptTokens).toBeGreaterThan(0);
  expect(result.history).toEqual(["navigate", "act", "extract", "observe", "act"]);
}

describe("a v3 program ported by renaming its import", () => {
  it("runs LOCAL", async () => {
    expectRanToTheEnd(await runProgram({ STAGEHAND_ENV: "LOCAL" }));
  });

  it('runs with env "BROWSERBASE" against the Deckhand service, found through PLATFORM_API_URL', async () => {
    const before = service.service.sessions.size;
    expectRanToTheEnd(
      await runProgram({
        STAGEHAND_ENV: "BROWSERBASE",
        BROWSERBASE_API_KEY: service.apiKey,
        PLATFORM_API_URL: service.url,
      }),
    );
    // close() ended its session on the service.
    expect(service.service.sessions.size).toBe(before);
  });
});
