// GET /: what a person who opens the service's address in a browser sees: what the service is, its
// version and health, and where to go next (the API reference, the OpenAPI document, a quick
// start). A client that asks for JSON (accept: application/json) gets the same facts as JSON.
// /docs: the API reference, the OpenAPI document rendered by Swagger UI (@fastify/swagger-ui),
// whose files the service serves itself: nothing is fetched from a CDN.
//
// The page runs no script and its style is allowed by its hash, as the session page's; Swagger UI
// needs its own script, so /docs has a policy of its own that allows only this service's files.

import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import fastifySwaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Store } from "./store/store.ts";

/** The service's version, from its package.json (one level above src/ and dist/ alike). */
export const SERVICE_VERSION: string = (
  createRequire(import.meta.url)("../package.json") as { version: string }
).version;

/** Where the API reference is served. */
export const DOCS_PATH = "/docs";

/** How long the front page waits for the database before it says it does not answer. */
const STORE_CHECK_MS = 1_000;

const STYLE = `
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee8;--card:#f6f8fb;--accent:#1f5fbf;--ok:#1d7a3e;--bad:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#a3acbd;--line:#343b4a;--card:#1b2030;--accent:#8ab4ff;--ok:#7bd88f;--bad:#ff8a80}body{background:#12151f}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg)}
main{max-width:760px;margin:0 auto;padding:32px 20px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px}
p{margin:8px 0}
.facts{display:flex;flex-wrap:wrap;gap:8px 20px;margin:14px 0;padding:12px 14px;background:var(--card);border:1px solid var(--line);border-radius:8px}
.facts div{min-width:140px}
.facts dt{font-size:12px;color:var(--muted)}
.facts dd{margin:0;font-weight:600}
.ok{color:var(--ok)}
.bad{color:var(--bad)}
ul.links{padding-left:20px}
ul.links li{margin:4px 0}
a{color:var(--accent)}
a:focus-visible{outline:3px solid var(--accent);outline-offset:2px;border-radius:2px}
pre{margin:8px 0;padding:10px 12px;background:var(--card);border:1px solid var(--line);border-radius:6px;overflow:auto;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
footer{margin-top:32px;font-size:13px;color:var(--muted)}
`;

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

