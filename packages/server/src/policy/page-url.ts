// Which URLs a session's pages may be sent to, by any way in: the HTTP navigate endpoint, and every
// CDP command that carries a URL (Page.navigate, Target.createTarget, request interception that
// rewrites a URL, Network.loadNetworkResource, ...). The rule is the library's (deckhand's
// page-url.ts, shared with its MCP server): http, https, about:blank and data: only; file: (the
// server's own files), the browser's own pages and every other scheme are refused.

export { checkPageUrl, type PageUrlCheck } from "deckhand";
