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
/** Most Chromium processes of the browser pool. */
export const DEFAULT_MAX_BROWSERS = 4;
/** Sessions (browser contexts) a pool browser takes before another browser is started. */
export const DEFAULT_SESSIONS_PER_BROWSER = 8;
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
