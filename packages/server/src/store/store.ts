// What the service keeps between requests and across restarts: API keys, sessions, the replay
// record of every session, and the server-side action cache. One interface, two back ends
// (embedded SQLite, PostgreSQL); test/store.contract.ts holds both to the same behaviour.
//
// Units: every timestamp is milliseconds since the Unix epoch (UTC); every duration, `endTime -
// timestamp` and `timeMs` is milliseconds.

import type { ReplayTokenUsage, SessionReplay } from "deckhand";

/** Who a request is, once its API key is verified. */
export interface KeyIdentity {
  keyId: string;
  projectId: string;
}

/** An API key as listed: never the key itself nor its hash. */
export interface KeyInfo {
  id: string;
  projectId: string;
  name?: string;
  createdAt: number;
  /** Set once the key is revoked; a revoked key never verifies again. */
  revokedAt?: number;
}

/** A newly created key. `key` is the only time the plaintext exists outside the caller. */
export interface CreatedKey {
  id: string;
  key: string;
  projectId: string;
  name?: string;
  createdAt: number;
}

export type SessionStatus = "active" | "ended";

export interface SessionRecord {
  /** A UUID. */
  id: string;
  projectId: string;
  keyId: string;
  /** The start parameters, as the route chose to keep them (secrets already removed). */
  params: Record<string, unknown>;
  /** The client's `x-language` header at start; the replay's `clientLanguage`. */
  clientLanguage?: string;
  status: SessionStatus;
  createdAt: number;
  lastActivityAt: number;
  endedAt?: number;
  /** Why it ended (`ended by the client`, `idle timeout`, `node lost`, ...); absent while active. */
  endReason?: string;
  /** The service node that runs it (holds its lease); absent on rows written before leases. */
  nodeId?: string;
}

export interface NewSession {
  /** Defaults to a fresh UUID. */
  id?: string;
  projectId: string;
  keyId: string;
  params?: Record<string, unknown>;
  clientLanguage?: string;
  /** Defaults to now. */
  createdAt?: number;
  /** The service node that runs it. */
  nodeId?: string;
}

/** What a node tells the others about itself when it takes its lease (cluster mode). */
export interface NodeInfo {
  /** Where the other nodes reach it (`--advertise-url`): requests for its sessions are forwarded there. */
  advertiseUrl?: string;
  /** Its `--max-sessions`: placement reads its free capacity from this and the session table. */
  maxSessions?: number;
  /** What it can start now without launching a browser (kept current with its lease: see renewNode). */
  ready?: NodeReadiness;
}

/**
 * The sessions a node can start now without waiting for a browser to launch, as it last published
 * them: placement prefers such a node (a launch costs a second or more; a warm browser or room in
 * a project's own browser, milliseconds).
 */
export interface NodeReadiness {
  /** For a project with no browser on the node: its warm browsers' places. */
  anyProject: number;
  /** For a project with browsers on the node, the room in them (added to `anyProject`); only projects with room. */
  projects: Record<string, number>;
}

/** A node as the others see it in the store. */
export interface ClusterNode {
  id: string;
  /** Absent: the node cannot be forwarded to (it runs without --advertise-url). */
  advertiseUrl?: string;
  maxSessions?: number;
  /** Whether its lease is live. */
  live: boolean;
  /** It is stopping (SIGTERM): it takes no new sessions. */
  draining: boolean;
  /** Its active sessions, from the session table. */
  activeSessions: number;
  /**
   * Its active sessions of the project placement asked about (listLiveNodes with a project), from
   * the session table: such a node runs that project's browser, as soon as a start there commits.
   */
  projectSessions?: number;
  /** What it last published it can start without a browser launch; absent: nothing (or never published). */
  ready?: NodeReadiness;
}

/** Why admitSession refused a new session. */
export type AdmissionRefusal = "node" | "project";

/** Spec 2.6 (the library's ReplayTokenUsage). */
export type TokenUsage = ReplayTokenUsage;

export interface NewReplayAction {
  method: string;
  /** Spec 2.5: an object. */
  parameters: Record<string, unknown>;
  /** Spec 2.5: an object (wrap an array result, e.g. observe's, as `{ actions: [...] }`). */
  result: Record<string, unknown>;
  /** Start of the operation, epoch milliseconds. */
  timestamp: number;
  /** End of the operation, epoch milliseconds. */
  endTime?: number;
  /** The URL of the page the operation ran on; consecutive actions on one URL form one replay page. */
  pageUrl: string;
  tokenUsage?: TokenUsage;
}

