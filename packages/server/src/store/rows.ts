// Row -> record mapping shared by both back ends. SQLite hands back JSON as text and integers as
// numbers; PostgreSQL hands back `json` parsed and `bigint` as strings. These helpers accept both.

import { prepareAction, type StoredAction, toReplayAction } from "./replay.ts";
import type {
  ClusterNode,
  DailyTotals,
  KeyInfo,
  NewReplayAction,
  NodeReadiness,
  RecordedAction,
  SessionRecord,
  SessionStatus,
  SessionSummary,
} from "./store.ts";

type Row = Record<string, unknown>;

export function json(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function optionalNum(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** JSON text for a value that must be storable; `undefined` and functions are not. */
export function toJsonText(value: unknown, what: string): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`${what} must be a JSON value (got ${typeof value}).`);
  return text;
}

export function keyFromRow(row: Row): KeyInfo {
  const key: KeyInfo = {
    id: String(row.id),
    projectId: String(row.project_id),
    createdAt: num(row.created_at),
  };
  if (row.name !== null && row.name !== undefined) key.name = String(row.name);
  if (row.revoked_at !== null && row.revoked_at !== undefined) key.revokedAt = num(row.revoked_at);
  return key;
}

export function sessionFromRow(row: Row): SessionRecord {
  const session: SessionRecord = {
    id: String(row.id),
    projectId: String(row.project_id),
    keyId: String(row.key_id),
    params: json(row.params) as Record<string, unknown>,
    status: String(row.status) as SessionStatus,
    createdAt: num(row.created_at),
    lastActivityAt: num(row.last_activity_at),
  };
  if (row.client_language !== null && row.client_language !== undefined)
    session.clientLanguage = String(row.client_language);
  if (row.ended_at !== null && row.ended_at !== undefined) session.endedAt = num(row.ended_at);
  if (row.end_reason !== null && row.end_reason !== undefined) session.endReason = String(row.end_reason);
  if (row.node_id !== null && row.node_id !== undefined) session.nodeId = String(row.node_id);
  return session;
}

/** A row of listProjectSessions: the session's columns and its totals. */
export function summaryFromRow(row: Row): SessionSummary {
  return {
    ...sessionFromRow(row),
    steps: num(row.steps ?? 0),
    pages: num(row.pages ?? 0),
    inputTokens: num(row.input_tokens ?? 0),
    outputTokens: num(row.output_tokens ?? 0),
    cost: num(row.cost ?? 0),
    cacheHits: num(row.cache_hits ?? 0),
    failures: num(row.failures ?? 0),
  };
}

/** Sessions per day and steps per day (two queries) as one list of days, oldest first. */
export function mergeDailyTotals(sessionDays: readonly Row[], stepDays: readonly Row[]): DailyTotals[] {
  const days = new Map<string, DailyTotals>();
  const day = (name: string): DailyTotals => {
    let totals = days.get(name);
    if (!totals) {
      totals = { day: name, sessions: 0, steps: 0, inputTokens: 0, outputTokens: 0, cost: 0, cacheHits: 0 };
      days.set(name, totals);
    }
    return totals;
  };
  for (const row of sessionDays) day(String(row.day)).sessions = num(row.sessions);
  for (const row of stepDays) {
    const totals = day(String(row.day));
    totals.steps = num(row.steps);
    totals.inputTokens = num(row.input_tokens ?? 0);
    totals.outputTokens = num(row.output_tokens ?? 0);
    totals.cost = num(row.cost ?? 0);
    totals.cacheHits = num(row.cache_hits ?? 0);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/**
 * The column listLiveNodes adds for a project (both back ends): a node's active sessions of it, the
 * project bound to the one `?` (PostgreSQL's store numbers it).
 */
export const PROJECT_SESSIONS = `, (SELECT COUNT(*) FROM sessions
    WHERE node_id = nodes.id AND status = 'active' AND project_id = ?) AS project_sessions`;

export function clusterNodeFromRow(row: Row): ClusterNode {
  const node: ClusterNode = {
    id: String(row.id),
    // SQLite answers 0/1, PostgreSQL booleans.
    live: Boolean(row.live),
    draining: Boolean(row.draining),
    activeSessions: num(row.active_sessions ?? 0),
  };
  if (row.project_sessions !== null && row.project_sessions !== undefined)
    node.projectSessions = num(row.project_sessions);
  if (row.advertise_url !== null && row.advertise_url !== undefined)
    node.advertiseUrl = String(row.advertise_url);
  const max = optionalNum(row.max_sessions);
  if (max !== null) node.maxSessions = max;
  if (row.ready !== null && row.ready !== undefined) node.ready = json(row.ready) as NodeReadiness;
  return node;
}

/** A node's readiness as stored: JSON text of its whole-number counts (both back ends). */
export function readinessText(ready: NodeReadiness | undefined): string | null {
  return ready === undefined ? null : toJsonText(ready, "Node readiness");
}

export function actionFromRow(row: Row): StoredAction {
  return {
    ...(row.seq !== undefined && row.seq !== null ? { seq: num(row.seq) } : {}),
    method: String(row.method),
    parameters: json(row.parameters) as Record<string, unknown>,
    result: json(row.result) as Record<string, unknown>,
    timestamp: num(row.started_at),
    endTime: optionalNum(row.ended_at),
    pageUrl: String(row.page_url),
    inputTokens: optionalNum(row.input_tokens),
    outputTokens: optionalNum(row.output_tokens),
    timeMs: optionalNum(row.time_ms),
    cost: optionalNum(row.cost),
  };
}

/**
 * The values of a replay_actions insert, in the order of the columns both stores name:
 * session_id, method, parameters, result, started_at, ended_at, page_url, input_tokens,
 * output_tokens, time_ms, cost. The action is redacted on the way (prepareAction).
 */
export function actionRowValues(sessionId: string, action: NewReplayAction): (string | number | null)[] {
  const stored = prepareAction(action);
  return [
    sessionId,
    stored.method,
    toJsonText(stored.parameters, "Action parameters"),
    toJsonText(stored.result, "Action result"),
    stored.timestamp,
    stored.endTime,
    stored.pageUrl,
    stored.inputTokens,
    stored.outputTokens,
    stored.timeMs,
    stored.cost,
  ];
}

/** A stored action as the session page reads it (RecordedAction). */
export function recordedAction(stored: StoredAction): RecordedAction {
  return { seq: stored.seq ?? 0, pageUrl: stored.pageUrl, ...toReplayAction(stored) };
}
