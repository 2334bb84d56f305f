// SessionNavigate: load a URL in the session's page and sum up the main document's response.

import { randomUUID } from "node:crypto";
import { ApiError } from "../errors.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionNavigateBody, SessionNavigateData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

// Pages a session may load. Not file: (the server's own files), nor the browser's internal pages.
const ALLOWED_PROTOCOLS = new Set(["http:", "https:", "about:", "data:"]);

function checkUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      `Invalid request: body field \`url\`: ${JSON.stringify(url)} is not an absolute URL (e.g. https://example.com/).`,
    );
  }
  if (!ALLOWED_PROTOCOLS.has(protocol)) {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      `Invalid request: body field \`url\`: ${protocol} URLs cannot be opened through the service; use http(s).`,
    );
  }
}

/** The library's own default for page.goto. */
const NAVIGATION_TIMEOUT_MS = 30_000;

type NavigationSummary = NonNullable<SessionNavigateData["result"]>;

export async function sessionNavigate(
  context: OperationContext<SessionNavigateBody>,
  live: LiveSession,
  deps: OperationDeps,
): Promise<SessionNavigateData> {
  const { url, options = {} } = context.body;
  checkUrl(url);
  const result = await runRecorded<NavigationSummary | null>(context, live, deps, {
    method: "navigate",
    secrets: [],
    recordAs: (summary) => summary ?? { response: null },
    // A client that goes away (or the session ending) stops the navigation: the page stops loading
    // where it is, and the session's next operation starts at once.
    run: async ({ page, signal }) => {
      const status = await page.goto(url, {
        signal,
        timeout: timeoutOf(options.timeout, NAVIGATION_TIMEOUT_MS, deps.operationTimeoutMs),
        ...(options.waitUntil ? { waitUntil: options.waitUntil } : {}),
        ...(options.referer ? { referer: options.referer } : {}),
      });
      if (status === null) return null;
      return { url: page.url(), status, ok: status >= 200 && status < 300 };
    },
  });
  return { result, actionId: randomUUID() };
}
