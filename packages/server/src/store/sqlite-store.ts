// The default store: one SQLite file under the data directory, through Node's built-in
// `node:sqlite` (no native module to build). WAL mode lets the CLI's `keys` commands write while a
// server reads; the busy timeout makes a writer wait for the other instead of failing.

import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { generateKey, generateProjectId, keyIdOf, keyMatchesHash } from "./api-keys.ts";
import { pendingMigrations, sqliteMigrations } from "./migrations.ts";
import { groupIntoPages } from "./replay.ts";
import {
  actionFromRow,
  actionRowValues,
  clusterNodeFromRow,
  json,
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

export const SQLITE_FILE_NAME = "deckhand.db";
/** The folder of the data directory that holds the per-step screenshots, one folder per session. */
export const SCREENSHOTS_DIR_NAME = "screenshots";

const SESSION_ID = /^[0-9A-Za-z-]{1,64}$/;

export class SqliteStore implements Store {
  readonly description: string;
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly screenshotsDir: string;

  /** Opens (creating if needed) `<dataDir>/deckhand.db` and brings its schema up to date. */
  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.resolve(dataDir, SQLITE_FILE_NAME);
    this.screenshotsDir = path.resolve(dataDir, SCREENSHOTS_DIR_NAME);
    this.description = `sqlite at ${file}`;
    this.db = new DatabaseSync(file, { timeout: 5000, enableForeignKeyConstraints: true });
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    this.migrate(file);
  }

  private migrate(where: string): void {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.db.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
      );
      const row = this.db.prepare("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations").get();
      for (const migration of pendingMigrations(sqliteMigrations, Number(row?.version ?? 0), where)) {
        this.db.exec(migration.sql);
        this.db
          .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
          .run(migration.version, migration.name, Date.now());
      }
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  private sql(text: string): StatementSync {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  private all(text: string, ...params: SQLInputValue[]): Record<string, unknown>[] {
    return this.sql(text).all(...params);
  }

  private get(text: string, ...params: SQLInputValue[]): Record<string, unknown> | undefined {
    return this.sql(text).get(...params);
  }

  private run(text: string, ...params: SQLInputValue[]): number {
    return Number(this.sql(text).run(...params).changes);
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
    this.run(
      "INSERT INTO api_keys (id, key_hash, project_id, name, created_at) VALUES (?, ?, ?, ?, ?)",
      id,
      hash,
      created.projectId,
      input.name ?? null,
      created.createdAt,
    );
    return created;
  }

  async verifyKey(key: string): Promise<KeyIdentity | null> {
    const id = keyIdOf(key);
    const row = id
      ? this.get("SELECT key_hash, project_id FROM api_keys WHERE id = ? AND revoked_at IS NULL", id)
      : undefined;
    // Compared even when no row matched, so that an unknown key costs the same as a wrong one.
    const matches = keyMatchesHash(key, row ? String(row.key_hash) : null);
    if (!matches || !row || !id) return null;
    return { keyId: id, projectId: String(row.project_id) };
  }

  async listKeys(): Promise<KeyInfo[]> {
    return this.all(
      "SELECT id, project_id, name, created_at, revoked_at FROM api_keys ORDER BY created_at, id",
    ).map(keyFromRow);
  }

  async revokeKey(id: string): Promise<boolean> {
    return (
      this.run("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", Date.now(), id) > 0
    );
  }

  async revokedKeyIds(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const marks = ids.map(() => "?").join(", ");
    return this.all(`SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND id IN (${marks})`, ...ids).map(
      (row) => String(row.id),
    );
  }

  async createSession(input: NewSession): Promise<SessionRecord> {
    const now = input.createdAt ?? Date.now();
    const id = input.id ?? randomUUID();
    this.run(
      `INSERT INTO sessions (id, project_id, key_id, params, client_language, status, created_at, last_activity_at, node_id)
       VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
      id,
      input.projectId,
      input.keyId,
      toJsonText(input.params ?? {}, "Session params"),
      input.clientLanguage ?? null,
      now,
      now,
      input.nodeId ?? null,
    );
    return (await this.getSession(id))!;
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.get("SELECT * FROM sessions WHERE id = ?", id);
    return row ? sessionFromRow(row) : null;
  }

  async touchSession(id: string, at = Date.now()): Promise<void> {
    this.run(
      "UPDATE sessions SET last_activity_at = MAX(last_activity_at, ?) WHERE id = ? AND status = 'active'",
      at,
      id,
    );
  }

  async endSession(id: string, at = Date.now(), reason?: string): Promise<boolean> {
    return (
      this.run(
        `UPDATE sessions SET status = 'ended', ended_at = ?, last_activity_at = MAX(last_activity_at, ?), end_reason = ?
         WHERE id = ? AND status = 'active'`,
        at,
        at,
        reason ?? null,
        id,
      ) > 0
    );
  }

  async listActiveSessions(filter: { projectId?: string } = {}): Promise<SessionRecord[]> {
    const rows =
      filter.projectId === undefined
        ? this.all("SELECT * FROM sessions WHERE status = 'active' ORDER BY created_at, id")
        : this.all(
            "SELECT * FROM sessions WHERE status = 'active' AND project_id = ? ORDER BY created_at, id",
            filter.projectId,
          );
    return rows.map(sessionFromRow);
  }

  async countActiveSessions(filter: { projectId?: string } = {}): Promise<number> {
    const row =
      filter.projectId === undefined
        ? this.get("SELECT COUNT(*) AS n FROM sessions WHERE status = 'active'")
        : this.get(
            "SELECT COUNT(*) AS n FROM sessions WHERE status = 'active' AND project_id = ?",
            filter.projectId,
          );
    return Number(row?.n ?? 0);
  }

  async listProjectSessions(projectId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const limit = Math.max(1, Math.min(1000, Math.floor(options.limit ?? 50)));
    // Pages as the replay counts them: a step starts one when its URL differs from the step before.
    return this.all(
      `WITH chosen AS (
         SELECT * FROM sessions WHERE project_id = ?
         ORDER BY status = 'active' DESC, created_at DESC, id LIMIT ?
       ), steps AS (
         SELECT session_id, input_tokens, output_tokens, cost,
           CASE WHEN json_extract(result, '$.cacheStatus') = 'HIT' THEN 1 ELSE 0 END AS hit,
           CASE WHEN json_extract(result, '$.success') = 0 THEN 1 ELSE 0 END AS failed,
           CASE WHEN page_url IS LAG(page_url) OVER (PARTITION BY session_id ORDER BY seq) THEN 0 ELSE 1 END AS new_page
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
      projectId,
      limit,
    ).map(summaryFromRow);
  }

  async projectDailyTotals(projectId: string, since: number): Promise<DailyTotals[]> {
    const day = (column: string) => `strftime('%Y-%m-%d', ${column} / 1000, 'unixepoch')`;
    const sessionDays = this.all(
      `SELECT ${day("created_at")} AS day, COUNT(*) AS sessions FROM sessions
       WHERE project_id = ? AND created_at >= ? GROUP BY day`,
      projectId,
      since,
    );
    const stepDays = this.all(
      `SELECT ${day("a.started_at")} AS day, COUNT(*) AS steps, SUM(a.input_tokens) AS input_tokens,
         SUM(a.output_tokens) AS output_tokens, SUM(a.cost) AS cost,
         SUM(CASE WHEN json_extract(a.result, '$.cacheStatus') = 'HIT' THEN 1 ELSE 0 END) AS cache_hits
       FROM replay_actions a JOIN sessions s ON s.id = a.session_id
       WHERE s.project_id = ? AND a.started_at >= ? GROUP BY day`,
      projectId,
      since,
    );
    return mergeDailyTotals(sessionDays, stepDays);
  }

  async registerNode(nodeId: string, ttlMs: number, info: NodeInfo = {}): Promise<void> {
    const now = Date.now();
    this.run(
      `INSERT INTO nodes (id, started_at, lease_expires_at, advertise_url, max_sessions, ready)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at,
         advertise_url = excluded.advertise_url, max_sessions = excluded.max_sessions,
         ready = excluded.ready, draining = 0`,
      nodeId,
      now,
      now + ttlMs,
      info.advertiseUrl ?? null,
      info.maxSessions ?? null,
      readinessText(info.ready),
    );
  }

  async setNodeReady(nodeId: string, ready: NodeReadiness): Promise<void> {
    this.run("UPDATE nodes SET ready = ? WHERE id = ?", readinessText(ready), nodeId);
  }

  async getNode(nodeId: string): Promise<ClusterNode | null> {
    const row = this.get(
      `SELECT nodes.*, lease_expires_at >= ? AS live,
         (SELECT COUNT(*) FROM sessions WHERE node_id = nodes.id AND status = 'active') AS active_sessions
       FROM nodes WHERE id = ?`,
      Date.now(),
      nodeId,
    );
    return row ? clusterNodeFromRow(row) : null;
  }

  async listLiveNodes(forProject?: string): Promise<ClusterNode[]> {
    return this.all(
      `SELECT nodes.*, 1 AS live,
         (SELECT COUNT(*) FROM sessions WHERE node_id = nodes.id AND status = 'active') AS active_sessions
         ${forProject === undefined ? "" : PROJECT_SESSIONS}
       FROM nodes WHERE lease_expires_at >= ? ORDER BY id`,
      ...(forProject === undefined ? [] : [forProject]),
      Date.now(),
    ).map(clusterNodeFromRow);
  }

  async setNodeDraining(nodeId: string): Promise<void> {
    this.run("UPDATE nodes SET draining = 1 WHERE id = ?", nodeId);
  }

  async admitSession(
    input: NewSession,
    limits: { maxSessions: number; perNode: boolean; maxPerProject: number },
  ): Promise<{ session: SessionRecord } | { refused: AdmissionRefusal }> {
    // node:sqlite is synchronous: nothing runs between the counts and the insert in this process,
    // and the insert is the only write (another process's writes wait for the database's lock).
    const count = (where: string, ...params: SQLInputValue[]) =>
      Number(
        this.get(`SELECT COUNT(*) AS n FROM sessions WHERE status = 'active' ${where}`, ...params)?.n ?? 0,
      );
    const onNode = limits.perNode ? count("AND node_id IS ?", input.nodeId ?? null) : count("");
    if (onNode >= limits.maxSessions) return { refused: "node" };
    if (count("AND project_id = ?", input.projectId) >= limits.maxPerProject) return { refused: "project" };
    return { session: await this.createSession(input) };
  }

  async renewNode(nodeId: string, ttlMs: number, ready?: NodeReadiness): Promise<boolean> {
    const now = Date.now();
    return (
      this.run(
        "UPDATE nodes SET lease_expires_at = ?, ready = COALESCE(?, ready) WHERE id = ? AND lease_expires_at >= ?",
        now + ttlMs,
        readinessText(ready),
        nodeId,
        now,
      ) > 0
    );
  }

  async resumeNode(nodeId: string, ttlMs: number, sessionIds: readonly string[]): Promise<string[]> {
    const now = Date.now();
    // One transaction: no reclaim falls between taking the lease and reading the sessions.
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.run(
        `INSERT INTO nodes (id, started_at, lease_expires_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at`,
        nodeId,
        now,
        now + ttlMs,
      );
      const gone = sessionIds.filter(
        (id) =>
          this.get("SELECT 1 AS active FROM sessions WHERE id = ? AND status = 'active'", id) === undefined,
      );
      this.db.exec("COMMIT");
      return gone;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  async nodeIsLive(nodeId: string): Promise<boolean> {
    return (
      this.get("SELECT 1 AS live FROM nodes WHERE id = ? AND lease_expires_at >= ?", nodeId, Date.now()) !==
      undefined
    );
  }

  async reclaimLapsedNodes(options: { except?: string } = {}): Promise<{
    nodeIds: string[];
    sessionIds: string[];
  }> {
    const now = Date.now();
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const nodeIds = this.all(
        "DELETE FROM nodes WHERE lease_expires_at < ? AND id IS NOT ? RETURNING id",
        now,
        options.except ?? null,
      ).map((r) => String(r.id));
      // Every active session of a node without a lease: a lapsed one (deleted just now), or one
      // already forgotten.
      const sessionIds = this.all(
        `UPDATE sessions SET status = 'ended', ended_at = ?, last_activity_at = MAX(last_activity_at, ?),
           end_reason = 'node lost'
         WHERE status = 'active' AND node_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = sessions.node_id)
         RETURNING id`,
        now,
        now,
      ).map((r) => String(r.id));
      this.db.exec("COMMIT");
      return { nodeIds, sessionIds };
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  async removeNode(nodeId: string): Promise<void> {
    this.run("DELETE FROM nodes WHERE id = ?", nodeId);
  }

  async appendAction(sessionId: string, action: NewReplayAction): Promise<number> {
    const row = this.get(
      `INSERT INTO replay_actions (session_id, method, parameters, result, started_at, ended_at, page_url,
         input_tokens, output_tokens, time_ms, cost)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      ...actionRowValues(sessionId, action),
    );
    return Number(row?.seq);
  }

  async listActions(sessionId: string): Promise<RecordedAction[]> {
    return this.all("SELECT * FROM replay_actions WHERE session_id = ? ORDER BY seq", sessionId)
      .map(actionFromRow)
      .map(recordedAction);
  }

  /** A screenshot's file, relative to the screenshots folder: named by what it is, never by a caller's text. */
  private screenshotFile(sessionId: string, actionSeq: number, kind: ScreenshotKind): string {
    if (!SESSION_ID.test(sessionId) || !Number.isSafeInteger(actionSeq) || actionSeq < 0)
      throw new TypeError("A screenshot needs a session id and a whole action number.");
    if (kind !== "before" && kind !== "after") throw new TypeError("A screenshot is taken before or after.");
    return path.join(sessionId, `${actionSeq}-${kind}.jpg`);
  }

  async putScreenshot(
    sessionId: string,
    actionSeq: number,
    kind: ScreenshotKind,
    jpeg: Buffer,
  ): Promise<void> {
    const file = this.screenshotFile(sessionId, actionSeq, kind);
    const full = path.join(this.screenshotsDir, file);
    await mkdir(path.dirname(full), { recursive: true, mode: 0o700 });
    await writeFile(full, jpeg, { mode: 0o600 });
    this.run(
      `INSERT INTO replay_screenshots (session_id, action_seq, kind, bytes, file, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id, action_seq, kind) DO UPDATE SET bytes = excluded.bytes, created_at = excluded.created_at`,
      sessionId,
      actionSeq,
      kind,
      jpeg.length,
      file,
      Date.now(),
    );
  }

  async getScreenshot(sessionId: string, actionSeq: number, kind: ScreenshotKind): Promise<Buffer | null> {
    const row = this.get(
      "SELECT file FROM replay_screenshots WHERE session_id = ? AND action_seq = ? AND kind = ?",
      sessionId,
      actionSeq,
      kind,
    );
    if (!row) return null;
    return readFile(path.join(this.screenshotsDir, String(row.file))).catch(() => null);
  }

  async listScreenshots(sessionId: string): Promise<ScreenshotInfo[]> {
    return this.all(
      "SELECT action_seq, kind, bytes FROM replay_screenshots WHERE session_id = ? ORDER BY action_seq, kind DESC",
      sessionId,
    ).map((row) => ({
      actionSeq: Number(row.action_seq),
      kind: String(row.kind) as ScreenshotKind,
      bytes: Number(row.bytes),
    }));
  }

  async pruneScreenshots(before: number): Promise<number> {
    const gone = this.all("DELETE FROM replay_screenshots WHERE created_at < ? RETURNING file", before);
    for (const row of gone) {
      await rm(path.join(this.screenshotsDir, String(row.file)), { force: true }).catch(() => undefined);
    }
    return gone.length;
  }

  async serviceSecret(name: string): Promise<Buffer> {
    this.run(
      "INSERT INTO service_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
      name,
      randomBytes(32).toString("base64"),
      Date.now(),
    );
    const row = this.get("SELECT value FROM service_secrets WHERE name = ?", name);
    return Buffer.from(String(row?.value), "base64");
  }

  async getReplay(sessionId: string): Promise<ReplayResult | null> {
    const session = await this.getSession(sessionId);
    if (!session) return null;
    const rows = this.all("SELECT * FROM replay_actions WHERE session_id = ? ORDER BY seq", sessionId);
    return groupIntoPages(rows.map(actionFromRow), session.clientLanguage);
  }

  async cacheGet(projectId: string, key: string): Promise<unknown> {
    const row = this.get(
      "SELECT value FROM cache_entries WHERE project_id = ? AND cache_key = ?",
      projectId,
      key,
    );
    return row ? json(row.value) : undefined;
  }

  async cachePut(projectId: string, key: string, value: unknown): Promise<void> {
    this.run(
      `INSERT INTO cache_entries (project_id, cache_key, value, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (project_id, cache_key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      projectId,
      key,
      toJsonText(value, "A cache value"),
      Date.now(),
    );
  }

  async cacheDelete(projectId: string, key: string): Promise<boolean> {
    return this.run("DELETE FROM cache_entries WHERE project_id = ? AND cache_key = ?", projectId, key) > 0;
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
