// The store for several service nodes sharing one database: PostgreSQL through `pg`. Same tables
// as SQLite; JSON columns are `json` (not `jsonb`) so that stored objects keep their key order.

import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { generateKey, generateProjectId, keyIdOf, keyMatchesHash } from "./api-keys.ts";
import { pendingMigrations, postgresMigrations } from "./migrations.ts";
import { groupIntoPages } from "./replay.ts";
import {
  actionFromRow,
  actionRowValues,
  clusterNodeFromRow,
  keyFromRow,
  mergeDailyTotals,
  PROJECT_SESSIONS,
  readinessText,
  recordedAction,
  sessionFromRow,
  summaryFromRow,
  toJsonText,
} from "./rows.ts";
import type {
  AdmissionRefusal,
  ClusterNode,
  CreatedKey,
  DailyTotals,
  KeyIdentity,
  KeyInfo,
  NewReplayAction,
  NewSession,
  NodeInfo,
  NodeReadiness,
  RecordedAction,
  ReplayResult,
  ScreenshotInfo,
  ScreenshotKind,
  SessionRecord,
  SessionSummary,
  Store,
} from "./store.ts";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** A schema to keep the tables in (created if missing); default: the connection's search path. */
  schema?: string;
  /** Most connections this node opens. Default 10. */
  maxConnections?: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Now, in epoch milliseconds, by the database's clock: the one clock every node's lease is read by. */
const DB_NOW = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint";

/**
 * Taken (for the transaction) by every reclaim of lapsed nodes and every node taking its lapsed
 * lease again, so that the two never interleave: a node that resumes sees exactly which of its
 * sessions a reclaim ended, and none is ended after it looked.
 */
/** Longest a lease statement (connecting included) may take on the lease's own connection. */
const LEASE_STATEMENT_TIMEOUT_MS = 10_000;

const LEASE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('deckhand-leases:' || current_schema()))";

