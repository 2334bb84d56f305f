// The session report: one HTML document showing what a session did, step by step, grouped by page,
// with each step's screenshots. The service serves it at `sessionUrl` (the session page) and a LOCAL
// run writes it to a file (`report` option); both call renderSessionReport.
//
// Everything in it that came from a page or a caller (instructions, URLs, titles, extracted data,
// error messages) is escaped, and the document runs no script at all: its Content-Security-Policy
// (REPORT_CSP) allows no script, its one stylesheet by hash, and images only from where the caller
// says. Enlarging a screenshot is CSS (`:target`); the live view is an MJPEG stream in an <img>.

import { createHash } from "node:crypto";
import { splitCallLog } from "../deadline.ts";
import type { ReplayTokenUsage } from "../types.ts";

/** One operation of the session, as the report shows it. */
export interface ReportStep {
  /** act, extract, observe, navigate, agentExecute, or any other recorded operation. */
  method: string;
  /** The URL of the page it ran on: consecutive steps on one URL form one page of the report. */
  pageUrl: string;
  /** The call's parameters (variable values already redacted). */
  parameters: Record<string, unknown>;
  result: Record<string, unknown>;
  /** Start, epoch milliseconds. */
  timestamp: number;
  /** End, epoch milliseconds. */
  endTime?: number;
  tokenUsage?: ReplayTokenUsage;
  /** Image URLs (http(s) or data:) of the viewport before and after the step. */
  screenshots?: { before?: string; after?: string };
}

