// Scripts that Deckhand installs in a page's execution context on first use and then calls by
// method name. A script is composed of modules: each module is a self-contained install function
// (it is sent as source text) that receives the installed objects of the modules it needs, so that
// in-page helpers (shadow roots, XPath, roles, names) are written once and kept in their own files.

/** A unit of in-page code: `install` receives the installed objects of `dependencies`, in order. */
export interface InjectedModule<T> {
  readonly install: (...dependencies: never[]) => T;
  readonly dependencies: readonly InjectedModule<unknown>[];
}

export interface InjectedScript<T> {
  readonly name: string;
  /** An expression that evaluates to the installed object. */
  readonly source: string;
  /** Type only: the installed object's shape. */
  readonly _type?: T;
}

type Modules<D extends unknown[]> = { [K in keyof D]: InjectedModule<D[K]> };

/** A module: `install` must be self-contained (no imports, nothing from outside its body). */
export function defineInjectedModule<T, D extends unknown[] = []>(
  install: (...dependencies: D) => T,
  ...dependencies: Modules<D>
): InjectedModule<T> {
  return { install: install as unknown as (...dependencies: never[]) => T, dependencies };
}

/**
 * A script: its main module with its dependencies. Each module is installed once per script, in
 * dependency order, and shared by every module that needs it (a module that keeps state, such as
 * the fields holding typed secrets, has one copy).
 */
export function defineInjectedScript<T, D extends unknown[] = []>(
  name: string,
  install: (...dependencies: D) => T,
  ...dependencies: Modules<D>
): InjectedScript<T> {
  const main = defineInjectedModule(install, ...dependencies);
  const order: InjectedModule<unknown>[] = [];
  const visit = (module: InjectedModule<unknown>, path: InjectedModule<unknown>[]) => {
    if (order.includes(module)) return;
    if (path.includes(module))
      throw new Error(`The in-page modules of ${name} depend on each other in a circle.`);
    for (const dependency of module.dependencies) visit(dependency, [...path, module]);
    order.push(module);
  };
  visit(main as InjectedModule<unknown>, []);
  const lines = order.map((module, i) => {
    const args = module.dependencies.map((d) => `m${order.indexOf(d)}`).join(", ");
    return `const m${i} = (${module.install.toString()})(${args});`;
  });
  return { name, source: `(() => {\n${lines.join("\n")}\nreturn m${order.length - 1};\n})()` };
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
