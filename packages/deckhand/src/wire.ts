// The wire form of the data the library and the service exchange, written once for both: an
// Action travels with every field of spec 2.7 present (act(action) lets `method` and `arguments`
// be left out, and fills them in the same way: click, and none).

import type { Action, ActResult } from "./types.ts";

/** An Action with every field present: a missing method is click, missing arguments are none. */
export function actionOnTheWire(action: Action): Required<Action> {
  return {
    selector: action.selector,
    description: action.description ?? "",
    method: action.method ?? "click",
    arguments: action.arguments ?? [],
  };
}

/** An ActResult (spec 2.8) whose actions have every field of spec 2.7. */
export function actResultOnTheWire<R extends ActResult>(result: R): R & { actions?: Required<Action>[] } {
  const { actions, ...rest } = result;
  return (actions ? { ...rest, actions: actions.map(actionOnTheWire) } : rest) as R & {
    actions?: Required<Action>[];
  };
}
