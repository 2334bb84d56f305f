// What the Actions observe returned pointed at, so that act(action) can check its selector still
// leads there. Keyed by the Action's content (selector, description, method, arguments, as the
// wire fills them in), not by object identity: a copy (`{ ...action }`, JSON, an Action that
// crossed HTTP to the service) is the same Action and gets the same check.

import type { Action } from "../types.ts";

/** What an observed Action pointed at. */
export interface ObservedTarget {
  /** Unknown for large listings (observe() of a whole page), where role and name are checked instead. */
  backendNodeId: number | undefined;
  role: string;
  name: string;
  url: string;
}

/** Most Actions remembered (the oldest go first). */
const LIMIT = 1_000;

/** Equal for an Action and any copy of it (method and arguments as the wire fills them in). */
export function actionKey(action: Action): string {
  return JSON.stringify([
    action.selector,
    action.description ?? "",
    action.method ?? "click",
    action.arguments ?? [],
  ]);
}

export class ObservedTargets {
  private readonly byKey = new Map<string, ObservedTarget>();

  remember(action: Action, target: ObservedTarget): void {
    const key = actionKey(action);
    this.byKey.delete(key);
    this.byKey.set(key, target);
    if (this.byKey.size > LIMIT) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** What observe saw for this Action (or a copy of it), if it returned it. */
  find(action: Action): ObservedTarget | undefined {
    return this.byKey.get(actionKey(action));
  }
}
