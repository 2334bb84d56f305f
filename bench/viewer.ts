// viewer: what the session page costs. Two services in this process on one small page, one with
// per-step screenshots and one without, driven in turns over HTTP:
//
// - an operation's answer: navigate and act (an Action, no model) timed from request to answer;
//   the difference of the medians is what a screenshot adds to an answer (the capture runs after it);
// - back to back: an act sent the moment the navigate before it was answered, which waits for that
//   navigate's screenshot (the next operation may not change the page before it is taken);
// - the capture itself (viewport JPEG, in the background), and the bytes stored per step;
// - the session page of a 300-step session (600 screenshots): the server's answer, and its load in
//   Chromium to the load event.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type CreatedKey,
  createLogger,
  createService,
  openStore,
  type Service,
  type Store,
} from "@deckhand/server";
import { type FixtureServer, startFixtureServer } from "@deckhand/testkit";
import { chromium } from "playwright-core";
import { QUIET_ARGS } from "./support/browser.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { sleep, summarize, timed } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const PAGE_HTML =
  "<!doctype html><title>Bench</title><h1>A small page</h1><p>Some text, a counter and a button.</p>" +
  '<p id=count>0</p><button onclick="count.textContent = Number(count.textContent) + 1">Add one</button>';
const ACTION = {
  selector: "/html/body/button",
  method: "click",
  arguments: [],
  description: "the add button",
};
/** Target: what a screenshot adds to an operation, median, ms. */
const ADDED_TARGET_MS = 15;
const STEPS = 300;

interface Running {
  service: Service;
  store: Store;
  dir: string;
  url: string;
  key: CreatedKey;
  sessionId: string;
}

async function start(screenshots: boolean): Promise<Running> {
  const dir = mkdtempSync(path.join(tmpdir(), "deckhand-bench-viewer-"));
  const store = await openStore({ dataDir: dir });
  const service = await createService({
    store,
    logger: createLogger({ level: "silent" }),
    browsers: { args: [...QUIET_ARGS] },
    screenshots: { enabled: screenshots },
  });
  await service.app.listen({ host: "127.0.0.1", port: 0 });
  const address = service.app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const key = await store.createKey({ name: "bench" });
  const started = await post(url, key.key, "/v1/sessions/start", {});
  return { service, store, dir, url, key, sessionId: (started as { sessionId: string }).sessionId };
}

async function post(url: string, key: string, pathname: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${url}${pathname}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-platform-api-key": key },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${pathname} answered ${response.status}: ${text}`);
  return JSON.parse(text).data;
}

function op(run: Running, name: string, body: unknown): Promise<unknown> {
  return post(run.url, run.key.key, `/v1/sessions/${run.sessionId}/${name}`, body);
}

async function stop(run: Running): Promise<void> {
  await run.service.app.close();
  await run.store.close();
  rmSync(run.dir, { recursive: true, force: true });
}

/** A 300-step session written straight to the store (screenshots: real captures, reused). */
async function longSession(run: Running, jpeg: Buffer): Promise<string> {
  const session = await run.store.createSession({ projectId: run.key.projectId, keyId: run.key.id });
  const t = Date.now() - STEPS * 2000;
  for (let i = 0; i < STEPS; i++) {
    const method = ["navigate", "act", "extract", "observe"][i % 4]!;
    const seq = await run.store.appendAction(session.id, {
      method,
      parameters:
        method === "navigate"
          ? { url: `https://shop.example/page/${i >> 2}` }
          : {
              instruction: `step ${i}: do the thing number ${i} on the page`,
              options: { variables: { user: "[redacted]" } },
            },
      result:
        i % 37 === 5
          ? { success: false, error: "The element was not found." }
          : { success: true, message: `Done ${i}.` },
      timestamp: t + i * 2000,
      endTime: t + i * 2000 + 900,
      pageUrl: `https://shop.example/page/${i >> 2}`,
      ...(method === "navigate"
        ? {}
        : { tokenUsage: { inputTokens: 1500 + i, outputTokens: 40, timeMs: 700, cost: 0.0012 } }),
    });
    await run.store.putScreenshot(session.id, seq, "before", jpeg);
    await run.store.putScreenshot(session.id, seq, "after", jpeg);
  }
  await run.store.endSession(session.id);
  return session.id;
}

