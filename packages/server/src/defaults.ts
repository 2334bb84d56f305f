// Default settings of the service, in one light module (the CLI's --help reads them without
// loading the server).

/** Largest accepted request body, in bytes. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Most active sessions at once. */
export const DEFAULT_MAX_SESSIONS = 10;
/** Milliseconds without a request after which a session may be ended. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 10 * 60 * 1000;
/**
 * Milliseconds a session started without keepAlive lives on after its last CDP client went away
 * (and no request came): a client that crashed does not hold a browser context for the idle timeout.
 */
export const DEFAULT_SESSION_DISCONNECT_GRACE_MS = 30_000;
/** Milliseconds that requests in flight get to finish when the server closes. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3000;
/**
 * Most Chromium processes of the browser pool. As many as sessions: with sessions of different
 * projects in different browsers, every session may need one.
 */
export const DEFAULT_MAX_BROWSERS = 10;
/**
 * Browsers the pool keeps launched for the next tenant that needs one: a project's first session
 * then takes a running browser instead of waiting for Chromium to start. One idle Chromium costs
 * some 100 MB; a burst of new projects beyond it launches the rest on demand.
 */
export const DEFAULT_WARM_BROWSERS = 1;
/** Sessions (browser contexts) a pool browser takes before another browser is started for its project. */
export const DEFAULT_SESSIONS_PER_BROWSER = 8;
/** Who may share a pool browser: sessions of one project ("project"), or no one ("session"). */
export const DEFAULT_ISOLATION = "project" as const;
/** Most sessions one project may have at once: half of --max-sessions (rounded up) unless set. */
export function defaultMaxSessionsPerProject(maxSessions: number): number {
  return Math.max(1, Math.ceil(maxSessions / 2));
}
/** Most tabs one session may have open at once. */
export const DEFAULT_MAX_TABS_PER_SESSION = 20;
/**
 * Largest CDP message a proxy client may send, in bytes (commands are small; a fulfilled request
 * body or a large script are the big ones). Answers to the client are not limited by it.
 */
export const DEFAULT_CDP_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/**
 * Bytes per second the CDP clients of one session may send together (a burst of one second's
 * worth, or of one largest message, passes at once). Past it the proxy stops reading the client's
 * socket for as long as the excess takes at this rate: the client is slowed, not cut off.
 */
export const DEFAULT_CDP_BYTES_PER_SECOND = 16 * 1024 * 1024;
/** Milliseconds a pool browser without sessions is kept before it is closed. */
export const DEFAULT_BROWSER_LINGER_MS = 10_000;
/** Milliseconds an operation may take when neither the call nor the session gives a timeout. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 180_000;
/**
 * Milliseconds a service node's lease on its sessions lasts unless renewed (every third of it). A
 * node gone for longer (killed, cut off from the database) has its sessions ended by the others,
 * within this plus one renewal period.
 */
export const DEFAULT_NODE_LEASE_MS = 15_000;
/**
 * Milliseconds for a request's headers to arrive, from the connection's start (or the previous
 * response on a kept-alive connection). A client slower than that is answered 408 and closed.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/**
 * Milliseconds for a whole request, headers and body, to arrive (the body is at most --body-limit,
 * 1 MiB by default: 30 s asks for some 35 KB/s). Responses, streams included, are not bound by it.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Milliseconds a kept-alive connection may wait for its next request. Longer than the 60 s idle
 * timeout of the usual load balancers (nginx upstream keepalive, cloud load balancers), so that the
 * service never closes a connection the balancer is about to reuse.
 */
export const DEFAULT_CONNECTION_IDLE_TIMEOUT_MS = 72_000;
/**
 * Most connections open at once from one address (one IPv6 /64), WebSockets included. A REMOTE
 * client holds one CDP socket per session and a few HTTP connections; behind a load balancer or a
 * NAT every client has its address, so raise it there (or 0: no limit, and let the balancer limit).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
/** Milliseconds of event-loop lag above which /readyz answers 503 (the service is stalled). */
export const DEFAULT_READY_MAX_EVENT_LOOP_LAG_MS = 1_000;
