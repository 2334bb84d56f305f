// dashboard: what the project dashboard costs the server. One SQLite store holding two projects of
// SESSIONS sessions each, STEPS_PER_SESSION recorded steps per session; a browser-less client signs in
// through the form (as a browser would: the CSRF cookie and token, then the signed cookie) and asks
// for GET /dashboard, whose answer lists the 50 newest sessions with their totals and adds up 14
// days (two store queries and the render).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createApp, createLogger, openStore } from "@deckhand/server";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize, timed } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const SESSIONS = 1000;
const STEPS_PER_SESSION = 20;
/** Target: the dashboard's answer with SESSIONS sessions in the project, median, ms. */
const TARGET_MS = 250;

/** The cookies a response sets, as a Cookie header (names and values). */
function cookiesOf(response: Response, jar: Map<string, string>): string {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair!.indexOf("=");
    const name = pair!.slice(0, at);
    const value = pair!.slice(at + 1);
    if (value === "") jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
}

export const dashboardSuite: Suite = {
  name: "dashboard",
  title: `project dashboard: GET /dashboard with ${fmtInt(SESSIONS)} sessions of ${STEPS_PER_SESSION} steps (SQLite)`,
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const dir = mkdtempSync(path.join(tmpdir(), "deckhand-bench-dashboard-"));
    const store = await openStore({ dataDir: dir });
    const app = await createApp({ store, logger: createLogger({ level: "silent" }) });
    try {
      await app.listen({ host: "127.0.0.1", port: 0 });
      const address = app.server.address();
      const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
      const mine = await store.createKey({ name: "bench" });
      const theirs = await store.createKey({ name: "other project" });
      const start = Date.now() - SESSIONS * 60_000;
      for (const key of [mine, theirs]) {
        for (let i = 0; i < SESSIONS; i++) {
          if (i % 100 === 0) ctx.progress(`dashboard: filling the store ${i}/${SESSIONS}`);
          const at = start + i * 60_000;
          const session = await store.createSession({
            projectId: key.projectId,
            keyId: key.id,
            createdAt: at,
          });
          for (let s = 0; s < STEPS_PER_SESSION; s++) {
            await store.appendAction(session.id, {
              method: s % 4 === 0 ? "navigate" : "act",
              parameters: { input: `step ${s}` },
              result: s % 7 === 3 ? { success: true, cacheStatus: "HIT" } : { success: true },
              timestamp: at + s * 1000,
              endTime: at + s * 1000 + 500,
              pageUrl: `https://shop.example/${s >> 2}`,
              tokenUsage: { inputTokens: 1500, outputTokens: 40, cost: 0.0012 },
            });
          }
          if (i < SESSIONS - 5) await store.endSession(session.id, at + 30_000, "ended by the client");
        }
      }

      // Sign in as a browser does.
      const jar = new Map<string, string>();
      const form = await fetch(`${url}/dashboard/sign-in`);
      let cookie = cookiesOf(form, jar);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
      const signIn = await fetch(`${url}/dashboard/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ key: mine.key, _csrf: csrf }),
      });
      if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
      cookie = cookiesOf(signIn, jar);

      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < ctx.reps(30, 8); i++) {
        ctx.progress(`dashboard: GET /dashboard ${i + 1}`);
        const answer = await timed(async () => {
          const response = await fetch(`${url}/dashboard`, { headers: { cookie } });
          if (response.status !== 200) throw new Error(`GET /dashboard answered ${response.status}`);
          return response.text();
        });
        times.push(answer.ms);
        bytes = Buffer.byteLength(answer.value);
      }
      const dashboard = summarize(times);
      output.figures["GET /dashboard"] = dashboard;
      output.tables.push({
        title: `The project dashboard, ${fmtInt(SESSIONS)} sessions x ${STEPS_PER_SESSION} steps per project, two projects (SQLite)`,
        columns: ["what", "median ms", "p95 ms"],
        rows: [
          [
            "server: GET /dashboard (cookie check, two queries, render)",
            fmtMs(dashboard.median),
            fmtMs(dashboard.p95),
          ],
        ],
        notes: [`HTML: ${fmtInt(bytes)} bytes (50 sessions listed, 14 days added up).`],
      });
      output.targets.push(checkTarget("GET /dashboard, median", dashboard.median, "ms", "<=", TARGET_MS));
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return output;
  },
};
