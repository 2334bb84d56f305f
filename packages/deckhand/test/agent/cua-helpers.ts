// Shared by the computer-use tests: one browser (a 1600x1000 viewport, larger than the 1280x800
// screenshots Claude and OpenAI get, so coordinate scaling is exercised), the fixture site with
// the test pages below, and the scripted computer-use model server.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type ScriptedComputerUseModel, startComputerUseModel } from "@deckhand/testkit";
import type { Page } from "deckhand";
import { closeFixture } from "../browser/helpers.ts";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";

export const VIEWPORT = { width: 1600, height: 1000 };

export const FORM_PAGE = `<!doctype html>
<html><head><title>Sign up</title><style>
  body { margin: 0; font: 16px sans-serif; }
  #form { position: absolute; left: 100px; top: 100px; }
  input { display: block; width: 300px; height: 30px; margin: 10px 0; font-size: 16px; caret-color: transparent; }
  button { width: 120px; height: 40px; }
  #words { position: absolute; left: 700px; top: 100px; font-size: 24px; }
  #hover { position: absolute; left: 700px; top: 300px; width: 200px; height: 100px; background: #cce; }
  #box { position: absolute; left: 700px; top: 500px; width: 80px; height: 80px; background: rgb(255, 0, 0); }
  #tall { position: absolute; top: 0; left: 0; width: 10px; height: 4000px; }
</style></head>
<body>
  <form id="form">
    <input id="name" aria-label="Name">
    <input id="email" aria-label="Email">
    <button id="submit">Send</button>
  </form>
  <p id="result" style="position:absolute;left:100px;top:300px"></p>
  <p id="words">alpha beta gamma</p>
  <div id="hover">hover me</div>
  <div id="box"></div>
  <div id="tall"></div>
  <script>
    const form = document.getElementById("form");
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      document.getElementById("result").textContent =
        "Thanks, " + document.getElementById("name").value + " <" + document.getElementById("email").value + ">";
    });
    document.getElementById("hover").addEventListener("mouseover", (e) => { e.target.textContent = "hovered"; });
    const box = document.getElementById("box");
    let drag;
    box.addEventListener("mousedown", (e) => { drag = { x: e.clientX - box.offsetLeft, y: e.clientY - box.offsetTop }; });
    window.addEventListener("mousemove", (e) => { if (drag) { box.style.left = (e.clientX - drag.x) + "px"; box.style.top = (e.clientY - drag.y) + "px"; } });
    window.addEventListener("mouseup", () => { drag = undefined; });
  </script>
</body></html>`;

export const DIALOG_PAGE = `<!doctype html><html><head><title>Dialogs</title><style>
  body { margin: 0; font: 16px sans-serif; }
  #who { position: absolute; left: 100px; top: 50px; width: 300px; height: 30px; }
  #alert { position: absolute; left: 100px; top: 100px; width: 150px; height: 40px; }
  #confirm { position: absolute; left: 300px; top: 100px; width: 150px; height: 40px; }
  #result { position: absolute; left: 100px; top: 200px; }
</style></head><body>
  <input id="who" aria-label="Who">
  <button id="alert" onclick="alert('Saved.'); document.getElementById('result').textContent = 'alerted'">Save</button>
  <button id="confirm" onclick="document.getElementById('result').textContent = confirm('Delete ' + document.getElementById('who').value + '?') ? 'deleted' : 'kept'">Delete</button>
  <p id="result"></p>
</body></html>`;

export const SECOND_PAGE = `<!doctype html><html><head><title>Second</title></head><body><h1>Second page</h1></body></html>`;

export interface CuaFixture {
  fx: BrowserFixture;
  model: ScriptedComputerUseModel;
  page: Page;
  formUrl: string;
  secondUrl: string;
  dialogUrl: string;
  close(): Promise<void>;
}

function html(body: string) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(body);
  };
}

export async function openCuaFixture(): Promise<CuaFixture> {
  const [fx, model] = await Promise.all([browserFixture({ viewport: VIEWPORT }), startComputerUseModel()]);
  fx.site.route("/cua/form.html", html(FORM_PAGE));
  fx.site.route("/cua/second.html", html(SECOND_PAGE));
  fx.site.route("/cua/dialog.html", html(DIALOG_PAGE));
  const page = fx.dh.context.pages()[0]!;
  return {
    fx,
    model,
    page,
    formUrl: fx.site.url("/cua/form.html"),
    secondUrl: fx.site.url("/cua/second.html"),
    dialogUrl: fx.site.url("/cua/dialog.html"),
    close: async () => {
      await model.close();
      await closeFixture(fx);
    },
  };
}

/** The centre of an element in viewport CSS pixels. */
export function centerOf(page: Page, selector: string): Promise<{ x: number; y: number }> {
  return page.evaluate((s: string) => {
    const r = document.querySelector(s)!.getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) };
  }, selector);
}

/** A viewport point in the pixels of a screenshot scaled to `shotWidth` (what Claude and OpenAI answer in). */
export function toShot(point: { x: number; y: number }, shotWidth = 1280): [number, number] {
  const scale = shotWidth / VIEWPORT.width;
  return [Math.round(point.x * scale), Math.round(point.y * scale)];
}

/** A viewport point in Gemini's 1000x1000 grid. */
export function toGrid(point: { x: number; y: number }): { x: number; y: number } {
  return {
    x: Math.round((point.x / VIEWPORT.width) * 1000),
    y: Math.round((point.y / VIEWPORT.height) * 1000),
  };
}

export function fieldValue(page: Page, selector: string): Promise<string> {
  return page.evaluate((s: string) => (document.querySelector(s) as HTMLInputElement).value, selector);
}

export function textOf(page: Page, selector: string): Promise<string> {
  return page.evaluate((s: string) => document.querySelector(s)?.textContent ?? "", selector);
}