export const viewerSuite: Suite = {
  name: "viewer",
  title: "session page: per-step screenshot cost, storage per step, 300-step page load",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const site: FixtureServer = await startFixtureServer();
    site.route("/bench-viewer.html", (_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(PAGE_HTML);
    });
    const pageUrl = site.url("bench-viewer.html");
    const on = await start(true);
    const off = await start(false);
    try {
      const reps = ctx.reps(40, 8);
      const samples = {
        on: { navigate: [] as number[], act: [] as number[], next: [] as number[] },
        off: { navigate: [] as number[], act: [] as number[], next: [] as number[] },
      };
      for (const run of [on, off]) await op(run, "navigate", { url: pageUrl }); // warm up
      for (let i = 0; i < reps; i++) {
        ctx.progress(`viewer: operations ${i + 1}/${reps}`);
        for (const [label, run] of [
          ["on", on],
          ["off", off],
        ] as const) {
          await sleep(150); // the previous step's screenshot is done
          samples[label].navigate.push((await timed(() => op(run, "navigate", { url: pageUrl }))).ms);
          // Sent the moment the navigate was answered: waits for its screenshot.
          samples[label].next.push((await timed(() => op(run, "act", { input: ACTION }))).ms);
          await sleep(150);
          samples[label].act.push((await timed(() => op(run, "act", { input: ACTION }))).ms);
        }
      }
      const rows = [];
      const added: Record<string, number> = {};
      for (const [name, label] of [
        ["navigate", "navigate: answer"],
        ["act", "act (Action): answer"],
        ["next", "act right after a navigate (waits for its screenshot)"],
      ] as const) {
        const withShots = summarize(samples.on[name]);
        const without = summarize(samples.off[name]);
        added[name] = withShots.median - without.median;
        rows.push([label, fmtMs(without.median), fmtMs(withShots.median), fmtMs(added[name])]);
        output.figures[`${name} with screenshots`] = withShots;
        output.figures[`${name} without screenshots`] = without;
      }

      // The capture itself, in the background, and what a step stores.
      const live = on.service.sessions.get(on.sessionId)!;
      const page = live.dh.context.activePage()!;
      const { captureStepScreenshot } = await import("deckhand");
      const captures: number[] = [];
      let jpeg: Buffer | null = null;
      for (let i = 0; i < reps; i++) {
        const shot = await timed(() => captureStepScreenshot(page));
        captures.push(shot.ms);
        jpeg = shot.value;
      }
      const capture = summarize(captures);
      output.figures["capture (viewport JPEG q60)"] = capture;
      const actions = await on.store.listActions(on.sessionId);
      const shots = await on.store.listScreenshots(on.sessionId);
      const bytesPerStep = shots.reduce((sum, s) => sum + s.bytes, 0) / Math.max(1, actions.length);
      output.figures["bytes per step"] = bytesPerStep;
      rows.push(["the capture itself (background)", "-", fmtMs(capture.median), "-"]);
      output.tables.push({
        title: "Per-step screenshots: an operation's time over HTTP, without and with them (median ms)",
        columns: ["operation", "without", "with", "added"],
        rows,
        notes: [
          `${reps} of each, in turns; the small page is ${PAGE_HTML.length} characters at the default viewport.`,
          `Stored per step: ${fmtInt(bytesPerStep)} bytes (JPEG q60; an act keeps a before and an after).`,
        ],
      });
      output.targets.push(
        checkTarget(
          "screenshot: added to an operation's answer, median",
          Math.max(added.navigate!, added.act!),
          "ms",
          "<=",
          ADDED_TARGET_MS,
        ),
      );

      // The session page of a 300-step session.
      ctx.progress("viewer: 300-step session page");
      const longId = await longSession(on, jpeg!);
      const token = on.service.app.deckhand.links.token(longId, on.key.id, "page");
      const viewUrl = `${on.url}/v1/sessions/${longId}/view?token=${token}`;
      const serverTimes: number[] = [];
      let htmlBytes = 0;
      for (let i = 0; i < ctx.reps(20, 5); i++) {
        const answer = await timed(async () => (await fetch(viewUrl)).text());
        serverTimes.push(answer.ms);
        htmlBytes = Buffer.byteLength(answer.value);
      }
      const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: [...QUIET_ARGS] });
      const loads: number[] = [];
      try {
        for (let i = 0; i < ctx.reps(8, 3); i++) {
          const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
          const tab = await context.newPage();
          const loaded = await timed(() => tab.goto(viewUrl, { waitUntil: "load" }));
          loads.push(loaded.ms);
          if ((await tab.locator("li.step").count()) !== STEPS)
            throw new Error("the page does not show every step");
          await context.close();
        }
      } finally {
        await browser.close();
      }
      const server = summarize(serverTimes);
      const load = summarize(loads);
      output.figures["300-step page: server answer"] = server;
      output.figures["300-step page: load in Chromium"] = load;
      output.tables.push({
        title: `The session page of a ${STEPS}-step session (${STEPS * 2} screenshots)`,
        columns: ["what", "median ms", "p95 ms"],
        rows: [
          ["server: GET .../view (render from the store)", fmtMs(server.median), fmtMs(server.p95)],
          ["Chromium: navigation to the load event", fmtMs(load.median), fmtMs(load.p95)],
        ],
        notes: [`HTML: ${fmtInt(htmlBytes)} bytes; screenshots load lazily as they scroll into view.`],
      });
      output.targets.push(
        checkTarget("300-step session page, load in Chromium, median", load.median, "ms", "<=", 1000),
      );
    } finally {
      await Promise.all([stop(on), stop(off)]);
      await site.close();
    }
    return output;
  },
};
