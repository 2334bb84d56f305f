// SessionNavigate: load a URL in the session's page and sum up the main document's response.

import { randomUUID } from "node:crypto";
import { ApiError } from "../errors.ts";
import { checkPageUrl } from "../policy/page-url.ts";
import type { OperationContext } from "../routes/handlers.ts";
import type { SessionNavigateBody, SessionNavigateData } from "../schemas/session-operations.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import { timeoutOf } from "./call-options.ts";
import { type OperationDeps, runRecorded } from "./recorded-operation.ts";

function checkUrl(url: string): string {
  const check = checkPageUrl(url);
  if (!check.ok)
    throw new ApiError(400, "INVALID_REQUEST", `Invalid request: body field \`url\`: ${check.problem}.`);
  return check.href;
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
  const href = checkUrl(url);
  const result = await runRecorded<NavigationSummary | null>(context, live, deps, {
    method: "navigate",
    secrets: [],
    recordAs: (summary) => summary ?? { response: null },
    // A client that goes away (or the session ending) stops the navigation: the page stops loading
    // where it is, and the session's next operation starts at once.
    run: async ({ page, signal }) => {
      const status = await page.goto(href, {
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
