// Scripts that Deckhand installs in a page's execution context on first use and then calls by
// method name. A script is composed of modules: each module is a self-contained install function
// (it is sent as source text) that receives the installed objects of the modules it needs, so that
// in-page helpers (shadow roots, XPath, roles, names) are written once and kept in their own files.
//
// A script that only some operations need (the record-time locator check) is an extension of
// another script: it is installed on that script's object when first called, reusing the modules
// the base already installed (and their state), so that the code every document compiles stays
// what every document needs.

/** A unit of in-page code: `install` receives the installed objects of `dependencies`, in order. */
export interface InjectedModule<T> {
  readonly install: (...dependencies: never[]) => T;
  readonly dependencies: readonly InjectedModule<unknown>[];
}

export interface InjectedScript<T> {
  readonly name: string;
  /**
   * A script of its own: an expression that evaluates to the installed object. An extension: a
   * function declaration that, called on its base's installed object, returns its own.
   */
  readonly source: string;
  /** The main module: the one whose object is the script's (an extension may depend on it). */
  readonly main: InjectedModule<T>;
  /** Every module of the script, in the order they are installed. */
  readonly modules: readonly InjectedModule<unknown>[];
  /** For an extension, the script it is installed on. */
  readonly base?: InjectedScript<unknown>;
}

type Modules<D extends unknown[]> = { [K in keyof D]: InjectedModule<D[K]> };

/**
 * Where an installed script keeps its modules' objects, in installation order, for the extensions
 * installed on it. The installed object is reachable only through the protocol, never by the page.
 */
const MODULES_KEY = 'Symbol.for("deckhand.modules")';

/** A module: `install` must be self-contained (no imports, nothing from outside its body). */
export function defineInjectedModule<T, D extends unknown[] = []>(
  install: (...dependencies: D) => T,
  ...dependencies: Modules<D>
): InjectedModule<T> {
  return { install: install as unknown as (...dependencies: never[]) => T, dependencies };
}

/** `main` and the modules it needs, each once, dependencies first. */
function installOrder(name: string, main: InjectedModule<unknown>): InjectedModule<unknown>[] {
  const order: InjectedModule<unknown>[] = [];
  const visit = (module: InjectedModule<unknown>, path: InjectedModule<unknown>[]) => {
    if (order.includes(module)) return;
    if (path.includes(module))
      throw new Error(`The in-page modules of ${name} depend on each other in a circle.`);
    for (const dependency of module.dependencies) visit(dependency, [...path, module]);
    order.push(module);
  };
  visit(main, []);
  return order;
}

/**
 * A module's source as the page compiles it: without its indentation, blank lines and whole-line
 * comments (every document compiles the scripts it is sent, so their size is paid in each). Line
 * breaks stay where they are, so no statement is joined to another. Only a line break inside a
 * literal could change meaning: a source with a line that leaves a template literal open (an odd
 * number of backticks), continues a string (a trailing backslash) or opens a block comment after
 * code is sent as it is.
 */
export function compactSource(source: string): string {
  const code: string[] = [];
  let inComment = false;
  for (const line of source.split("\n")) {
    let text = line.trim();
    if (inComment || text.startsWith("/*")) {
      const end = text.indexOf("*/", inComment ? 0 : 2);
      inComment = end < 0;
      if (inComment) continue;
      text = text.slice(end + 2).trim();
    }
    if (text === "" || text.startsWith("//")) continue;
    const opensComment = text.lastIndexOf("/*") > text.lastIndexOf("*/");
    if ((text.split("`").length - 1) % 2 === 1 || text.endsWith("\\") || opensComment) return source;
    code.push(text);
  }
  return code.join("\n");
}

/**
 * The statements that install `order` as `m0`, `m1`, ...: a module `base` has installed already is
 * its object (on the base's object, `this` for an extension), any other is its own source, run.
 */
function installLines(order: readonly InjectedModule<unknown>[], base?: InjectedScript<unknown>): string[] {
  const lines = order.map((module, i) => {
    const at = base ? base.modules.indexOf(module) : -1;
    if (at >= 0) return `const m${i} = this[${MODULES_KEY}][${at}];`;
    const args = module.dependencies.map((d) => `m${order.indexOf(d)}`).join(", ");
    return `const m${i} = (${compactSource(module.install.toString())})(${args});`;
  });
  const all = order.map((_, i) => `m${i}`).join(", ");
  lines.push(`Object.defineProperty(m${order.length - 1}, ${MODULES_KEY}, { value: [${all}] });`);
  return lines;
}

/** A script of `main` and its dependencies, or, with `base`, an extension of that script. */
function composeScript<T>(
  name: string,
  main: InjectedModule<T>,
  base?: InjectedScript<unknown>,
): InjectedScript<T> {
  const order = installOrder(name, main as InjectedModule<unknown>);
  const body = `${installLines(order, base).join("\n")}\nreturn m${order.length - 1};`;
  const script = { name, main, modules: order };
  return base
    ? { ...script, base, source: `function() {\n${body}\n}` }
    : { ...script, source: `(() => {\n${body}\n})()` };
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
  return composeScript(name, defineInjectedModule(install, ...dependencies));
}

/**
 * An extension of `base`: installed on the base's object in the same execution context the first
 * time one of its methods is called (one evaluation, in no document that does not call it). The
 * modules it shares with the base, the base's main module included, are the base's own objects
 * (the same state); only the others are sent and compiled.
 */
export function extendInjectedScript<T, D extends unknown[] = []>(
  base: InjectedScript<unknown>,
  name: string,
  install: (...dependencies: D) => T,
  ...dependencies: Modules<D>
): InjectedScript<T> {
  return composeScript(name, defineInjectedModule(install, ...dependencies), base);
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