// The replay record's shape (spec 2.3-2.5) is the library's, declared once: ReplayAction,
// ReplayPage, and SessionReplay (here ReplayResult).
export type { ReplayAction, ReplayPage } from "deckhand";
export type ReplayResult = SessionReplay;

/** When a step's screenshot was taken: before the operation (acts) or after it (every operation). */
export type ScreenshotKind = "before" | "after";

/** One recorded operation as the session page reads it: the replay's action with its place in the record. */
export interface RecordedAction {
  /** Its position in the session's record (increasing in the order the actions were appended). */
  seq: number;
  method: string;
  parameters: Record<string, unknown>;
  result: Record<string, unknown>;
  timestamp: number;
  endTime?: number;
  pageUrl: string;
  tokenUsage?: TokenUsage;
}

/** A session of a project with what its record adds up to (the project dashboard's rows). */
export interface SessionSummary extends SessionRecord {
  /** Recorded operations. */
  steps: number;
  /** Pages as the replay groups them (consecutive steps on one URL are one page). */
  pages: number;
  inputTokens: number;
  outputTokens: number;
  /** Model cost as recorded (the caller's currency unit, usually US dollars). */
  cost: number;
  /** Steps answered from the server cache (`cacheStatus: HIT`). */
  cacheHits: number;
  /** Steps whose result records a failure (`success: false`). */
  failures: number;
}

/** One UTC day of a project's use: sessions started that day, and the steps run that day. */
export interface DailyTotals {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  sessions: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  cacheHits: number;
}

/** A stored screenshot, without its bytes. */
export interface ScreenshotInfo {
  actionSeq: number;
  kind: ScreenshotKind;
  /** Size of the JPEG. */
  bytes: number;
}

export interface Store {
  /** `sqlite` or `postgres`, and where: for logs and `--help`-level diagnostics. */
  readonly description: string;

  createKey(input?: { name?: string; projectId?: string }): Promise<CreatedKey>;
  /** The key's identity, or null when the key is unknown, malformed or revoked. */
  verifyKey(key: string): Promise<KeyIdentity | null>;
  /** Every key, oldest first, revoked ones included (with `revokedAt`). */
  listKeys(): Promise<KeyInfo[]>;
  /** True when an active key with this id was revoked now. */
  revokeKey(id: string): Promise<boolean>;
  /** Which of these key ids are revoked (cheap: asked every fraction of a second while keys hold connections). */
  revokedKeyIds(ids: readonly string[]): Promise<string[]>;

  createSession(input: NewSession): Promise<SessionRecord>;
  getSession(id: string): Promise<SessionRecord | null>;
  /** Records activity on an active session (idle timeouts count from here). */
  touchSession(id: string, at?: number): Promise<void>;
  /** True when the session was active and is now ended (`reason` kept for the dashboard). */
  endSession(id: string, at?: number, reason?: string): Promise<boolean>;
  /** Active sessions, oldest first; optionally only one project's. */
  listActiveSessions(filter?: { projectId?: string }): Promise<SessionRecord[]>;
  countActiveSessions(filter?: { projectId?: string }): Promise<number>;
  /**
   * One project's sessions with their totals, active ones first, then the most recently started:
   * at most `limit` (default 50). Never another project's.
   */
  listProjectSessions(projectId: string, options?: { limit?: number }): Promise<SessionSummary[]>;
  /** One project's totals per UTC day since `since` (epoch ms), oldest day first; days with nothing left out. */
  projectDailyTotals(projectId: string, since: number): Promise<DailyTotals[]>;

  // ---- node leases: which service node runs which sessions, and whether it is still there ----
  // Times are the database's own clock where it has one (PostgreSQL), so that nodes whose clocks
  // disagree still agree on when a lease lapsed.