export interface SessionReportData {
  /** The heading, e.g. "Session 3f2a…". */
  title: string;
  status?: "active" | "ended";
  /** Epoch milliseconds. */
  startedAt?: number;
  endedAt?: number;
  steps: readonly ReportStep[];
  /** An MJPEG stream of the active page, shown while the session is active. */
  liveViewUrl?: string;
  /** Where the page can be reloaded for new steps (the page's own link). */
  selfUrl?: string;
  /**
   * The run's record (the replay record's rows, variable values masked), kept in the page as a JSON
   * data block so that `deckhand export --from-report` can export a saved LOCAL report.
   */
  record?: readonly unknown[];
  /** Files of the session to download (its run as a script): a label and a same-site or http(s) URL. */
  downloads?: readonly { label: string; url: string }[];
}

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#5d6678;--line:#dde1e8;--accent:#2f6fdf;--bad:#c62828;--badbg:#fdecec;--ok:#2e7d32;--chip:#eef1f6}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--card:#1d2129;--ink:#e6e9ef;--muted:#9aa3b2;--line:#2d333d;--accent:#7aa7ff;--bad:#ff8a80;--badbg:#3a1f22;--ok:#81c784;--chip:#272c35}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{background:var(--card);border-bottom:1px solid var(--line);padding:16px 24px;position:sticky;top:0;z-index:2}
h1{font-size:18px;margin:0 0 8px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.status{font-size:12px;font-weight:600;padding:2px 8px;border-radius:10px;background:var(--chip)}
.status.active{color:var(--ok)}
.totals{display:flex;flex-wrap:wrap;gap:8px 24px;margin:0;padding:0;list-style:none;color:var(--muted)}
.totals b{color:var(--ink);font-variant-numeric:tabular-nums}
.totals .bad b{color:var(--bad)}
main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}
.live{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px;margin-bottom:16px}
.live h2{margin:0 0 8px;font-size:15px}
.live img{width:100%;max-width:720px;height:auto;aspect-ratio:auto 1288/711;object-fit:contain;border:1px solid var(--line);border-radius:4px;display:block;background:var(--chip)}
section.page{margin:20px 0}
section.page>h2{font-size:13px;font-weight:600;color:var(--muted);margin:0 0 8px;word-break:break-all}
section.page>h2 a{color:var(--accent)}
ol.steps{list-style:none;margin:0;padding:0;display:grid;gap:10px}
li.step{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--line);border-radius:8px;padding:12px 14px;display:grid;grid-template-columns:minmax(0,1fr) auto;gap:12px}
li.step.failed{border-left-color:var(--bad);background:var(--badbg)}
li.step.ok{border-left-color:var(--ok)}
.head{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap}
.n{color:var(--muted);font-variant-numeric:tabular-nums}
.method{font-weight:700;text-transform:none;background:var(--chip);border-radius:4px;padding:0 6px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.instruction{font-weight:600;word-break:break-word}
.meta{display:flex;gap:4px 14px;flex-wrap:wrap;color:var(--muted);font-size:12.5px;margin:4px 0 0;padding:0;list-style:none;font-variant-numeric:tabular-nums}
.cache{font-weight:600}
.error{color:var(--bad);font-weight:600;margin:6px 0 0;word-break:break-word}
.calllog{margin:4px 0 0;padding:6px 8px 6px 26px;background:var(--chip);border-radius:6px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-word}
.message{margin:6px 0 0;word-break:break-word}
details{margin-top:6px}
summary{cursor:pointer;color:var(--accent);font-size:12.5px}
pre{margin:6px 0 0;padding:8px;background:var(--chip);border-radius:4px;overflow:auto;max-height:320px;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
.shots{display:flex;gap:8px;align-items:flex-start}
figure{margin:0;text-align:center}
figure img{width:176px;height:auto;aspect-ratio:auto 1288/711;object-fit:contain;border:1px solid var(--line);border-radius:4px;display:block;background:var(--chip)}
figcaption{font-size:11px;color:var(--muted)}
figure .close{display:none}
figure:target{position:fixed;inset:0;z-index:10;background:rgba(0,0,0,.82);display:flex;flex-direction:column;align-items:center;justify-content:center;padding:24px}
figure:target img{width:auto;max-width:96vw;max-height:88vh;aspect-ratio:auto;object-fit:contain}
figure:target figcaption{color:#fff;font-size:14px;margin-top:8px}
figure:target .close{display:block;position:absolute;top:12px;right:20px;color:#fff;font-size:28px;text-decoration:none}
.empty{color:var(--muted);padding:24px;text-align:center}
ol.substeps{margin:6px 0 0;padding-left:22px;font-size:13px;display:grid;gap:2px}
ol.substeps li.bad{color:var(--bad)}
a:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
@media (max-width:720px){li.step{grid-template-columns:1fr}figure img{width:140px}}
`;

/** The stylesheet's CSP source (a hash, so that it needs no nonce and no 'unsafe-inline'). */
const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

/**
 * The Content-Security-Policy of the report: no script, no frames, no form, nothing fetched but the
 * images from `imageSources` (the service's own origin: `'self'`; a file: `data:`).
 */
export function reportCsp(imageSources: string): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `img-src ${imageSources}`,
    "script-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text or an attribute value, safe in HTML. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A URL to put in href/src: only http(s) and images as data:, anything else is not linked. */
function safeUrl(url: string, allowData = false): string | undefined {
  if (/^https?:\/\//i.test(url)) return url;
  if (allowData && /^data:image\/(jpeg|png|webp);base64,[A-Za-z0-9+/=]*$/.test(url)) return url;
  if (url.startsWith("/") && !url.startsWith("//")) return url;
  return undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** What the step was asked to do, in words: its instruction, input or URL. */
export function stepInstruction(step: Pick<ReportStep, "method" | "parameters">): string {
  const p = step.parameters;
  const input = p.input;
  const options = (p.executeOptions ?? {}) as Record<string, unknown>;
  const nested =
    input && typeof input === "object"
      ? (text((input as Record<string, unknown>).description) ??
        `${text((input as Record<string, unknown>).method) ?? "act"} ${text((input as Record<string, unknown>).selector) ?? ""}`.trim())
      : undefined;
  return text(input) ?? nested ?? text(p.instruction) ?? text(options.instruction) ?? text(p.url) ?? "";
}

/** Whether the step failed, and its error. */
export function stepFailure(step: Pick<ReportStep, "result">): string | undefined {
  const r = step.result;
  if (r.success === false || typeof r.error === "string") {
    return text(r.error) ?? text(r.message) ?? "Failed.";
  }
  return undefined;
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function formatCost(cost: number): string {
  return `$${cost < 0.01 ? cost.toFixed(5) : cost.toFixed(3)}`;
}

function formatTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "";
}

function renderShot(id: string, label: string, url: string | undefined, stepNo: number): string {
  const src = url === undefined ? undefined : safeUrl(url, true);
  if (!src) return "";
  const alt = `Viewport ${label.toLowerCase()} step ${stepNo}`;
  return (
    `<figure id="${id}"><a href="#${id}" title="Enlarge"><img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}" loading="lazy" decoding="async"></a>` +
    `<figcaption>${escapeHtml(label)}</figcaption><a class="close" href="#step-${stepNo}" aria-label="Close">×</a></figure>`
  );
}

/** An agent run's own steps (its result's `actions`, each with a `type`), listed under it. */
function renderSubsteps(result: Record<string, unknown>): string {
  const actions = result.actions;
  if (!Array.isArray(actions)) return "";
  const steps = actions.filter(
    (a): a is Record<string, unknown> => typeof a === "object" && a !== null && typeof a.type === "string",
  );
  if (steps.length === 0) return "";
  const items = steps.map((a) => {
    const args = (a.arguments ?? {}) as Record<string, unknown>;
    const what =
      text(args.instruction) ??
      text(args.action) ??
      text(args.url) ??
      text(args.text) ??
      text(a.reasoning) ??
      "";
    const failed = a.success === false;
    const took =
      typeof a.durationMs === "number" ? ` <span class="n">${escapeHtml(formatMs(a.durationMs))}</span>` : "";
    return (
      `<li class="${failed ? "bad" : ""}"><span class="method">${escapeHtml(a.type)}</span> ${escapeHtml(what)}${took}` +
      `${failed ? ` <b>failed</b>` : ""}</li>`
    );
  });
  return `<ol class="substeps" aria-label="Agent steps">${items.join("")}</ol>`;
}

/**
 * A failed step's error and its call log (every wait and retry of the operation): the result's
 * `callLog` (a LOCAL report), or the log the error's message ends with (the service's record).
 */
function failureAndLog(step: ReportStep): { failure: string | undefined; callLog: string[] } {
  const failure = stepFailure(step);
  if (failure === undefined) return { failure, callLog: [] };
  const { text: said, lines } = splitCallLog(failure);
  const recorded = step.result.callLog;
  const callLog =
    Array.isArray(recorded) && recorded.every((line) => typeof line === "string") ? recorded : lines;
  return { failure: said, callLog };
}

function renderCallLog(lines: readonly string[]): string {
  if (lines.length === 0) return "";
  const items = lines.map((line) => `<li>${escapeHtml(line)}</li>`).join("");
  return `<ul class="calllog" aria-label="Call log">${items}</ul>`;
}

function renderStep(step: ReportStep, n: number): string {
  const { failure, callLog } = failureAndLog(step);
  const instruction = stepInstruction(step);
  const usage = step.tokenUsage ?? {};
  const meta: string[] = [`<li>${escapeHtml(formatTime(step.timestamp))}</li>`];
  if (step.endTime !== undefined)
    meta.push(`<li>took ${escapeHtml(formatMs(step.endTime - step.timestamp))}</li>`);
  if (usage.inputTokens !== undefined || usage.outputTokens !== undefined)
    meta.push(`<li>tokens ${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out</li>`);
  if (usage.timeMs !== undefined) meta.push(`<li>model ${escapeHtml(formatMs(usage.timeMs))}</li>`);
  if (usage.cost !== undefined) meta.push(`<li>cost ${escapeHtml(formatCost(usage.cost))}</li>`);
  const cache = text(step.result.cacheStatus);
  if (cache) meta.push(`<li class="cache">cache ${escapeHtml(cache)}</li>`);
  const message = failure === undefined ? text(step.result.message) : undefined;
  const shots = step.screenshots ?? {};
  return (
    `<li class="step ${failure === undefined ? "ok" : "failed"}" id="step-${n}"><div>` +
    `<div class="head"><span class="n">${n}.</span><span class="method">${escapeHtml(step.method)}</span>` +
    `<span class="instruction">${escapeHtml(instruction)}</span></div>` +
    `<ul class="meta">${meta.join("")}</ul>` +
    (failure === undefined ? "" : `<p class="error" role="alert">Failed: ${escapeHtml(failure)}</p>`) +
    renderCallLog(callLog) +
    (message ? `<p class="message">${escapeHtml(message)}</p>` : "") +
    renderSubsteps(step.result) +
    `<details><summary>Parameters and result</summary><pre>${escapeHtml(json(step.parameters))}</pre>` +
    `<pre>${escapeHtml(json(step.result))}</pre></details></div>` +
    `<div class="shots">${renderShot(`shot-${n}-before`, "Before", shots.before, n)}${renderShot(`shot-${n}-after`, "After", shots.after, n)}</div>` +
    `</li>`
  );
}

/** Consecutive steps on one URL, as the replay groups them into pages. */
export function groupByPage<S extends { pageUrl: string }>(
  steps: readonly S[],
): { url: string; steps: S[] }[] {
  const pages: { url: string; steps: S[] }[] = [];
  for (const step of steps) {
    const last = pages.at(-1);
    if (last && last.url === step.pageUrl) last.steps.push(step);
    else pages.push({ url: step.pageUrl, steps: [step] });
  }
  return pages;
}

function renderTotals(data: SessionReportData): string {
  let input = 0;
  let output = 0;
  let cost = 0;
  let failed = 0;
  let hits = 0;
  for (const step of data.steps) {
    input += step.tokenUsage?.inputTokens ?? 0;
    output += step.tokenUsage?.outputTokens ?? 0;
    cost += step.tokenUsage?.cost ?? 0;
    if (stepFailure(step) !== undefined) failed++;
    if (step.result.cacheStatus === "HIT") hits++;
  }
  const first = data.startedAt ?? data.steps[0]?.timestamp;
  const lastStep = data.steps.at(-1);
  const last = data.endedAt ?? (lastStep ? (lastStep.endTime ?? lastStep.timestamp) : undefined);
  const items = [
    `<li><b>${data.steps.length}</b> steps</li>`,
    `<li class="${failed > 0 ? "bad" : ""}"><b>${failed}</b> failed</li>`,
    `<li><b>${input.toLocaleString("en-US")}</b> input tokens</li>`,
    `<li><b>${output.toLocaleString("en-US")}</b> output tokens</li>`,
    `<li><b>${escapeHtml(formatCost(cost))}</b> cost</li>`,
    `<li><b>${hits}</b> cache hits</li>`,
  ];
  if (first !== undefined && last !== undefined)
    items.push(`<li><b>${escapeHtml(formatMs(last - first))}</b> total</li>`);
  if (first !== undefined) items.push(`<li>started <b>${escapeHtml(formatTime(first))}</b></li>`);
  return `<ul class="totals" aria-label="Totals">${items.join("")}</ul>`;
}

/** The whole report as one HTML document (see reportCsp for the policy to serve it with). */
/** The id of the record's data block in a report. */
export const REPORT_RECORD_ID = "deckhand-record";

/**
 * The record as a JSON data block: never run (its type is not a script's, and the page's policy
 * runs no script), and written so that no text in it can end the block (`<` as \u003c).
 */
function recordBlock(record: readonly unknown[] | undefined): string {
  if (!record) return "";
  const json = JSON.stringify(record)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
  return `<script type="application/json" id="${REPORT_RECORD_ID}">${json}</script>`;
}

export function renderSessionReport(data: SessionReportData, options: { csp?: string } = {}): string {
  let n = 0;
  const pages = groupByPage(data.steps).map((page) => {
    const href = safeUrl(page.url);
    const title = href
      ? `<a href="${escapeHtml(href)}" rel="noreferrer noopener">${escapeHtml(page.url)}</a>`
      : escapeHtml(page.url);
    const steps = page.steps.map((step) => renderStep(step, ++n)).join("");
    return `<section class="page"><h2>${title}</h2><ol class="steps">${steps}</ol></section>`;
  });
  const status = data.status
    ? `<span class="status ${data.status}">${data.status === "active" ? "live" : "ended"}</span>`
    : "";
  const live =
    data.status === "active" && data.liveViewUrl && safeUrl(data.liveViewUrl)
      ? `<section class="live" aria-label="Live view"><h2>Live view</h2><img src="${escapeHtml(data.liveViewUrl)}" alt="Live view of the session's active page" id="live-view">` +
        (data.selfUrl && safeUrl(data.selfUrl)
          ? `<p><a href="${escapeHtml(data.selfUrl)}">Reload</a> to see the steps taken since this page was opened.</p>`
          : "") +
        `</section>`
      : "";
  const links = (data.downloads ?? []).flatMap((d) => {
    const url = safeUrl(d.url);
    return url ? [`<a href="${escapeHtml(url)}" download>${escapeHtml(d.label)}</a>`] : [];
  });
  const downloads = links.length ? `<p class="downloads">Download the run as ${links.join(" · ")}</p>` : "";
  const meta = options.csp
    ? `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(options.csp)}">`
    : "";
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${meta}` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">` +
    `<title>${escapeHtml(data.title)}</title><style>${STYLE}</style></head><body>` +
    `<header><h1>${escapeHtml(data.title)} ${status}</h1>${renderTotals(data)}${downloads}</header><main>${live}` +
    (pages.length > 0 ? pages.join("") : `<p class="empty">No steps yet.</p>`) +
    `</main>${recordBlock(data.record)}</body></html>`
  );
}
