// Command-line parsing: `node:util` parseArgs, then checks that each value makes sense, with
// errors that say what is valid.

import { parseArgs } from "node:util";
import { parseAdvertiseUrl } from "../cluster/cluster.ts";
import { MIN_SECRET_LENGTH } from "../cluster/trust.ts";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_BROWSERS,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "../defaults.ts";
import type { LogFormat, LogLevel } from "../logger.ts";
import {
  ANYWHERE,
  type EgressPolicy,
  EgressSettingError,
  isLoopbackHost,
  NOWHERE,
  PUBLIC_ONLY,
  parseEgressPolicy,
} from "../policy/egress.ts";
import type { Isolation } from "../sessions/browser-pool.ts";

export interface StoreLocation {
  dataDir?: string;
  databaseUrl?: string;
  /** PostgreSQL: the schema the tables live in. */
  databaseSchema?: string;
}

export interface ServeOptions extends StoreLocation {
  host?: string;
  port?: number;
  maxSessions?: number;
  sessionIdleTimeoutMs?: number;
  sessionDisconnectGraceMs?: number;
  bodyLimit?: number;
  logLevel?: LogLevel;
  /** Unset: readable lines on a terminal, JSON lines otherwise. */
  logFormat?: LogFormat;
  maxBrowsers?: number;
  /** Browsers kept launched for the next project (0: none). */
  warmBrowsers?: number;
  sessionsPerBrowser?: number;
  browserArgs?: string[];
  isolation?: Isolation;
  maxSessionsPerProject?: number;
  maxTabsPerSession?: number;
  cdpMaxMessageBytes?: number;
  cdpBytesPerSecond?: number;
  cdpUrlHosts: EgressPolicy;
  modelBaseUrlHosts: EgressPolicy;
  shutdownGraceMs?: number;
  nodeLeaseMs?: number;
  /** Days the step screenshots are kept; 0: none are taken. */
  screenshotRetentionDays?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  connectionIdleTimeoutMs?: number;
  /** 0: no limit. */
  maxConnectionsPerAddress?: number;
  /** Serve GET /metrics on a port of its own. */
  metricsPort?: number;
  metricsHost?: string;
  /** GET /metrics on the service's port with this bearer token (DECKHAND_METRICS_TOKEN). */
  metricsToken?: string;
  readyMaxEventLoopLagMs?: number;
  /** Several nodes on one PostgreSQL: this node's address for the others, and their shared secret. */
  cluster?: { advertiseUrl: string; secret: string };
}

export type Command =
  | { kind: "help" }
  | ({ kind: "serve" } & ServeOptions)
  | ({ kind: "keys-create"; name?: string; projectId?: string; json: boolean } & StoreLocation)
  | ({ kind: "keys-list"; json: boolean } & StoreLocation)
  | ({ kind: "keys-revoke"; id: string } & StoreLocation);

export class UsageError extends Error {}

const OPTIONS = {
  host: { type: "string" },
  port: { type: "string" },
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
  "max-sessions": { type: "string" },
  "session-idle-timeout": { type: "string" },
  "session-disconnect-grace": { type: "string" },
  "body-limit": { type: "string" },
  "max-browsers": { type: "string" },
  "warm-browsers": { type: "string" },
  "sessions-per-browser": { type: "string" },
  "browser-arg": { type: "string", multiple: true },
  "cdp-url-hosts": { type: "string" },
  "model-base-url-hosts": { type: "string" },
  isolation: { type: "string" },
  "max-sessions-per-project": { type: "string" },
  "max-tabs-per-session": { type: "string" },
  "cdp-max-message-bytes": { type: "string" },
  "cdp-bytes-per-second": { type: "string" },
  "shutdown-grace": { type: "string" },
  "node-lease": { type: "string" },
  "screenshot-retention": { type: "string" },
  "log-format": { type: "string" },
  "database-schema": { type: "string" },
  "headers-timeout": { type: "string" },
  "request-timeout": { type: "string" },
  "connection-idle-timeout": { type: "string" },
  "max-connections-per-address": { type: "string" },
  "metrics-port": { type: "string" },
  "metrics-host": { type: "string" },
  "ready-max-event-loop-lag": { type: "string" },
  "advertise-url": { type: "string" },
  "cluster-secret": { type: "string" },
  name: { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const SERVE_ONLY = [
  "host",
  "port",
  "max-sessions",
  "session-idle-timeout",
  "session-disconnect-grace",
  "body-limit",
  "max-browsers",
  "warm-browsers",
  "sessions-per-browser",
  "browser-arg",
  "cdp-url-hosts",
  "model-base-url-hosts",
  "isolation",
  "max-sessions-per-project",
  "max-tabs-per-session",
  "cdp-max-message-bytes",
  "cdp-bytes-per-second",
  "shutdown-grace",
  "node-lease",
  "screenshot-retention",
  "headers-timeout",
  "request-timeout",
  "connection-idle-timeout",
  "max-connections-per-address",
  "metrics-port",
  "metrics-host",
  "ready-max-event-loop-lag",
  "advertise-url",
  "cluster-secret",
  "log-format",
] as const;
const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

const VALID = Object.keys(OPTIONS)
  .map((name) => `--${name}`)
  .join(", ");

function integer(
  flag: string,
  value: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new UsageError(
      `--${flag} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}.`,
    );
  }
  return n;
}

/** Longest duration a timer can hold (2^31-1 ms), in whole seconds: a longer one would fire at once. */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** Seconds, greater than 0 and within what a timer can hold. */
function seconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0 || n > MAX_TIMER_SECONDS) {
    throw new UsageError(
      `--${flag} must be a number greater than 0 and at most ${MAX_TIMER_SECONDS} (seconds); got ${JSON.stringify(value)}.`,
    );
  }
  return n;
}

