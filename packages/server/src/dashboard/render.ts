// The dashboard's HTML: the sign-in form and the project's page. Rendered on the server with every
// value escaped (session ids, key names and end reasons are data), served with a policy that allows
// no script at all and this stylesheet by its hash, as the session page is. The only difference
// from the session page's policy is `form-action 'self'`: signing in and out are forms.

import { createHash } from "node:crypto";
import type { DailyTotals, SessionSummary } from "../store/store.ts";

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#5d6678;--line:#dde1e8;--accent:#1f5fbf;--ok:#1d7a3e;--bad:#b3261e;--chip:#eef1f6}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--card:#1d2129;--ink:#e6e9ef;--muted:#9aa3b2;--line:#2d333d;--accent:#8ab4ff;--ok:#7bd88f;--bad:#ff8a80;--chip:#272c35}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{background:var(--card);border-bottom:1px solid var(--line)}
.bar{max-width:1200px;margin:0 auto;padding:14px 24px;display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;justify-content:space-between}
.brand{font-size:18px;font-weight:700;margin:0}
.brand small{font-size:13px;font-weight:400;color:var(--muted);margin-left:6px;word-break:break-all}
table.sessions{table-layout:fixed}
table.sessions th:nth-child(1){width:10%}table.sessions th:nth-child(2){width:8%}table.sessions th:nth-child(3){width:17%}
table.sessions th:nth-child(4){width:9%}table.sessions th:nth-child(5){width:7%}table.sessions th:nth-child(6){width:8%}
table.sessions th:nth-child(7){width:12%}table.sessions th:nth-child(8){width:8%}table.sessions th:nth-child(9){width:8%}
main{max-width:1200px;margin:0 auto;padding:20px 24px 48px}
main.narrow{max-width:460px;padding-top:48px}
h2{font-size:16px;margin:28px 0 10px}
h2 .count{color:var(--muted);font-weight:400}
p{margin:8px 0}
.muted{color:var(--muted)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px}
dl.facts{display:flex;flex-wrap:wrap;gap:10px 28px;margin:0}
dl.facts dt{font-size:12px;color:var(--muted)}
dl.facts dd{margin:0;font-weight:600;word-break:break-all}
form.inline{margin:0}
label{display:block;font-weight:600;margin:0 0 6px}
input[type=password]{width:100%;font:15px ui-monospace,Menlo,Consolas,monospace;padding:9px 10px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--ink)}
button{font:inherit;font-weight:600;padding:8px 16px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.quiet{background:transparent;color:var(--accent)}
.actions{margin-top:14px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
.error{color:var(--bad);font-weight:600}
.table{background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;font-weight:600;color:var(--muted);background:var(--chip);white-space:nowrap}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right}
td.id a{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.status{font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;background:var(--chip);white-space:nowrap}
.status.active{color:var(--ok)}
.bad{color:var(--bad)}
.empty{padding:18px;color:var(--muted);text-align:center}
footer{max-width:1200px;margin:0 auto;padding:0 24px 32px;color:var(--muted);font-size:13px}
@media (max-width:760px){
.bar,main,footer{padding-left:14px;padding-right:14px}
.table{border:0;background:transparent}
table.rows thead{display:none}
table.rows,table.rows tbody,table.rows tr,table.rows td{display:block;width:100%}
table.rows tr{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:0 0 10px;padding:6px 12px}
table.rows td{border:0;padding:3px 0;display:flex;justify-content:space-between;gap:12px;text-align:right}
table.rows td::before{content:attr(data-label);color:var(--muted);font-size:12.5px;text-align:left}
table.rows td.id{font-size:15px;text-align:left}
table.rows td.id::before{content:none}
.brand small{display:block;margin:2px 0 0}
}
`;

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

/** The dashboard's policy: the session page's (no script, this style, images from here), plus its own forms. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `style-src ${STYLE_HASH}`,
  "img-src 'self'",
  "script-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>
`;
}

/** `2026-11-26 09:12 UTC` */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** `45 s`, `4 min 12 s`, `2 h 5 min`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function formatCost(cost: number): string {
  if (cost === 0) return "$0";
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export interface SignInView {
  csrfToken: string;
  /** Shown above the form (a refused key, a session that ended). */
  error?: string;
}

export function renderSignIn(view: SignInView): string {
  return page(
    "Sign in · Deckhand dashboard",
    `<header><div class="bar"><p class="brand">Deckhand dashboard</p><a href="/">Service home</a></div></header>
<main class="narrow">
<h1 class="brand">Sign in to your project</h1>
<p class="muted">Paste an API key of the project. It is checked once and not kept: the service keeps a signed cookie
that names the key, and it stops working as soon as the key is revoked.</p>
<form class="card" method="post" action="/dashboard/sign-in">
${view.error ? `<p class="error" role="alert" id="sign-in-error">${esc(view.error)}</p>` : ""}
<label for="key">API key</label>
<input type="password" id="key" name="key" autocomplete="off" spellcheck="false" required maxlength="200"
 ${view.error ? 'aria-describedby="sign-in-error" ' : ""}placeholder="dh_…">
<input type="hidden" name="_csrf" value="${esc(view.csrfToken)}">
<div class="actions"><button type="submit">Sign in</button></div>
</form>
</main>`,
  );
}

export interface KeyView {
  id: string;
  name?: string;
  projectId: string;
  createdAt?: number;
  /** An operator key (DECKHAND_API_KEYS) rather than one in the store. */
  operator: boolean;
}

export interface DashboardView {
  key: KeyView;
  sessions: readonly SessionSummary[];
  days: readonly DailyTotals[];
  /** How many days `days` covers. */
  dayCount: number;
  csrfToken: string;
  now: number;
  /** The link of a session row (it redirects to the session page). */
  sessionLink(id: string): string;
}

function sessionRow(view: DashboardView, s: SessionSummary): string {
  const duration = (s.endedAt ?? view.now) - s.createdAt;
  const cell = (label: string, value: string, cls = "num") =>
    `<td class="${cls}" data-label="${esc(label)}">${value}</td>`;
  return `<tr>
<td class="id" data-label="Session"><a href="${esc(view.sessionLink(s.id))}" title="${esc(s.id)}">${esc(s.id.slice(0, 8))}</a></td>
${cell("Status", `<span class="status ${esc(s.status)}">${s.status === "active" ? "live" : "ended"}</span>`, "")}
${cell("Started", esc(formatTime(s.createdAt)), "")}
${cell("Duration", esc(formatDuration(duration)))}
${cell("Pages", formatCount(s.pages))}
${cell("Steps", s.failures > 0 ? `${formatCount(s.steps)} <span class="bad">(${formatCount(s.failures)} failed)</span>` : formatCount(s.steps))}
${cell("Tokens in / out", `${formatCount(s.inputTokens)} / ${formatCount(s.outputTokens)}`)}
${cell("Cost", esc(formatCost(s.cost)))}
${cell("Cache hits", formatCount(s.cacheHits))}
${cell("Ended because", s.status === "active" ? '<span class="muted">running</span>' : esc(s.endReason ?? "not recorded"), "")}
</tr>`;
}

function sessionTable(
  view: DashboardView,
  rows: readonly SessionSummary[],
  label: string,
  none: string,
): string {
  if (rows.length === 0) return `<div class="table"><p class="empty">${esc(none)}</p></div>`;
  return `<div class="table"><table class="rows sessions" aria-label="${esc(label)}">
<thead><tr><th>Session</th><th>Status</th><th>Started</th><th class="num">Duration</th><th class="num">Pages</th>
<th class="num">Steps</th><th class="num">Tokens in / out</th><th class="num">Cost</th><th class="num">Cache hits</th>
<th>Ended because</th></tr></thead>
<tbody>${rows.map((s) => sessionRow(view, s)).join("\n")}</tbody></table></div>`;
}

function dayTable(view: DashboardView): string {
  if (view.days.length === 0)
    return `<div class="table"><p class="empty">Nothing in the last ${view.dayCount} days.</p></div>`;
  const rows = [...view.days]
    .reverse()
    .map(
      (
        d,
      ) => `<tr><td data-label="Day">${esc(d.day)}</td><td class="num" data-label="Sessions">${formatCount(d.sessions)}</td>
<td class="num" data-label="Steps">${formatCount(d.steps)}</td>
<td class="num" data-label="Tokens in / out">${formatCount(d.inputTokens)} / ${formatCount(d.outputTokens)}</td>
<td class="num" data-label="Cost">${esc(formatCost(d.cost))}</td><td class="num" data-label="Cache hits">${formatCount(d.cacheHits)}</td></tr>`,
    )
    .join("\n");
  return `<div class="table"><table class="rows" aria-label="Totals per day">
<thead><tr><th>Day (UTC)</th><th class="num">Sessions</th><th class="num">Steps</th><th class="num">Tokens in / out</th>
<th class="num">Cost</th><th class="num">Cache hits</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

export function renderDashboard(view: DashboardView): string {
  const live = view.sessions.filter((s) => s.status === "active");
  const recent = view.sessions.filter((s) => s.status !== "active");
  const key = view.key;
  return page(
    "Deckhand dashboard",
    `<header><div class="bar">
<h1 class="brand">Deckhand dashboard <small>project ${esc(key.projectId)}</small></h1>
<form class="inline" method="post" action="/dashboard/sign-out">
<input type="hidden" name="_csrf" value="${esc(view.csrfToken)}"><button type="submit" class="quiet">Sign out</button>
</form></div></header>
<main>
<h2 id="key-heading">Signed in with</h2>
<dl class="facts card" aria-labelledby="key-heading">
<div><dt>Key</dt><dd>${esc(key.name ?? (key.operator ? "operator key" : "unnamed key"))}</dd></div>
<div><dt>Key id</dt><dd>${esc(key.id)}</dd></div>
<div><dt>Project</dt><dd>${esc(key.projectId)}</dd></div>
<div><dt>${key.operator ? "Source" : "Created"}</dt><dd>${key.operator ? "DECKHAND_API_KEYS" : key.createdAt !== undefined ? esc(formatTime(key.createdAt)) : "?"}</dd></div>
</dl>
<h2>Live sessions <span class="count">(${live.length})</span></h2>
${sessionTable(view, live, "Live sessions", "No session is running.")}
<h2>Recent sessions <span class="count">(${recent.length})</span></h2>
${sessionTable(view, recent, "Recent sessions", "No session has ended yet.")}
<h2>Totals per day <span class="count">(last ${view.dayCount} days)</span></h2>
${dayTable(view)}
</main>
<footer>Times are UTC. Each session opens its own page (steps, screenshots, live view). Reload for what changed.</footer>`,
  );
}

export function renderMessage(title: string, message: string, link: { href: string; text: string }): string {
  return page(
    `${title} · Deckhand dashboard`,
    `<header><div class="bar"><p class="brand">Deckhand dashboard</p></div></header>
<main class="narrow"><h1 class="brand">${esc(title)}</h1><p>${esc(message)}</p>
<p><a href="${esc(link.href)}">${esc(link.text)}</a></p></main>`,
  );
}