  /**
   * Takes the lease of a service node for `ttlMs` from now (again, if it had lapsed), with what the
   * other nodes need to know of it (its address, its capacity).
   */
  registerNode(nodeId: string, ttlMs: number, info?: NodeInfo): Promise<void>;
  /** A node by id (lapsed ones too, until a reclaim forgets them), with its active sessions counted. */
  getNode(nodeId: string): Promise<ClusterNode | null>;
  /**
   * The nodes whose lease is live, with their active sessions counted (placement reads this), and
   * with `forProject`, their active sessions of that project too (`projectSessions`).
   */
  listLiveNodes(forProject?: string): Promise<ClusterNode[]>;
  /** Marks a node as stopping: placement sends it nothing new. */
  setNodeDraining(nodeId: string): Promise<void>;
  /**
   * Creates the session if fewer than `maxSessions` are active (on `input.nodeId` alone when
   * `perNode`, the cluster's placement; in the whole store otherwise) and the project has fewer than
   * `maxPerProject` active across every node; otherwise says which limit is reached. Count and
   * insert are one step for every node of the store (a transaction under a lock on PostgreSQL), so
   * concurrent starts on several nodes cannot all take the last place.
   */
  admitSession(
    input: NewSession,
    limits: { maxSessions: number; perNode: boolean; maxPerProject: number },
  ): Promise<{ session: SessionRecord } | { refused: AdmissionRefusal }>;
  /**
   * Extends a live lease to `ttlMs` from now, and with it what the node can start without a launch
   * (`ready`, when given). False when it had lapsed or is unknown (another node may have ended its
   * sessions already): the node must let go of every session it runs.
   */
  renewNode(nodeId: string, ttlMs: number, ready?: NodeReadiness): Promise<boolean>;
  /**
   * What a node can start now without launching a browser, published between renewals when it
   * changes (a warm browser ready or taken, a session started or ended), so that placement on
   * other nodes sees it within a round trip rather than a renewal period.
   */
  setNodeReady(nodeId: string, ready: NodeReadiness): Promise<void>;
  /**
   * Takes the lease of a node whose renewal found it lapsed (`renewNode` false), and answers which
   * of `sessionIds` (the sessions it runs) are no longer active: another node reclaimed them while
   * the lease was lapsed, so the node must end them. Serialised with `reclaimLapsedNodes`: every
   * session it does not answer stays the node's, since no reclaim can end it once this returns.
   */
  resumeNode(nodeId: string, ttlMs: number, sessionIds: readonly string[]): Promise<string[]>;
  /** Whether the node's lease is live. */
  nodeIsLive(nodeId: string): Promise<boolean>;
  /** Ends the active sessions of every node whose lease lapsed, and forgets those nodes. */
  reclaimLapsedNodes(options?: {
    /** The calling node: never reclaimed by itself (its own renewal decides, see resumeNode). */
    except?: string;
  }): Promise<{ nodeIds: string[]; sessionIds: string[] }>;
  /** Forgets a node (it stopped cleanly, its sessions ended). */
  removeNode(nodeId: string): Promise<void>;

  /** Appends to the session's replay record; resolves to the action's `seq` (see RecordedAction). */
  appendAction(sessionId: string, action: NewReplayAction): Promise<number>;
  /** The session's replay (spec 2.3), or null when there is no such session. */
  getReplay(sessionId: string): Promise<ReplayResult | null>;
  /** The session's actions in order, each with its seq (the session page's timeline). */
  listActions(sessionId: string): Promise<RecordedAction[]>;

  // ---- per-step screenshots (JPEG): files under the data directory (SQLite), rows (PostgreSQL) ----

  /** Keeps a screenshot of an action (replacing one of the same kind). */
  putScreenshot(sessionId: string, actionSeq: number, kind: ScreenshotKind, jpeg: Buffer): Promise<void>;
  getScreenshot(sessionId: string, actionSeq: number, kind: ScreenshotKind): Promise<Buffer | null>;
  /** The session's screenshots, in action order. */
  listScreenshots(sessionId: string): Promise<ScreenshotInfo[]>;
  /** Deletes every screenshot taken before `before` (epoch ms); resolves to how many went. */
  pruneScreenshots(before: number): Promise<number>;

  /**
   * The service's secret of this name (e.g. the key that signs session links), created at random
   * the first time it is asked for, the same for every node on the store and across restarts.
   */
  serviceSecret(name: string): Promise<Buffer>;

  /** The cached value, or undefined. A project only ever sees its own entries. */
  cacheGet(projectId: string, key: string): Promise<unknown>;
  /** Stores any JSON-serialisable value, replacing an existing entry. */
  cachePut(projectId: string, key: string, value: unknown): Promise<void>;
  cacheDelete(projectId: string, key: string): Promise<boolean>;

  close(): Promise<void>;
}
