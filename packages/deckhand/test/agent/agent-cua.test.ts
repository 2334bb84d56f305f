// Computer-use mode through the agent's API, LOCAL and REMOTE: `agent({ mode: "cua" })` (and the
// deprecated `cua: true`) drives the page with Claude's computer tool (a scripted Anthropic
// Messages API on loopback, through the AI SDK's provider), a variable typed for the model that
// never sees it, the tokens under agent*; a model that cannot do computer use is a typed error
// before any call (the service: 422).

import { type ScriptedComputerUseModel, startComputerUseModel } from "@deckhand/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MODES, type OpsFixture, open, opsFixture, textOf } from "../ops/helpers.ts";

const EMAIL = "ada-cua@example.test";
const PAGE = `<!doctype html><html><head><title>Newsletter</title></head><body>
<form id="f"><input id="email" aria-label="Email" autofocus><button>Subscribe</button></form>
<p id="result"></p>
<script>
  document.getElementById("f").addEventListener("submit", (e) => {
    e.preventDefault();
    document.getElementById("result").textContent = "Subscribed " + document.getElementById("email").value;
  });
</script></body></html>`;

describe.each(MODES)("agent in computer-use mode, %s", (mode) => {
  let fx: OpsFixture;
  let cua: ScriptedComputerUseModel;
  beforeAll(async () => {
    [fx, cua] = await Promise.all([opsFixture(mode), startComputerUseModel()]);
    fx.site.route("/cua/newsletter.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(PAGE);
    });
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
    await cua?.close();
  });
  beforeEach(() => cua.reset());

  const claude = () => ({
    modelName: "anthropic/claude-sonnet-4-5",
    apiKey: "sk-ant-test-agent-cua",
    baseURL: cua.anthropicBaseURL,
  });

  it("types a variable the model never sees and submits, with the tokens under agent*", async () => {
    const page = await open(fx, "cua/newsletter.html");
    await page.locator("#email").click();
    cua.queue(
      "anthropic",
      { toolUses: [{ action: "type", text: "%email%" }] },
      { toolUses: [{ action: "key", text: "Return" }] },
      { text: "Subscribed with the email." },
    );
    const before = await fx.dh.metrics;
    const result = await fx.dh.agent({ mode: "cua", model: claude() }).execute({
      instruction: "Subscribe with my email",
      variables: { email: { value: EMAIL, description: "my email" } },
    });
    expect(result).toMatchObject({ success: true, completed: true, message: "Subscribed with the email." });
    expect(await textOf(page, "#result")).toBe(`Subscribed ${EMAIL}`);
    expect(result.actions.map((a) => a.type)).toEqual(["type", "key"]);
    expect(result.actions[0]).toMatchObject({ arguments: { text: "%email%" }, success: true });
    for (const r of cua.requests) expect(JSON.stringify(r.body)).not.toContain(EMAIL);
    expect(JSON.stringify(result)).not.toContain(EMAIL);
    expect(cua.requests[0]!.text).toContain("%email%: my email");
    const after = await fx.dh.metrics;
    expect(after.agentPromptTokens - before.agentPromptTokens).toBe(result.usage!.input_tokens);
    expect(result.usage!.input_tokens).toBeGreaterThan(0);
    expect(after.actPromptTokens).toBe(before.actPromptTokens);
  }, 60_000);

  it("a model that cannot do computer use is a typed error before any call", async () => {
    await open(fx, "cua/newsletter.html");
    const calls = cua.requests.length + fx.model.callCount;
    for (const config of [
      { mode: "cua" as const, model: "openai/gpt-4.1-mini" },
      { cua: true, model: "anthropic/claude-2" },
    ]) {
      await expect(fx.dh.agent(config).execute("Subscribe")).rejects.toMatchObject({
        name: "UnsupportedModelError",
        message: expect.stringMatching(/cannot do computer use/),
      });
    }
    expect(cua.requests.length + fx.model.callCount).toBe(calls);
  });
});
