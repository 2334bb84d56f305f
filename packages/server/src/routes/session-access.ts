// Loading the session a request names, for the caller's project only. Another project's session
// answers exactly like one that does not exist, so ids cannot be probed across tenants.

import type { AuthContext } from "../auth.ts";
import { sessionEnded, sessionNotFound } from "../errors.ts";
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
