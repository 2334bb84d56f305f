// HTTP to an address a caller chose, after the egress check (egress.ts) and to the very address
// that was checked. Used for a model `baseURL` (as the `fetch` of the model's provider) and for the
// `/json/version` of a `browser.cdpUrl`. Failures are uniform: they say that the endpoint could
// not be used, never what answered there (no status text, no banner, no body), so that the service
// is not a probe of the operator's network.

import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { checkEgress, type EgressPolicy, type EgressTarget, pinnedLookup } from "./egress.ts";

/** The failure every kind of trouble at a caller's endpoint turns into. */
export class EndpointUnusableError extends Error {
  constructor(what: string) {
    super(what);
    this.name = "EndpointUnusableError";
  }
}

interface PinnedRequest {
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  signal?: AbortSignal;
  timeoutMs: number;
}

function send(url: URL, target: EgressTarget, init: PinnedRequest): Promise<IncomingMessage> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method,
        headers: init.headers,
        lookup: pinnedLookup(target),
        // A connection of its own per request: a pooled one could be to an address checked earlier.
        agent: false,
        timeout: init.timeoutMs,
        ...(init.signal ? { signal: init.signal } : {}),
      },
      resolve,
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(init.body);
  });
}

/**
 * A `fetch` for a model provider whose `baseURL` a caller gave: every request is checked against
 * `policy` and sent to the checked address. An error answer keeps its status but not its body; a
 * success that is not JSON or an event stream is refused unread. `describe` names the endpoint.
 */
export function guardedFetch(
  policy: EgressPolicy,
  ownPort: () => number | undefined,
  describe: string,
): typeof fetch {
  const unusable = () =>
    new EndpointUnusableError(
      `the model endpoint ${describe} could not be used (it could not be reached, or did not answer as a model API)`,
    );
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw unusable();
    const check = await checkEgress(url, policy, ownPort());
    if (!check.ok) throw new EndpointUnusableError(`the model endpoint ${describe}: ${check.problem}`);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    let response: IncomingMessage;
    try {
      response = await send(url, check.target, {
        method: request.method,
        headers,
        ...(body ? { body } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        timeoutMs: 120_000,
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      // What fetch throws when it cannot connect: the provider retries it, as it would its own.
      throw new TypeError("fetch failed", { cause: unusable() });
    }
    const status = response.statusCode ?? 0;
    const type = String(response.headers["content-type"] ?? "");
    if (status < 200 || status >= 300) {
      // The status goes on (the provider retries 429 and 5xx as usual); what the endpoint wrote does not.
      response.destroy();
      return new Response(JSON.stringify({ error: { message: "The model endpoint refused the request." } }), {
        status,
        headers: { "content-type": "application/json" },
      });
    }
    if (!/application\/json|text\/event-stream/i.test(type)) {
      response.destroy();
      throw unusable();
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
      else if (value !== undefined) responseHeaders.set(name, value);
    }
    return new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, {
      status,
      headers: responseHeaders,
    });
  }) as typeof fetch;
}

/** GET a small JSON document from the checked address (a DevTools endpoint's /json/version). */
export async function pinnedGetJson(url: URL, target: EgressTarget, timeoutMs: number): Promise<unknown> {
  const response = await send(url, target, { method: "GET", headers: {}, timeoutMs });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) {
      response.destroy();
      throw new Error("too large");
    }
    chunks.push(chunk);
  }
  if ((response.statusCode ?? 0) !== 200) throw new Error("not 200");
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
