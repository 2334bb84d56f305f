// The `deckhand` export runs for real, as a program of its own (the pinned Node, the library's
// sources, Chromium, the scripted model behind the real OpenAI provider code, configured the way a
// user would: environment variables). On the page it was recorded on it makes no model call; on a
// page where an element moved, that step is found again with one model call, and the program says
// so.

import { beaconsSince, match, runDeckhandScript, serveExportPages, typeCheck } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY,
  anotherDeckhand,
  idOf,
  MODEL_NAME,
  type OpsFixture,
  onAct,
  opsFixture,
  step,
} from "../ops/helpers.ts";

const NOTES = `<label>Title <input onchange="beacon('title', this.value)"></label>`;
const SAVE = `<button onclick="beacon('save', document.querySelector('input').value)">Save</button>`;

function notesPage(body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Notes</title><script>
function beacon(what, value) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", "/beacon?" + new URLSearchParams({ what, value: String(value) }), false);
  xhr.send();
}
</script></head><body><h1>Notes</h1>${body}</body></html>`;
}

describe("the deckhand export", () => {
  let fx: OpsFixture;
  let unserve: () => void;
  let script: string;
  let recorded: string[];
  const html = { current: notesPage(`${NOTES}${SAVE}`) };

  beforeAll(async () => {
    fx = await opsFixture("LOCAL");
    unserve = serveExportPages(fx.site);
    fx.site.route("/x/notes.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html.current);
    });
    const dh = await anotherDeckhand(fx);
    try {
      await dh.page.goto(fx.site.url("/x/notes.html"));
      const from = fx.site.requests.length;
      for (const [instruction, line, method, args] of [
        ["type Groceries as the title", "textbox: Title", "fill", ["Groceries"]],
        ["save the note", "button: Save", "click", []],
      ] as const) {
        const rule = onAct(fx.model, (request) =>
          step({ elementId: idOf(request, line), method, arguments: [...args], description: instruction }),
        );
        const result = await dh.act(instruction);
        rule.remove();
        expect(result.success, result.message).toBe(true);
      }
      recorded = beaconsSince(fx.site, from);
      script = await dh.exportScript({ format: "deckhand" });
    } finally {
      await dh.close();
    }
  });
  afterAll(async () => {
    unserve?.();
    await fx?.close();
  });

  /** The environment a user would give the program: the model, its endpoint and key, the browser. */
  const env = () => ({
    DECKHAND_MODEL: MODEL_NAME,
    OPENAI_BASE_URL: fx.model.baseURL,
    OPENAI_API_KEY: API_KEY,
  });

  it("is act(action) steps with their instructions, and type-checks against the library", async () => {
    expect(recorded).toEqual(["title=Groceries", "save=Groceries"]);
    expect(script).toContain('method: "fill"');
    expect(script).toContain('description: "save the note"');
    const checked = await typeCheck("script.ts", script);
    expect(checked.status, `${checked.output}\n${script}`).toBe(0);
  });

  it("replays with no model call on the page it was recorded on", async () => {
    html.current = notesPage(`${NOTES}${SAVE}`);
    const calls = fx.model.requests.length;
    const from = fx.site.requests.length;
    const ran = await runDeckhandScript(script, env());
    expect(ran.status, `${ran.output}\n${script}`).toBe(0);
    expect(fx.model.requests.length).toBe(calls);
    expect(beaconsSince(fx.site, from)).toEqual(recorded);
    expect(ran.output).not.toContain("healed");
  });

  it("heals a step whose element moved with one model call, and says so", async () => {
    // The Save button moved into a toolbar above the field: its recorded XPath leads nowhere now.
    html.current = notesPage(`<div class="toolbar">${SAVE}</div>${NOTES}`);
    const rule = fx.model.on(match.schemaName("observe"), (request) => ({
      elements: [{ elementId: idOf(request, "button: Save"), description: "the Save button" }],
    }));
    const calls = fx.model.requests.length;
    const from = fx.site.requests.length;
    try {
      const ran = await runDeckhandScript(script, env());
      expect(ran.status, `${ran.output}\n${script}`).toBe(0);
      expect(fx.model.requests.length - calls).toBe(1);
      expect(ran.output).toContain("healed: Done: save the note. (Self-healed");
    } finally {
      rule.remove();
    }
    expect(beaconsSince(fx.site, from)).toEqual(recorded);
  });
});
