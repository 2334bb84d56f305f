// The text of `deckhand-server --help`: every flag and environment variable.

import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_CDP_BYTES_PER_SECOND,
  DEFAULT_CDP_MAX_MESSAGE_BYTES,
  DEFAULT_CONNECTION_IDLE_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_BROWSERS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_TABS_PER_SESSION,
  DEFAULT_NODE_LEASE_MS,
  DEFAULT_PORT,
  DEFAULT_READY_MAX_EVENT_LOOP_LAG_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SESSION_DISCONNECT_GRACE_MS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_SESSIONS_PER_BROWSER,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_WARM_BROWSERS,
} from "../defaults.ts";
import { DEFAULT_DATA_DIR } from "../store/open-store.ts";

export const HELP = `deckhand-server: the Deckhand service (browser sessions with AI operations over HTTP)

Usage:
  deckhand-server [options]                 start the service
  deckhand-server keys create [--name N] [--project ID] [--json]
                                            create an API key and print it (shown only this once)
  deckhand-server keys list [--json]        list API keys (never the keys themselves)
  deckhand-server keys revoke <id>          revoke an API key; it stops working at once
  deckhand-server --help                    show this text

Options:
  --host HOST                   address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)
  --port PORT                   TCP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --data-dir DIR                directory of the embedded SQLite database (default ./${DEFAULT_DATA_DIR})
  --database-url URL            use PostgreSQL at URL instead of SQLite (also DATABASE_URL)
  --database-schema NAME        PostgreSQL: keep the tables in this schema, created if missing (also
                                DECKHAND_DATABASE_SCHEMA; default: the connection's search path)
  --max-sessions N              most active browser sessions; more answer 429 (default ${DEFAULT_MAX_SESSIONS})
  --max-sessions-per-project N  most active sessions of one project (one API key's); more answer 429
                                PROJECT_AT_CAPACITY (default: half of --max-sessions, rounded up)
  --max-tabs-per-session N      most tabs a session may have open at once; CDP Target.createTarget beyond it is
                                refused, and a tab the page opens beyond it is closed
                                (default ${DEFAULT_MAX_TABS_PER_SESSION})
  --session-idle-timeout SECS   end a session after this many seconds without a request
                                (default ${DEFAULT_SESSION_IDLE_TIMEOUT_MS / 1000})
  --session-disconnect-grace SECS
                                end a session started without keepAlive this many seconds after its last
                                CDP client disconnected, unless a request comes; the debugger (debugUrl)
                                does not count (default ${DEFAULT_SESSION_DISCONNECT_GRACE_MS / 1000})
  --screenshot-retention DAYS   keep the screenshot of every step (the session page at sessionUrl) this many
                                days; 0 takes none (default 7)
  --body-limit BYTES            largest request body; larger answer 413 (default ${DEFAULT_BODY_LIMIT})
  --isolation MODE              who may share a Chromium process: project (sessions of one project, each in
                                its own browser context; the default) or session (every session has its own
                                browser). Sessions of different projects never share one (also
                                DECKHAND_ISOLATION)
  --max-browsers N              most Chromium processes at once (default ${DEFAULT_MAX_BROWSERS}); a new project's
                                session is refused with 429 when all are taken by others
  --warm-browsers N             browsers kept launched, unused, for the next project that needs one: its first
                                session starts without waiting for Chromium. Each is given to one project
                                only and replaced in the background; they count under --max-browsers
                                (default ${DEFAULT_WARM_BROWSERS}; 0: launch every browser on demand; also
                                DECKHAND_WARM_BROWSERS)
  --sessions-per-browser N      sessions (isolated browser contexts) a browser takes before another starts
                                for the same project (default ${DEFAULT_SESSIONS_PER_BROWSER})
  --browser-arg ARG             an extra Chromium argument for the pool's browsers (repeatable), e.g.
                                --browser-arg=--disable-background-networking
  --cdp-max-message-bytes BYTES largest CDP message a client of the CDP proxy may send; a larger one closes
                                its connection before it is read (default ${DEFAULT_CDP_MAX_MESSAGE_BYTES})
  --cdp-bytes-per-second BYTES  what the CDP proxy clients of one session may send per second, together; past
                                it the proxy stops reading them until the excess is paid at that rate (they
                                are slowed, not cut off; a burst of one second's worth or of one largest
                                message passes at once) (default ${DEFAULT_CDP_BYTES_PER_SECOND}; also
                                DECKHAND_CDP_BYTES_PER_SECOND)
  --cdp-url-hosts LIST          where a session's browser.cdpUrl may attach: * (anywhere), none, or a
                                comma-separated list of host names, addresses, CIDR ranges and "public"
                                (public internet addresses). Every address a name resolves to must be allowed,
                                and the service connects to the address it checked. Default: * when --host is
                                loopback, none otherwise (also DECKHAND_CDP_URL_HOSTS)
  --model-base-url-hosts LIST   where a call's options.model.baseURL may send model requests, in the same form.
                                Default: * when --host is loopback, public otherwise (also
                                DECKHAND_MODEL_BASE_URL_HOSTS)
  --shutdown-grace SECS         on SIGTERM/SIGINT, how long operations in flight may finish; those still
                                running are then answered 503 SHUTTING_DOWN (a stream: its final error
                                event) and the service exits (default ${DEFAULT_SHUTDOWN_GRACE_MS / 1000})
  --node-lease SECS             how long this node's lease on its sessions lasts unless renewed (every
                                third of it). Nodes sharing a PostgreSQL database end the sessions of a node
                                whose lease lapsed (killed, cut off) within this plus a third
                                (default ${DEFAULT_NODE_LEASE_MS / 1000})
  --headers-timeout SECS        a request's headers must arrive within this, or it is answered 408 and its
                                connection closed (default ${DEFAULT_HEADERS_TIMEOUT_MS / 1000})
  --request-timeout SECS        a whole request, headers and body, must arrive within this, or 408 and closed.
                                Responses (event streams too) are not bound by it
                                (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000})
  --connection-idle-timeout SECS
                                close a kept-alive connection after this long without a request
                                (default ${DEFAULT_CONNECTION_IDLE_TIMEOUT_MS / 1000})
  --max-connections-per-address N
                                most connections open at once from one address (an IPv6 /64), WebSockets
                                included; one more is answered 429 TOO_MANY_CONNECTIONS and closed. Behind a
                                load balancer, raise it or set 0 (no limit)
                                (default ${DEFAULT_MAX_CONNECTIONS_PER_ADDRESS})
  --metrics-port PORT           serve Prometheus metrics at GET /metrics on this port (default: not served)
  --metrics-host HOST           address of --metrics-port (default ${DEFAULT_HOST})
  --ready-max-event-loop-lag SECS
                                /readyz answers 503 while the event loop stalled longer than this in the last
                                10 s (default ${DEFAULT_READY_MAX_EVENT_LOOP_LAG_MS / 1000})
  --advertise-url URL           several nodes on one PostgreSQL: where the other nodes reach this one
                                (http://host:port), checked at start. With the cluster secret, any node
                                serves any session (forwarding to its owner) and new sessions go to the node
                                with the most room; --max-sessions is then this node's own (also
                                DECKHAND_ADVERTISE_URL)
  --cluster-secret SECRET       the secret every node of the cluster shares (32+ characters) and signs
                                forwarded requests with; prefer DECKHAND_CLUSTER_SECRET (a flag shows in ps)
  --log-format FORMAT           json (JSON lines) or pretty (one readable line per request and event, with
                                the same redaction). Default: pretty when stdout is a terminal, json otherwise
                                (also DECKHAND_LOG_FORMAT)
  --name NAME                   keys create: a label for the key
  --project ID                  keys create: the project the key belongs to (default: a new project)
  --json                        keys create / keys list: print JSON
  -h, --help                    show this text

Environment:
  DATABASE_URL          PostgreSQL connection URL, as --database-url (the flag wins)
  DECKHAND_API_KEYS     comma-separated API keys accepted besides the stored ones; with none set and no
                        key stored, the first start creates a key and prints it once
  DECKHAND_CDP_URL_HOSTS  as --cdp-url-hosts (the flag wins)
  DECKHAND_CDP_BYTES_PER_SECOND  as --cdp-bytes-per-second (the flag wins)
  DECKHAND_DATABASE_SCHEMA  as --database-schema (the flag wins)
  DECKHAND_MODEL_BASE_URL_HOSTS  as --model-base-url-hosts (the flag wins)
  DECKHAND_ISOLATION    as --isolation (the flag wins)
  DECKHAND_WARM_BROWSERS  as --warm-browsers (the flag wins)
  DECKHAND_LOG_LEVEL    fatal, error, warn, info (default), debug, trace or silent
  DECKHAND_METRICS_TOKEN  serve GET /metrics on the service's port to requests with
                        Authorization: Bearer <token> (at least 16 characters); API keys never open it
  DECKHAND_LOG_FORMAT   as --log-format (the flag wins)
  DECKHAND_ADVERTISE_URL  as --advertise-url (the flag wins)
  DECKHAND_CLUSTER_SECRET  as --cluster-secret (the flag wins)
  CHROME_PATH           the Chrome or Chromium executable (default: the usual install locations)

The service logs to stdout: one line per request (the session page's thumbnails and DevTools files at
debug), readable on a terminal, JSON lines otherwise. API keys are stored as SHA-256 hashes; model keys
(x-model-api-key) and variable values are never stored or logged.
The API is described at GET /v1/openapi.json (no key needed).
`;