/** The front page's policy: no script at all, its own style, nothing from elsewhere. */
export const FRONT_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${STYLE_HASH}`,
  "img-src 'self'",
  "script-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The API reference's policy: Swagger UI's own files from this service, and the document it reads. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes on the elements it renders.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface FrontFacts {
  service: string;
  version: string;
  apiVersion: string;
  health: "ok" | "database unavailable";
  links: { apiReference: string; openapi: string; dashboard: string; healthz: string; readyz: string };
}

async function storeAnswers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), STORE_CHECK_MS);
  });
  try {
    return await Promise.race([store.countActiveSessions().then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Whether the client asked for JSON rather than HTML (its accept header names JSON before HTML). */
function wantsJson(request: FastifyRequest): boolean {
  const accept = (request.headers.accept ?? "").toLowerCase();
  const json = accept.indexOf("application/json");
  if (json === -1) return false;
  const html = accept.indexOf("text/html");
  return html === -1 || json < html;
}

function renderFrontPage(facts: FrontFacts, origin: string): string {
  const health =
    facts.health === "ok"
      ? '<span class="ok">ok</span>'
      : '<span class="bad">the database does not answer</span>';
  const curl = [
    `curl -s ${origin}/v1/sessions/start \\`,
    "  -H 'x-platform-api-key: <your key>' -H 'content-type: application/json' -d '{}'",
  ].join("\n");
  const client = [
    'import { Deckhand } from "deckhand";',
    `const dh = new Deckhand({ env: "REMOTE", apiUrl: "${origin}", apiKey: process.env.PLATFORM_API_KEY });`,
    "await dh.init();",
    'await dh.page.goto("https://example.com");',
    'console.log(await dh.act("click the More information link"));',
    "await dh.close();",
  ].join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Deckhand service</title><style>${STYLE}</style></head>
<body><main>
<h1>Deckhand service</h1>
<p>Drives real Chromium browsers with AI for your programs: start a session, then <code>act</code>,
<code>extract</code> and <code>observe</code> on its page in plain words, or let an agent work through a task.
Every session is recorded and has a page of its own to see what happened.</p>
<dl class="facts" aria-label="Service status">
<div><dt>Version</dt><dd>${escapeHtml(facts.version)}</dd></div>
<div><dt>API version</dt><dd>${escapeHtml(facts.apiVersion)} (alpha)</dd></div>
<div><dt>Health</dt><dd>${health}</dd></div>
</dl>
<h2>Where to go</h2>
<ul class="links">
<li><a href="${DOCS_PATH}">API reference</a>: every endpoint, request and answer, to try in the browser.</li>
<li><a href="/v1/openapi.json">OpenAPI document</a> (JSON) for generating clients.</li>
<li><a href="/dashboard">Project dashboard</a>: sign in with your API key to see your sessions, live and recent, and what they cost.</li>
<li><a href="/healthz">/healthz</a> and <a href="/readyz">/readyz</a> for monitoring.</li>
</ul>
<h2 id="quick-start">Quick start</h2>
<p>Every request but these pages carries an API key in the <code>x-platform-api-key</code> header. The operator
creates one with <code>deckhand-server keys create</code> (the first start prints one).</p>
<pre>${escapeHtml(curl)}</pre>
<p>From a program, with the <code>deckhand</code> package:</p>
<pre>${escapeHtml(client)}</pre>
<p>The start answer's <code>sessionUrl</code> opens the session's own page. A model key, when an instruction
needs a model, goes in the <code>x-model-api-key</code> header of each request; it is never stored.</p>
<footer>Deckhand ${escapeHtml(facts.version)}. The README's "Quick start" and "The Deckhand service" sections
say more.</footer>
</main></body></html>
`;
}

function originOf(request: FastifyRequest): string {
  const host = request.headers.host ?? "127.0.0.1";
  return `${request.protocol}://${host}`;
}

function secure(reply: FastifyReply, csp: string): void {
  reply.header("cache-control", "no-store");
  reply.header("referrer-policy", "no-referrer");
  reply.header("x-content-type-options", "nosniff");
  reply.header("content-security-policy", csp);
}

/** The front page at / and the API reference at /docs. Needs the OpenAPI plugin registered first. */
export async function registerFrontPage(
  app: FastifyInstance,
  options: { store: Store; apiVersion: string },
): Promise<void> {
  app.route({
    method: "GET",
    url: "/",
    schema: { hide: true },
    handler: async (request, reply) => {
      const facts: FrontFacts = {
        service: "deckhand",
        version: SERVICE_VERSION,
        apiVersion: options.apiVersion,
        health: (await storeAnswers(options.store)) ? "ok" : "database unavailable",
        links: {
          apiReference: DOCS_PATH,
          openapi: "/v1/openapi.json",
          dashboard: "/dashboard",
          healthz: "/healthz",
          readyz: "/readyz",
        },
      };
      if (wantsJson(request)) {
        reply.header("cache-control", "no-store");
        return facts;
      }
      secure(reply, FRONT_PAGE_CSP);
      reply.type("text/html; charset=utf-8");
      return renderFrontPage(facts, originOf(request));
    },
  });

  // Browsers ask for it on every page; a 404 would be an error in every console.
  app.route({
    method: "GET",
    url: "/favicon.ico",
    schema: { hide: true },
    handler: async (_request, reply) => reply.header("cache-control", "max-age=86400").status(204).send(),
  });

  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { deepLinking: true, docExpansion: "list", defaultModelsExpandDepth: 0 },
    // The policy is set below for every answer under /docs; the plugin's own would add hashes.
    staticCSP: false,
    uiHooks: {
      onRequest: (_request, reply, done) => {
        secure(reply, DOCS_CSP);
        done();
      },
    },
  });
}
