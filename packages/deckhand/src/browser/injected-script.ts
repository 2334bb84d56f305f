// A script that Deckhand installs in a page's execution context on first use and then calls by
// method name. `install` must be self-contained (it is sent as source text) and return an object
// of functions.

export interface InjectedScript<T> {
  readonly name: string;
  /** An expression that evaluates to the installed object. */
  readonly source: string;
  /** Type only: the installed object's shape. */
  readonly _type?: T;
}

/**
 * `install` receives, as arguments, the installed objects of `dependencies` (each a
 * self-contained install function too), so that shared in-page helpers are written once.
 */
export function defineInjectedScript<T, D extends unknown[] = []>(
  name: string,
  install: (...dependencies: D) => T,
  ...dependencies: { [K in keyof D]: () => D[K] }
): InjectedScript<T> {
  const args = dependencies.map((d) => `(${d.toString()})()`).join(", ");
  return { name, source: `(${install.toString()})(${args})` };
}

/** The methods of an injected object, for typed `Frame.invoke` calls. */
export type InjectedMethod<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never;
}[keyof T] &
  string;

/** Arguments as the page receives them: element handles stand in for elements. */
type Handleize<T> = T extends Element | ShadowRoot ? ElementHandle : T;
export type HandleArgs<A extends unknown[]> = { [I in keyof A]: Handleize<A[I]> };

/** A reference to a DOM node (or other object) living in one frame's execution context. */
export class ElementHandle {
  readonly objectId: string;
  readonly frameId: string;

  constructor(objectId: string, frameId: string) {
    this.objectId = objectId;
    this.frameId = frameId;
  }
}
