// The act wire, declared once: an Action (spec 2.7) and an ActResult (spec 2.8) as zod schemas.
// The library's types are inferred from them (types.ts re-exports Action and ActResult), the
// service builds its request and response schemas, and so its OpenAPI document, from the same
// declaration (wireSchemas(doc) with its own registry's `doc`), and the REMOTE client sends what
// they describe (actionOnTheWire). Data only: zod and nothing of the library.
//
// An Action travels with every field present; act(action) lets `method` and `arguments` be left
// out and fills them in the same way: click, and none.

import { z } from "zod";

/** Attaches a description to a schema where descriptions are kept (the service's OpenAPI registry). */
export type WireDoc = <T extends z.ZodType>(schema: T, description: string) => T;

const undocumented: WireDoc = (schema) => schema;

/**
 * The wire shapes, built with `doc` for their descriptions: the library builds them once without
 * (for its types), the service once with its registry's (for its document). Each call builds new
 * schema objects, so one builder's registry never sees the other's.
 */
export function wireSchemas(doc: WireDoc = undocumented) {
  const selector = () => doc(z.string(), "XPath (as observe returns it) or another selector kind.");
  const description = () =>
    doc(z.string(), "What the element is and what acting on it does; used for self-healing.");

  /** Spec 2.7 as act returns it: every field present. */
  const Action = z.object({
    /** XPath (from observe), or any selector kind for act input. */
    selector: selector(),
    /** What the element is and what acting on it does; used to re-find it when the page changed. */
    description: description(),
    /** `click`, `fill`, `type`, `press`, `hover`, `selectOption`, `check`, `uncheck`, `scrollTo`, ... */
    method: doc(z.string(), "click, fill, type, press, hover, selectOption, check, uncheck, scrollTo, ..."),
    arguments: z.array(z.string()),
  });

  /** Spec 2.7 as act takes it: method defaults to click and arguments to [], as the reference's service does. */
  const ActionInput = z.object({
    selector: selector(),
    description: description(),
    method: doc(
      z.string().default("click"),
      "Default `click`. click, fill, type, press, hover, selectOption, ...",
    ),
    arguments: doc(z.array(z.string()).default([]), "Default []."),
    backendNodeId: doc(
      z.number().int().optional(),
      "Accepted for compatibility with the reference's clients and not used: the element is found by selector.",
    ),
  });

  /** Spec 2.7 as observe returns it (and as the library's act takes it): method and arguments may be left out. */
  const ObservedAction = z.object({
    /** XPath (from observe), or any selector kind for act input. */
    selector: doc(z.string(), "XPath of the element."),
    /** What the element is and what acting on it does; used to re-find it when the page changed. */
    description: doc(z.string(), "Human-readable description of the element and its purpose."),
    /** `click`, `fill`, `type`, `press`, `hover`, `selectOption`, `check`, `uncheck`, `scrollTo`, ... */
    method: z.string().optional(),
    arguments: doc(
      z.array(z.string()).optional(),
      "May hold %variableName% placeholders when variables were given.",
    ),
  });

  const CacheStatus = doc(
    z.enum(["HIT", "MISS"]),
    "HIT: served from the server cache, no model tokens used. MISS: computed fresh and cached.",
  );

  /** Spec 2.8, with the actions as `action` describes them. */
  const actResult = <A extends z.ZodType>(action: A) =>
    z.object({
      success: z.boolean(),
      message: z.string(),
      actionDescription: doc(z.string(), "The instruction that was used."),
      actions: z.array(action).optional(),
      /** Present only in REMOTE mode with server caching on. */
      cacheStatus: CacheStatus.optional(),
    });

  return {
    Action,
    ActionInput,
    ObservedAction,
    CacheStatus,
    /** Spec 2.8 on the wire: each action with every field. */
    ActResult: actResult(Action),
    /** Spec 2.8 as the library returns it: actions as act and observe write them. */
    LibraryActResult: actResult(ObservedAction),
  };
}

const shapes = wireSchemas();

/** An Action (spec 2.7): what observe returns and act takes. */
export type Action = z.output<typeof shapes.ObservedAction>;

/** What act returns (spec 2.8). */
export type ActResult = z.output<typeof shapes.LibraryActResult>;

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