/** The URL without its password, for messages and logs. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable database URL)";
  }
}

export class PostgresStore implements Store {
  readonly description: string;
  private readonly pool: pg.Pool;
  /**
   * One connection of its own for the node's lease (take, renew, resume): a renewal never waits
   * for a connection behind the requests' queries, however many of them the pool is running.
   */
  private readonly leasePool: pg.Pool;
  private closed = false;

  private constructor(pool: pg.Pool, leasePool: pg.Pool, description: string) {
    this.pool = pool;
    this.leasePool = leasePool;
    this.description = description;
  }

  /** Connects, creates the schema if asked for one, and brings the tables up to date. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    if (options.schema !== undefined && !IDENTIFIER.test(options.schema)) {
      throw new Error(
        `Invalid PostgreSQL schema name ${JSON.stringify(options.schema)}: use letters, digits and _.`,
      );
    }
    const connect = (max: number, statementTimeoutMs?: number) => {
      const settings = [
        // Every connection of the pool works in the chosen schema.
        ...(options.schema ? [`-c search_path=${options.schema}`] : []),
        ...(statementTimeoutMs ? [`-c statement_timeout=${statementTimeoutMs}`] : []),
      ];
      const pool = new pg.Pool({
        connectionString: options.url,
        max,
        ...(settings.length > 0 ? { options: settings.join(" ") } : {}),
        ...(statementTimeoutMs ? { connectionTimeoutMillis: statementTimeoutMs } : {}),
      });
      // An idle connection that the server drops must not crash the process; the pool replaces it.
      pool.on("error", () => {});
      return pool;
    };
    const pool = connect(options.maxConnections ?? 10);
    // A lease statement that hangs (a database that stopped answering) fails after 10 s rather than
    // holding every later renewal up: the next one then finds out where the lease stands.
    const leasePool = connect(1, LEASE_STATEMENT_TIMEOUT_MS);
    const where = `${describeDatabaseUrl(options.url)}${options.schema ? ` (schema ${options.schema})` : ""}`;
    const store = new PostgresStore(pool, leasePool, `postgres at ${where}`);
    try {
      await store.migrate(where, options.schema);
    } catch (error) {
      await Promise.all([pool.end(), leasePool.end()]);
      throw error;
    }
    return store;
  }

  private async migrate(where: string, schema: string | undefined): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      // Several nodes may start at once: one migrates, the others wait and then find nothing to do.
      await client.query(
        "SELECT pg_advisory_xact_lock(hashtext('deckhand-migrations:' || current_schema()))",
      );
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)",
      );
      const { rows } = await client.query(
        "SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations",
      );
      for (const migration of pendingMigrations(postgresMigrations, Number(rows[0]?.version ?? 0), where)) {
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          migration.version,
          migration.name,
          Date.now(),
        ]);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private async rows(text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return (await this.pool.query(text, params)).rows;
  }

  private async changes(text: string, params: unknown[]): Promise<number> {
    return (await this.pool.query(text, params)).rowCount ?? 0;
  }

  async createKey(input: { name?: string; projectId?: string } = {}): Promise<CreatedKey> {
    const { id, key, hash } = generateKey();
    const created: CreatedKey = {
      id,
      key,
      projectId: input.projectId ?? generateProjectId(),
      createdAt: Date.now(),
    };
    if (input.name !== undefined) created.name = input.name;
    await this.pool.query(
      "INSERT INTO api_keys (id, key_hash, project_id, name, created_at) VALUES ($1, $2, $3, $4, $5)",
      [id, hash, created.projectId, input.name ?? null, created.createdAt],
    );
    return created;
  }

  async verifyKey(key: string): Promise<KeyIdentity | null> {
    const id = keyIdOf(key);
    const [row] = id
      ? await this.rows("SELECT key_hash, project_id FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [
          id,
        ])
      : [];
    // Compared even when no row matched, so that an unknown key costs the same as a wrong one.
    const matches = keyMatchesHash(key, row ? String(row.key_hash) : null);
    if (!matches || !row || !id) return null;
    return { keyId: id, projectId: String(row.project_id) };
  }

  async listKeys(): Promise<KeyInfo[]> {
    const rows = await this.rows(
      "SELECT id, project_id, name, created_at, revoked_at FROM api_keys ORDER BY created_at, id",
    );
    return rows.map(keyFromRow);
  }

  async revokedKeyIds(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.rows("SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND id = ANY($1)", [
      [...ids],
    ]);
    return rows.map((row) => String(row.id));
  }

  async revokeKey(id: string): Promise<boolean> {
    return (
      (await this.changes("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [
        Date.now(),
        id,
      ])) > 0
    );
  }

  async createSession(input: NewSession): Promise<SessionRecord> {
    const now = input.createdAt ?? Date.now();
    const [row] = await this.rows(
      `INSERT INTO sessions (id, project_id, key_id, params, client_language, status, created_at, last_activity_at, node_id)
       VALUES ($1, $2, $3, $4::json, $5, 'active', $6, $6, $7) RETURNING *`,
      [
        input.id ?? randomUUID(),
        input.projectId,
        input.keyId,
        toJsonText(input.params ?? {}, "Session params"),
        input.clientLanguage ?? null,
        now,
        input.nodeId ?? null,
      ],
    );
    return sessionFromRow(row!);
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const [row] = await this.rows("SELECT * FROM sessions WHERE id = $1", [id]);
    return row ? sessionFromRow(row) : null;
  }

  async touchSession(id: string, at = Date.now()): Promise<void> {
    await this.pool.query(
      "UPDATE sessions SET last_activity_at = GREATEST(last_activity_at, $1) WHERE id = $2 AND status = 'active'",
      [at, id],
    );
  }

  async endSession(id: string, at = Date.now(), reason?: string): Promise<boolean> {
    const changed = await this.changes(
      `UPDATE sessions SET status = 'ended', ended_at = $1, last_activity_at = GREATEST(last_activity_at, $1),
         end_reason = $3
       WHERE id = $2 AND status = 'active'`,
      [at, id, reason ?? null],
    );
    return changed > 0;
  }

  async listActiveSessions(filter: { projectId?: string } = {}): Promise<SessionRecord[]> {
    const rows =
      filter.projectId === undefined
        ? await this.rows("SELECT * FROM sessions WHERE status = 'active' ORDER BY created_at, id")
        : await this.rows(
            "SELECT * FROM sessions WHERE status = 'active' AND project_id = $1 ORDER BY created_at, id",
            [filter.projectId],
          );
    return rows.map(sessionFromRow);
  }

  async countActiveSessions(filter: { projectId?: string } = {}): Promise<number> {
    const [row] =
      filter.projectId === undefined
        ? await this.rows("SELECT COUNT(*) AS n FROM sessions WHERE status = 'active'")
        : await this.rows("SELECT COUNT(*) AS n FROM sessions WHERE status = 'active' AND project_id = $1", [
            filter.projectId,
          ]);
    return Number(row?.n ?? 0);
  }

  async listProjectSessions(projectId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const limit = Math.max(1, Math.min(1000, Math.floor(options.limit ?? 50)));
    // Pages as the replay counts them: a step starts one when its URL differs from the step before.
    const rows = await this.rows(
      `WITH chosen AS (
         SELECT * FROM sessions WHERE project_id = $1
         ORDER BY status = 'active' DESC, created_at DESC, id LIMIT $2
       ), steps AS (
         SELECT session_id, input_tokens, output_tokens, cost,
           CASE WHEN result->>'cacheStatus' = 'HIT' THEN 1 ELSE 0 END AS hit,
           CASE WHEN result->>'success' = 'false' THEN 1 ELSE 0 END AS failed,
           CASE WHEN page_url IS NOT DISTINCT FROM LAG(page_url) OVER (PARTITION BY session_id ORDER BY seq)
             THEN 0 ELSE 1 END AS new_page
         FROM replay_actions WHERE session_id IN (SELECT id FROM chosen)
       ), totals AS (
         SELECT session_id, COUNT(*) AS steps, SUM(new_page) AS pages, SUM(input_tokens) AS input_tokens,
           SUM(output_tokens) AS output_tokens, SUM(cost) AS cost, SUM(hit) AS cache_hits, SUM(failed) AS failures
         FROM steps GROUP BY session_id
       )
       SELECT chosen.*, totals.steps, totals.pages, totals.input_tokens, totals.output_tokens, totals.cost,
         totals.cache_hits, totals.failures
       FROM chosen LEFT JOIN totals ON totals.session_id = chosen.id
       ORDER BY chosen.status = 'active' DESC, chosen.created_at DESC, chosen.id`,
      [projectId, limit],
    );
    return rows.map(summaryFromRow);
  }

  async projectDailyTotals(projectId: string, since: number): Promise<DailyTotals[]> {
    const day = (column: string) =>
      `to_char(to_timestamp(${column} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
    const sessionDays = await this.rows(
      `SELECT ${day("created_at")} AS day, COUNT(*) AS sessions FROM sessions
       WHERE project_id = $1 AND created_at >= $2 GROUP BY 1`,
      [projectId, since],
    );
    const stepDays = await this.rows(
      `SELECT ${day("a.started_at")} AS day, COUNT(*) AS steps, SUM(a.input_tokens) AS input_tokens,
         SUM(a.output_tokens) AS output_tokens, SUM(a.cost) AS cost,
         SUM(CASE WHEN a.result->>'cacheStatus' = 'HIT' THEN 1 ELSE 0 END) AS cache_hits
       FROM replay_actions a JOIN sessions s ON s.id = a.session_id
       WHERE s.project_id = $1 AND a.started_at >= $2 GROUP BY 1`,
      [projectId, since],
    );
    return mergeDailyTotals(sessionDays, stepDays);
  }

  /** Runs `work` in one transaction holding LEASE_LOCK, on a connection of `pool`. */
  private async underLeaseLock<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(LEASE_LOCK);
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async registerNode(nodeId: string, ttlMs: number, info: NodeInfo = {}): Promise<void> {
    await this.leasePool.query(
      `INSERT INTO nodes (id, started_at, lease_expires_at, advertise_url, max_sessions, ready)
       VALUES ($1, ${DB_NOW}, ${DB_NOW} + $2, $3, $4, $5::json)
       ON CONFLICT (id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at,
         advertise_url = excluded.advertise_url, max_sessions = excluded.max_sessions,
         ready = excluded.ready, draining = false`,
      [
        nodeId,
        Math.round(ttlMs),
        info.advertiseUrl ?? null,
        info.maxSessions ?? null,
        readinessText(info.ready),
      ],
    );
  }

  async setNodeReady(nodeId: string, ready: NodeReadiness): Promise<void> {
    // On the lease's connections: a node's news of its capacity never queues behind request work.
    await this.leasePool.query("UPDATE nodes SET ready = $2::json WHERE id = $1", [
      nodeId,
      readinessText(ready),
    ]);
  }

  async getNode(nodeId: string): Promise<ClusterNode | null> {
    const [row] = await this.rows(
      `SELECT nodes.*, lease_expires_at >= ${DB_NOW} AS live,
         (SELECT COUNT(*) FROM sessions WHERE node_id = nodes.id AND status = 'active') AS active_sessions
       FROM nodes WHERE id = $1`,
      [nodeId],
    );
    return row ? clusterNodeFromRow(row) : null;
  }

  async listLiveNodes(forProject?: string): Promise<ClusterNode[]> {
    const rows = await this.rows(
      `SELECT nodes.*, true AS live,
         (SELECT COUNT(*) FROM sessions WHERE node_id = nodes.id AND status = 'active') AS active_sessions
         ${forProject === undefined ? "" : PROJECT_SESSIONS.replace("?", "$1")}
       FROM nodes WHERE lease_expires_at >= ${DB_NOW} ORDER BY id`,
      forProject === undefined ? [] : [forProject],
    );
    return rows.map(clusterNodeFromRow);
  }

  async setNodeDraining(nodeId: string): Promise<void> {
    await this.pool.query("UPDATE nodes SET draining = true WHERE id = $1", [nodeId]);
  }

  async admitSession(
    input: NewSession,
    limits: { maxSessions: number; perNode: boolean; maxPerProject: number },
  ): Promise<{ session: SessionRecord } | { refused: AdmissionRefusal }> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      // Every node's admissions, one at a time: count and insert see the same table.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('deckhand-admission:' || current_schema()))");
      const count = async (where: string, value: string | null) =>
        Number(
          (
            await client.query(
              `SELECT COUNT(*) AS n FROM sessions WHERE status = 'active' ${where}`,
              value === null ? [] : [value],
            )
          ).rows[0]?.n ?? 0,
        );
      const onNode = limits.perNode
        ? await count("AND node_id = $1", input.nodeId ?? "")
        : await count("", null);
      let refused: AdmissionRefusal | undefined;
      if (onNode >= limits.maxSessions) refused = "node";
      else if ((await count("AND project_id = $1", input.projectId)) >= limits.maxPerProject)
        refused = "project";
      if (refused) {
        await client.query("ROLLBACK");
        return { refused };
      }
      const { rows } = await client.query(
        `INSERT INTO sessions (id, project_id, key_id, params, client_language, status, created_at, last_activity_at, node_id)
         VALUES ($1, $2, $3, $4::json, $5, 'active', $6, $6, $7) RETURNING *`,
        [
          input.id ?? randomUUID(),
          input.projectId,
          input.keyId,
          toJsonText(input.params ?? {}, "Session params"),
          input.clientLanguage ?? null,
          input.createdAt ?? Date.now(),
          input.nodeId ?? null,
        ],
      );
      await client.query("COMMIT");
      return { session: sessionFromRow(rows[0]!) };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async renewNode(nodeId: string, ttlMs: number, ready?: NodeReadiness): Promise<boolean> {
    const result = await this.leasePool.query(
      `UPDATE nodes SET lease_expires_at = ${DB_NOW} + $2, ready = COALESCE($3::json, ready)
       WHERE id = $1 AND lease_expires_at >= ${DB_NOW}`,
      [nodeId, Math.round(ttlMs), readinessText(ready)],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async resumeNode(nodeId: string, ttlMs: number, sessionIds: readonly string[]): Promise<string[]> {
    return this.underLeaseLock(this.leasePool, async (client) => {
      await client.query(
        `INSERT INTO nodes (id, started_at, lease_expires_at) VALUES ($1, ${DB_NOW}, ${DB_NOW} + $2)
         ON CONFLICT (id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at`,
        [nodeId, Math.round(ttlMs)],
      );
      if (sessionIds.length === 0) return [];
      const { rows } = await client.query(
        "SELECT id FROM sessions WHERE id = ANY($1::text[]) AND status = 'active'",
        [[...sessionIds]],
      );
      const active = new Set(rows.map((row: { id: unknown }) => String(row.id)));
      return sessionIds.filter((id) => !active.has(id));
    });
  }

  async nodeIsLive(nodeId: string): Promise<boolean> {
    const rows = await this.rows(`SELECT 1 FROM nodes WHERE id = $1 AND lease_expires_at >= ${DB_NOW}`, [
      nodeId,
    ]);
    return rows.length > 0;
  }

  async reclaimLapsedNodes(options: { except?: string } = {}): Promise<{
    nodeIds: string[];
    sessionIds: string[];
  }> {
    // Under the lease lock (see resumeNode), one statement: the lapsed nodes are deleted, and every
    // active session of a node without a lease is ended: one deleted here, or one already forgotten
    // that went on starting sessions. A node that renewed its lease while this ran is not among
    // the deleted (the DELETE reads its renewed row), and so keeps its sessions.
    const [row] = await this.underLeaseLock(this.pool, async (client) => {
      const { rows } = await client.query(
        `WITH lapsed AS (
           DELETE FROM nodes WHERE lease_expires_at < ${DB_NOW} AND id IS DISTINCT FROM $1 RETURNING id
         ), ended AS (
           UPDATE sessions SET status = 'ended', ended_at = ${DB_NOW},
             last_activity_at = GREATEST(last_activity_at, ${DB_NOW}), end_reason = 'node lost'
           WHERE status = 'active' AND node_id IS NOT NULL AND (
             node_id IN (SELECT id FROM lapsed)
             OR NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = sessions.node_id)
           ) RETURNING id
         )
         SELECT (SELECT COALESCE(json_agg(id), '[]'::json) FROM lapsed) AS node_ids,
                (SELECT COALESCE(json_agg(id), '[]'::json) FROM ended) AS session_ids`,
        [options.except ?? null],
      );
      return rows as Record<string, unknown>[];
    });
    return {
      nodeIds: ((row?.node_ids as string[] | undefined) ?? []).map(String),
      sessionIds: ((row?.session_ids as string[] | undefined) ?? []).map(String),
    };
  }

  async removeNode(nodeId: string): Promise<void> {
    await this.pool.query("DELETE FROM nodes WHERE id = $1", [nodeId]);
  }

  async appendAction(sessionId: string, action: NewReplayAction): Promise<number> {
    const [row] = await this.rows(
      `INSERT INTO replay_actions (session_id, method, parameters, result, started_at, ended_at, page_url,
         input_tokens, output_tokens, time_ms, cost)
       VALUES ($1, $2, $3::json, $4::json, $5, $6, $7, $8, $9, $10, $11) RETURNING seq`,
      actionRowValues(sessionId, action),
    );
    return Number(row?.seq);
  }

  async listActions(sessionId: string): Promise<RecordedAction[]> {
    const rows = await this.rows("SELECT * FROM replay_actions WHERE session_id = $1 ORDER BY seq", [
      sessionId,
    ]);
    return rows.map(actionFromRow).map(recordedAction);
  }

  async putScreenshot(
    sessionId: string,
    actionSeq: number,
    kind: ScreenshotKind,
    jpeg: Buffer,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO replay_screenshots (session_id, action_seq, kind, bytes, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (session_id, action_seq, kind) DO UPDATE SET bytes = excluded.bytes, data = excluded.data,
         created_at = excluded.created_at`,
      [sessionId, actionSeq, kind, jpeg.length, jpeg, Date.now()],
    );
  }

  async getScreenshot(sessionId: string, actionSeq: number, kind: ScreenshotKind): Promise<Buffer | null> {
    const [row] = await this.rows(
      "SELECT data FROM replay_screenshots WHERE session_id = $1 AND action_seq = $2 AND kind = $3",
      [sessionId, actionSeq, kind],
    );
    return row ? (row.data as Buffer) : null;
  }

  async listScreenshots(sessionId: string): Promise<ScreenshotInfo[]> {
    const rows = await this.rows(
      "SELECT action_seq, kind, bytes FROM replay_screenshots WHERE session_id = $1 ORDER BY action_seq, kind DESC",
      [sessionId],
    );
    return rows.map((row) => ({
      actionSeq: Number(row.action_seq),
      kind: String(row.kind) as ScreenshotKind,
      bytes: Number(row.bytes),
    }));
  }

  async pruneScreenshots(before: number): Promise<number> {
    return this.changes("DELETE FROM replay_screenshots WHERE created_at < $1", [before]);
  }

  async serviceSecret(name: string): Promise<Buffer> {
    await this.pool.query(
      "INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
      [name, randomBytes(32).toString("base64"), Date.now()],
    );
    const [row] = await this.rows("SELECT value FROM service_secrets WHERE name = $1", [name]);
    return Buffer.from(String(row?.value), "base64");
  }

  async getReplay(sessionId: string): Promise<ReplayResult | null> {
    const session = await this.getSession(sessionId);
    if (!session) return null;
    const rows = await this.rows("SELECT * FROM replay_actions WHERE session_id = $1 ORDER BY seq", [
      sessionId,
    ]);
    return groupIntoPages(rows.map(actionFromRow), session.clientLanguage);
  }

  async cacheGet(projectId: string, key: string): Promise<unknown> {
    const [row] = await this.rows(
      "SELECT value FROM cache_entries WHERE project_id = $1 AND cache_key = $2",
      [projectId, key],
    );
    return row ? row.value : undefined;
  }

  async cachePut(projectId: string, key: string, value: unknown): Promise<void> {
    await this.pool.query(
      `INSERT INTO cache_entries (project_id, cache_key, value, updated_at) VALUES ($1, $2, $3::json, $4)
       ON CONFLICT (project_id, cache_key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [projectId, key, toJsonText(value, "A cache value"), Date.now()],
    );
  }

  async cacheDelete(projectId: string, key: string): Promise<boolean> {
    return (
      (await this.changes("DELETE FROM cache_entries WHERE project_id = $1 AND cache_key = $2", [
        projectId,
        key,
      ])) > 0
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.pool.end(), this.leasePool.end()]);
  }
}
