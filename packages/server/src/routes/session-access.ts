// Loading the session a request names, for the caller's project only. Another project's session
// answers exactly like one that does not exist, so ids cannot be probed across tenants.

import type { AuthContext } from "../auth.ts";
import { sessionElsewhere, sessionEnded, sessionNotFound } from "../errors.ts";
import type { SessionRecord, Store } from "../store/store.ts";

export async function loadOwnSession(store: Store, auth: AuthContext, id: string): Promise<SessionRecord> {
  const session = await store.getSession(id);
  if (!session || session.projectId !== auth.projectId) throw sessionNotFound(id);
  return session;
}

/** As loadOwnSession, and 410 SESSION_ENDED when it has ended. */
export async function loadActiveSession(store: Store, auth: AuthContext, id: string): Promise<SessionRecord> {
  const session = await loadOwnSession(store, auth, id);
  if (session.status !== "active") throw sessionEnded(id);
  return session;
}

/**
 * As loadActiveSession, for a request that acts on the session: it must run on this node
 * (`nodeId`). A session of another node whose lease is live answers 409 SESSION_ELSEWHERE, and is
 * neither touched nor ended from here; one whose node's lease lapsed (a node killed or cut off) is
 * ended now, with the rest of that node's sessions, and answers 410.
 */
export async function loadServedSession(
  store: Store,
  auth: AuthContext,
  id: string,
  nodeId: string | undefined,
): Promise<SessionRecord> {
  const session = await loadActiveSession(store, auth, id);
  if (nodeId === undefined || session.nodeId === undefined || session.nodeId === nodeId) return session;
  if (await store.nodeIsLive(session.nodeId)) throw sessionElsewhere(id, session.nodeId);
  // Unless that node took its lease again first (the store serialises the two): then it keeps it.
  await store.reclaimLapsedNodes({ except: nodeId });
  if ((await store.getSession(id))?.status === "active") throw sessionElsewhere(id, session.nodeId);
  throw sessionEnded(id, "node lost");
}
