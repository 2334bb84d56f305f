// Versioned schema of both back ends. A migration is never edited once released: a change is a new
// entry with the next version. Both lists describe the same tables; types differ where the
// databases do (JSON is `json` in PostgreSQL, text in SQLite; times are integer milliseconds).

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "keys, sessions, replay, cache",
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL,
        project_id TEXT NOT NULL,
        name TEXT,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        params TEXT NOT NULL,
        client_language TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'ended')),
        created_at INTEGER NOT NULL,
        last_activity_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX sessions_by_status ON sessions (status, created_at);
      CREATE TABLE replay_actions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        method TEXT NOT NULL,
        parameters TEXT NOT NULL,
        result TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        page_url TEXT NOT NULL,
        input_tokens REAL,
        output_tokens REAL,
        time_ms REAL,
        cost REAL
      );
      CREATE INDEX replay_actions_by_session ON replay_actions (session_id, seq);
      CREATE TABLE cache_entries (
        project_id TEXT NOT NULL,
        cache_key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, cache_key)
      );
    `,
  },
  {
    version: 2,
    name: "node leases",
    sql: `
      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        started_at INTEGER NOT NULL,
        lease_expires_at INTEGER NOT NULL
      );
      ALTER TABLE sessions ADD COLUMN node_id TEXT;
      CREATE INDEX sessions_by_node ON sessions (node_id, status);
    `,
  },
  {
    version: 3,
    name: "screenshots, link signing secret",
    sql: `
      CREATE TABLE replay_screenshots (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        action_seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('before', 'after')),
        bytes INTEGER NOT NULL,
        file TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, action_seq, kind)
      );
      CREATE INDEX replay_screenshots_by_age ON replay_screenshots (created_at);
      CREATE TABLE service_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "why a session ended, a project's sessions",
    sql: `
      ALTER TABLE sessions ADD COLUMN end_reason TEXT;
      CREATE INDEX sessions_by_project ON sessions (project_id, created_at);
    `,
  },
  {
    version: 5,
    name: "cluster: node addresses, capacity, draining",
    sql: `
      ALTER TABLE nodes ADD COLUMN advertise_url TEXT;
      ALTER TABLE nodes ADD COLUMN max_sessions INTEGER;
      ALTER TABLE nodes ADD COLUMN draining INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: "cluster: what a node can start without launching a browser",
    sql: `
      ALTER TABLE nodes ADD COLUMN ready TEXT;
    `,
  },
];

export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "keys, sessions, replay, cache",
    sql: `
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        key_hash text NOT NULL,
        project_id text NOT NULL,
        name text,
        created_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        project_id text NOT NULL,
        key_id text NOT NULL,
        params json NOT NULL,
        client_language text,
        status text NOT NULL CHECK (status IN ('active', 'ended')),
        created_at bigint NOT NULL,
        last_activity_at bigint NOT NULL,
        ended_at bigint
      );
      CREATE INDEX sessions_by_status ON sessions (status, created_at);
      CREATE TABLE replay_actions (
        seq bigserial PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        method text NOT NULL,
        parameters json NOT NULL,
        result json NOT NULL,
        started_at bigint NOT NULL,
        ended_at bigint,
        page_url text NOT NULL,
        input_tokens double precision,
        output_tokens double precision,
        time_ms double precision,
        cost double precision
      );
      CREATE INDEX replay_actions_by_session ON replay_actions (session_id, seq);
      CREATE TABLE cache_entries (
        project_id text NOT NULL,
        cache_key text NOT NULL,
        value json NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (project_id, cache_key)
      );
    `,
  },
  {
    version: 2,
    name: "node leases",
    sql: `
      CREATE TABLE nodes (
        id text PRIMARY KEY,
        started_at bigint NOT NULL,
        lease_expires_at bigint NOT NULL
      );
      ALTER TABLE sessions ADD COLUMN node_id text;
      CREATE INDEX sessions_by_node ON sessions (node_id, status);
    `,
  },
  {
    version: 3,
    name: "screenshots, link signing secret",
    sql: `
      CREATE TABLE replay_screenshots (
        session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        action_seq bigint NOT NULL,
        kind text NOT NULL CHECK (kind IN ('before', 'after')),
        bytes integer NOT NULL,
        data bytea NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (session_id, action_seq, kind)
      );
      CREATE INDEX replay_screenshots_by_age ON replay_screenshots (created_at);
      CREATE TABLE service_secrets (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at bigint NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "why a session ended, a project's sessions",
    sql: `
      ALTER TABLE sessions ADD COLUMN end_reason text;
      CREATE INDEX sessions_by_project ON sessions (project_id, created_at);
    `,
  },
  {
    version: 5,
    name: "cluster: node addresses, capacity, draining",
    sql: `
      ALTER TABLE nodes ADD COLUMN advertise_url text;
      ALTER TABLE nodes ADD COLUMN max_sessions integer;
      ALTER TABLE nodes ADD COLUMN draining boolean NOT NULL DEFAULT false;
    `,
  },
  {
    version: 6,
    name: "cluster: what a node can start without launching a browser",
    sql: `
      ALTER TABLE nodes ADD COLUMN ready json;
    `,
  },
];

/** The migrations still to apply, after refusing a database written by a newer server. */
export function pendingMigrations(
  all: readonly Migration[],
  currentVersion: number,
  where: string,
): Migration[] {
  const latest = all.at(-1)?.version ?? 0;
  if (currentVersion > latest) {
    throw new Error(
      `The database at ${where} has schema version ${currentVersion}, newer than this server knows (${latest}). ` +
        "Upgrade @deckhand/server, or point it at another database.",
    );
  }
  return all.filter((migration) => migration.version > currentVersion);
}