function egress(flag: string, value: string | undefined, fallback: EgressPolicy): EgressPolicy {
  if (value === undefined) return fallback;
  try {
    return parseEgressPolicy(value, `--${flag}`);
  } catch (error) {
    if (error instanceof EgressSettingError) throw new UsageError(error.message);
    throw error;
  }
}

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const flag = /'([^']+)'/.exec((error as Error).message)?.[1] ?? "";
      throw new UsageError(`Unknown option ${flag}. Valid options: ${VALID}. See deckhand-server --help.`);
    }
    throw new UsageError(`${(error as Error).message} See deckhand-server --help.`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };

  const location: StoreLocation = {};
  if (values["data-dir"] !== undefined) location.dataDir = values["data-dir"];
  const databaseUrl = values["database-url"] ?? env.DATABASE_URL;
  if (databaseUrl) location.databaseUrl = databaseUrl;
  const databaseSchema = values["database-schema"] ?? env.DECKHAND_DATABASE_SCHEMA;
  if (databaseSchema) {
    if (!databaseUrl)
      throw new UsageError("--database-schema belongs to PostgreSQL: give --database-url too.");
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(databaseSchema)) {
      throw new UsageError(
        `--database-schema must be a PostgreSQL name of letters, digits and _; got ${JSON.stringify(databaseSchema)}.`,
      );
    }
    location.databaseSchema = databaseSchema;
  }

  const [command, subcommand, ...rest] = positionals;
  if (command === undefined) {
    // A service that listens beyond loopback may be reached by anyone: where a caller can make it
    // connect then defaults to nowhere (cdpUrl) and the public internet only (model baseURL).
    const local = isLoopbackHost(values.host ?? DEFAULT_HOST);
    const serve: ServeOptions = {
      ...location,
      cdpUrlHosts: egress(
        "cdp-url-hosts",
        values["cdp-url-hosts"] ?? env.DECKHAND_CDP_URL_HOSTS,
        local ? ANYWHERE : NOWHERE,
      ),
      modelBaseUrlHosts: egress(
        "model-base-url-hosts",
        values["model-base-url-hosts"] ?? env.DECKHAND_MODEL_BASE_URL_HOSTS,
        local ? ANYWHERE : PUBLIC_ONLY,
      ),
    };
    if (values.host !== undefined) serve.host = values.host;
    const port = integer("port", values.port, 0, 65535);
    if (port !== undefined) serve.port = port;
    const maxSessions = integer("max-sessions", values["max-sessions"], 1);
    if (maxSessions !== undefined) serve.maxSessions = maxSessions;
    const idle = seconds("session-idle-timeout", values["session-idle-timeout"]);
    if (idle !== undefined) serve.sessionIdleTimeoutMs = idle * 1000;
    const grace = seconds("session-disconnect-grace", values["session-disconnect-grace"]);
    if (grace !== undefined) serve.sessionDisconnectGraceMs = grace * 1000;
    const shutdownGrace = seconds("shutdown-grace", values["shutdown-grace"]);
    if (shutdownGrace !== undefined) serve.shutdownGraceMs = shutdownGrace * 1000;
    const lease = seconds("node-lease", values["node-lease"]);
    if (lease !== undefined) serve.nodeLeaseMs = lease * 1000;
    const retention = integer("screenshot-retention", values["screenshot-retention"], 0, 3650);
    if (retention !== undefined) serve.screenshotRetentionDays = retention;
    const bodyLimit = integer("body-limit", values["body-limit"], 1);
    if (bodyLimit !== undefined) serve.bodyLimit = bodyLimit;
    const maxBrowsers = integer("max-browsers", values["max-browsers"], 1);
    if (maxBrowsers !== undefined) serve.maxBrowsers = maxBrowsers;
    const warmBrowsers = integer("warm-browsers", values["warm-browsers"] ?? env.DECKHAND_WARM_BROWSERS, 0);
    if (warmBrowsers !== undefined) {
      // Warm browsers take places under --max-browsers: more than it could never all be warm.
      const most = maxBrowsers ?? DEFAULT_MAX_BROWSERS;
      if (warmBrowsers > most) {
        throw new UsageError(
          `--warm-browsers (${warmBrowsers}) must be at most --max-browsers (${most}${maxBrowsers === undefined ? ", its default" : ""}): ` +
            "warm browsers count among the browsers of the pool. Lower it, or raise --max-browsers.",
        );
      }
      serve.warmBrowsers = warmBrowsers;
    }
    const perBrowser = integer("sessions-per-browser", values["sessions-per-browser"], 1);
    if (perBrowser !== undefined) serve.sessionsPerBrowser = perBrowser;
    if (values["browser-arg"]?.length) serve.browserArgs = values["browser-arg"];
    const isolation = values.isolation ?? env.DECKHAND_ISOLATION;
    if (isolation !== undefined) {
      if (isolation !== "project" && isolation !== "session") {
        throw new UsageError(
          `--isolation must be project (sessions of one project may share a browser) or session (every ` +
            `session has its own); got ${JSON.stringify(isolation)}.`,
        );
      }
      serve.isolation = isolation;
    }
    const perProject = integer("max-sessions-per-project", values["max-sessions-per-project"], 1);
    if (perProject !== undefined) serve.maxSessionsPerProject = perProject;
    const tabs = integer("max-tabs-per-session", values["max-tabs-per-session"], 1);
    if (tabs !== undefined) serve.maxTabsPerSession = tabs;
    const cdpMessage = integer("cdp-max-message-bytes", values["cdp-max-message-bytes"], 1024);
    if (cdpMessage !== undefined) serve.cdpMaxMessageBytes = cdpMessage;
    const cdpRate = integer(
      "cdp-bytes-per-second",
      values["cdp-bytes-per-second"] ?? env.DECKHAND_CDP_BYTES_PER_SECOND,
      1024,
    );
    if (cdpRate !== undefined) serve.cdpBytesPerSecond = cdpRate;
    const headersTimeout = seconds("headers-timeout", values["headers-timeout"]);
    if (headersTimeout !== undefined) serve.headersTimeoutMs = Math.round(headersTimeout * 1000);
    const requestTimeout = seconds("request-timeout", values["request-timeout"]);
    if (requestTimeout !== undefined) serve.requestTimeoutMs = Math.round(requestTimeout * 1000);
    const headersMs = serve.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
    const requestMs = serve.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (requestMs < headersMs) {
      throw new UsageError(
        `--request-timeout (${requestMs / 1000} s, the whole request) must be at least --headers-timeout ` +
          `(${headersMs / 1000} s): the whole request cannot arrive before its headers.`,
      );
    }
    const idleTimeout = seconds("connection-idle-timeout", values["connection-idle-timeout"]);
    if (idleTimeout !== undefined) serve.connectionIdleTimeoutMs = Math.round(idleTimeout * 1000);
    const perAddress = integer("max-connections-per-address", values["max-connections-per-address"], 0);
    if (perAddress !== undefined) serve.maxConnectionsPerAddress = perAddress;
    const lag = seconds("ready-max-event-loop-lag", values["ready-max-event-loop-lag"]);
    if (lag !== undefined) serve.readyMaxEventLoopLagMs = Math.round(lag * 1000);
    const metricsPort = integer("metrics-port", values["metrics-port"], 0, 65535);
    if (metricsPort !== undefined) serve.metricsPort = metricsPort;
    if (values["metrics-host"] !== undefined) {
      if (metricsPort === undefined) throw new UsageError("--metrics-host goes with --metrics-port.");
      serve.metricsHost = values["metrics-host"];
    }
    const metricsToken = env.DECKHAND_METRICS_TOKEN;
    if (metricsToken !== undefined && metricsToken !== "") {
      if (metricsToken.length < 16 || /\s/.test(metricsToken)) {
        throw new UsageError(
          "DECKHAND_METRICS_TOKEN must be at least 16 characters without spaces (a random secret, e.g. " +
            "`openssl rand -hex 32`).",
        );
      }
      serve.metricsToken = metricsToken;
    }
    const advertiseUrl = values["advertise-url"] ?? env.DECKHAND_ADVERTISE_URL;
    const clusterSecret = values["cluster-secret"] ?? env.DECKHAND_CLUSTER_SECRET;
    if (advertiseUrl || clusterSecret) {
      if (!databaseUrl) {
        throw new UsageError(
          "--advertise-url and --cluster-secret join several nodes on one PostgreSQL: give --database-url too " +
            "(SQLite serves one node).",
        );
      }
      if (!clusterSecret) {
        throw new UsageError(
          "--advertise-url needs the cluster secret (DECKHAND_CLUSTER_SECRET, or --cluster-secret): without it a " +
            "node neither forwards requests nor accepts forwarded ones.",
        );
      }
      if (!advertiseUrl) {
        throw new UsageError(
          "The cluster secret needs --advertise-url: the address the other nodes reach this one at (e.g. " +
            "http://10.0.0.5:3000).",
        );
      }
      if (clusterSecret.length < MIN_SECRET_LENGTH || /\s/.test(clusterSecret)) {
        throw new UsageError(
          `The cluster secret must be at least ${MIN_SECRET_LENGTH} characters without spaces, the same on every ` +
            "node (e.g. `openssl rand -hex 32`). Prefer DECKHAND_CLUSTER_SECRET to the flag: a flag shows in `ps`.",
        );
      }
      try {
        serve.cluster = { advertiseUrl: parseAdvertiseUrl(advertiseUrl), secret: clusterSecret };
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    }
    const logLevel = env.DECKHAND_LOG_LEVEL;
    if (logLevel) {
      if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
        throw new UsageError(
          `DECKHAND_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}; got ${JSON.stringify(logLevel)}.`,
        );
      }
      serve.logLevel = logLevel as LogLevel;
    }
    const logFormat = values["log-format"] ?? env.DECKHAND_LOG_FORMAT;
    if (logFormat !== undefined) {
      if (logFormat !== "json" && logFormat !== "pretty") {
        throw new UsageError(
          `--log-format must be json (JSON lines, for a log collector) or pretty (readable lines); got ` +
            `${JSON.stringify(logFormat)}.`,
        );
      }
      serve.logFormat = logFormat;
    }
    for (const flag of ["name", "project", "json"] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} belongs to the keys commands.`);
    }
    return { kind: "serve", ...serve };
  }

  if (command !== "keys") {
    throw new UsageError(
      `Unknown command ${JSON.stringify(command)}. Commands: keys create, keys list, keys revoke <id>.`,
    );
  }
  for (const flag of SERVE_ONLY) {
    if (values[flag] !== undefined)
      throw new UsageError(`--${flag} is an option of the server, not of keys commands.`);
  }
  const json = values.json ?? false;
  if (subcommand === "create" && rest.length === 0) {
    return {
      kind: "keys-create",
      json,
      ...location,
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.project !== undefined ? { projectId: values.project } : {}),
    };
  }
  if (values.name !== undefined || values.project !== undefined) {
    throw new UsageError("--name and --project belong to keys create.");
  }
  if (subcommand === "list" && rest.length === 0) return { kind: "keys-list", json, ...location };
  if (subcommand === "revoke" && rest.length === 1) return { kind: "keys-revoke", id: rest[0]!, ...location };
  if (subcommand === "revoke")
    throw new UsageError("keys revoke takes one key id: deckhand-server keys revoke <id>.");
  throw new UsageError("Use keys create [--name N], keys list, or keys revoke <id>.");
}
