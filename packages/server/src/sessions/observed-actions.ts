// The Actions a session's observe answered with, so that act(action) with one of them is checked
// as in LOCAL mode. There the library remembers which element each Action it returned was listed
// for (by object), and act refuses one whose selector now leads to a different element (or finds
// it again with selfHeal). Over HTTP the client sends a copy, so the session keeps the originals
// here and act uses the original for a copy that is equal to it in every field.

import type { Action } from "deckhand";

/** Most Actions a session remembers (the oldest go first). */
const LIMIT = 1000;

/** Equal for an Action and its JSON copy (method and arguments as the wire fills them in). */
function keyOf(action: Action): string {
  return JSON.stringify([
    action.selector,
    action.description,
    action.method ?? "click",
    action.arguments ?? [],
  ]);
}

export class ObservedActions {
  private readonly byKey = new Map<string, Action>();

  remember(actions: readonly Action[]): void {
    for (const action of actions) {
      const key = keyOf(action);
      this.byKey.delete(key);
      this.byKey.set(key, action);
    }
    for (const key of this.byKey.keys()) {
      if (this.byKey.size <= LIMIT) break;
      this.byKey.delete(key);
    }
  }

  /** The Action observe returned that `action` is a copy of, if any. */
  original(action: Action): Action | undefined {
    return this.byKey.get(keyOf(action));
  }
}
