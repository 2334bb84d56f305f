// A frame of a page: the main frame, an in-process iframe, or an out-of-process iframe (OOPIF)
// with a protocol session of its own. A frame knows its session, its parent and the execution
// context of its main world, and runs Deckhand's injected scripts there.

import type { Protocol } from "devtools-protocol";
import { ServiceEvalError, ServiceIframeError, ServiceTargetClosedError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";
import { domRuntime } from "./in-page.ts";
import {
  ElementHandle,
  type HandleArgs,
  type InjectedMethod,
  type InjectedScript,
} from "./injected-script.ts";
import type { Locator } from "./locator.ts";
import type { Page } from "./page.ts";

const CONTEXT_LOST =
  /Cannot find context with specified id|Execution context was destroyed|Inspected target navigated or closed/;
/** An object id of a document that is gone (its context was destroyed with it). */
const OBJECT_LOST = /Could not find object with given id|Cannot find context/;

export class Frame {
  readonly id: string;
  readonly page: Page;
  /** The session this frame's document lives in (its own for an OOPIF, else its page's). */
  session: CdpSession;
  parentId: string | undefined;
  url = "";
  name = "";
  /** Set while the frame's document is loading a new navigation. */
  loaderId = "";
  private contextId: number | undefined;
  private contextWaiters: { resolve(id: number): void; reject(error: Error): void }[] = [];
  private readonly installed = new Map<string, Promise<string>>();
  detached = false;

  constructor(page: Page, id: string, session: CdpSession, parentId: string | undefined) {
    this.page = page;
    this.id = id;
    this.session = session;
    this.parentId = parentId;
  }

  get parent(): Frame | undefined {
    return this.parentId ? this.page.frameById(this.parentId) : undefined;
  }

  /** Child frames, in-process and out-of-process alike. */
  children(): Frame[] {
    return this.page.frames().filter((f) => f.parentId === this.id);
  }

  /** Whether this frame lives in another renderer process than its parent. */
  get isOutOfProcess(): boolean {
    const parent = this.parent;
    return parent !== undefined && parent.session !== this.session;
  }

  // ---------- execution contexts ----------

  /** @internal */
  setExecutionContext(id: number | undefined): void {
    this.contextId = id;
    this.installed.clear();
    if (id === undefined) return;
    const waiters = this.contextWaiters;
    this.contextWaiters = [];
    for (const w of waiters) w.resolve(id);
    this.prewarm();
  }

  /**
   * @internal Installs the browser's prewarmed scripts now. Installing a script costs the page a
   * compile (milliseconds): done as the document appears, it is ready by the time the first
   * operation asks for it, instead of on that operation's time.
   */
  prewarm(): void {
    const id = this.contextId;
    if (id === undefined) return;
    for (const script of this.page.context.browser.prewarmed)
      this.injectedObject(script, id).catch(() => undefined);
  }

  /** Whether a document is ready to run scripts right now. */
  get hasDocument(): boolean {
    return this.contextId !== undefined;
  }

  /** @internal */
  hasExecutionContext(id: number): boolean {
    return this.contextId === id;
  }

  /** @internal */
  markDetached(): void {
    this.detached = true;
    this.contextId = undefined;
    this.installed.clear();
    const waiters = this.contextWaiters;
    this.contextWaiters = [];
    const error = this.gone();
    for (const w of waiters) w.reject(error);
  }

  private gone(): ServiceTargetClosedError {
    return new ServiceTargetClosedError(`The frame ${this.url || this.id} was detached from the page.`);
  }

  /** The main-world execution context, waiting for one while a navigation replaces it. */
  executionContext(timeoutMs = 10_000): Promise<number> {
    if (this.contextId !== undefined) return Promise.resolve(this.contextId);
    // A closed tab or a dead browser will never give the frame a document: say so at once.
    if (this.session.detachedError) return Promise.reject(this.session.detachedError);
    if (this.detached) return Promise.reject(this.gone());
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        offDetached();
        this.contextWaiters = this.contextWaiters.filter((w) => w !== waiter);
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new ServiceIframeError(
            `The frame ${this.url || this.id} has no document to run scripts in (waited ${timeoutMs} ms).`,
          ),
        );
      }, timeoutMs);
      const offDetached = this.session.onDetached((error) => {
        finish();
        reject(error);
      });
      const waiter = {
        resolve: (id: number) => {
          finish();
          resolve(id);
        },
        reject: (error: Error) => {
          finish();
          reject(error);
        },
      };
      this.contextWaiters.push(waiter);
    });
  }

  // ---------- evaluation ----------

  /**
   * Runs a function or an expression in the frame's main world and returns its JSON-able result.
   * A page-side exception becomes ServiceEvalError with the page's message.
   */
  async evaluate<R = unknown, A = unknown>(
    fnOrExpression: string | ((arg: A) => R | Promise<R>),
    arg?: A,
  ): Promise<R> {
    return this.withContext(async (contextId) => {
      const result =
        typeof fnOrExpression === "string"
          ? await this.session.send("Runtime.evaluate", {
              expression: fnOrExpression,
              contextId,
              returnByValue: true,
              awaitPromise: true,
              userGesture: true,
            })
          : await this.session.send("Runtime.callFunctionOn", {
              functionDeclaration: fnOrExpression.toString(),
              executionContextId: contextId,
              arguments: arg === undefined ? [] : [{ value: arg }],
              returnByValue: true,
              awaitPromise: true,
              userGesture: true,
            });
      if (result.exceptionDetails) throw evalError(result.exceptionDetails);
      return result.result.value as R;
    });
  }

  /** Calls a method of an injected script; element arguments are passed as handles. Result by value. */
  async invoke<T, M extends InjectedMethod<T>>(
    script: InjectedScript<T>,
    method: M,
    ...args: T[M] extends (...a: infer P) => unknown ? HandleArgs<P> : never
  ): Promise<T[M] extends (...a: never[]) => infer R ? Awaited<R> : never> {
    const result = await this.callInjected(script, method, args as unknown[], true);
    return result.value as never;
  }

  /**
   * @internal Like invoke, but only in the document the frame shows now and only if `script` is
   * installed there: undefined when it is not, or when the document goes away meanwhile. It never
   * waits for a next document (as after a click on a link): state kept in the old one is gone
   * with it, and a new one was never asked to hold any.
   */
  async invokeInPlace<T, M extends InjectedMethod<T>>(
    script: InjectedScript<T>,
    method: M,
  ): Promise<(T[M] extends (...a: never[]) => infer R ? Awaited<R> : never) | undefined> {
    const installed = this.contextId === undefined ? undefined : this.installed.get(script.name);
    const objectId = await installed?.catch(() => undefined);
    if (!objectId) return undefined;
    try {
      const response = await this.session.send("Runtime.callFunctionOn", {
        objectId,
        functionDeclaration: `function() { return this[${JSON.stringify(method)}](); }`,
        returnByValue: true,
      });
      if (response.exceptionDetails) throw evalError(response.exceptionDetails);
      return response.result.value as never;
    } catch (error) {
      const gone =
        error instanceof Error && (CONTEXT_LOST.test(error.message) || OBJECT_LOST.test(error.message));
      if (gone || this.session.detachedError) return undefined;
      throw error;
    }
  }

  /** Like invoke, for methods that return an element: the result is a handle, or null. */
  async invokeForHandle<T, M extends InjectedMethod<T>>(
    script: InjectedScript<T>,
    method: M,
    ...args: T[M] extends (...a: infer P) => unknown ? HandleArgs<P> : never
  ): Promise<ElementHandle | null> {
    const result = await this.callInjected(script, method, args as unknown[], false);
    if (result.subtype === "null" || !result.objectId) return null;
    return new ElementHandle(result.objectId, this.id);
  }

  /**
   * Like invokeForHandle, for methods that return an element, null, or a failure object: the
   * failure (any object that is not a DOM node) is read by value.
   */
  async invokeForElement<T, M extends InjectedMethod<T>, F>(
    script: InjectedScript<T>,
    method: M,
    ...args: T[M] extends (...a: infer P) => Element | null | F ? HandleArgs<P> : never
  ): Promise<
    ElementHandle | null | Exclude<ReturnType<Extract<T[M], (...a: never[]) => unknown>>, Element | null>
  > {
    const result = await this.callInjected(script, method, args as unknown[], false);
    if (result.subtype === "null" || !result.objectId) return null;
    if (result.subtype === "node") return new ElementHandle(result.objectId, this.id);
    try {
      const { result: value } = await this.session.send("Runtime.callFunctionOn", {
        objectId: result.objectId,
        functionDeclaration: "function() { return this; }",
        returnByValue: true,
      });
      return value.value as never;
    } finally {
      void this.release(result.objectId);
    }
  }

  /** Like invoke, for methods that return an array of elements: one handle per element. */
  async invokeForHandles<T, M extends InjectedMethod<T>>(
    script: InjectedScript<T>,
    method: M,
    ...args: T[M] extends (...a: infer P) => unknown ? HandleArgs<P> : never
  ): Promise<ElementHandle[]> {
    const result = await this.callInjected(script, method, args as unknown[], false);
    if (!result.objectId) return [];
    const { result: props } = await this.session.send("Runtime.getProperties", {
      objectId: result.objectId,
      ownProperties: true,
    });
    void this.release(result.objectId);
    return props
      .filter((p) => /^\d+$/.test(p.name) && p.value?.objectId)
      .map((p) => new ElementHandle(p.value!.objectId!, this.id));
  }

  /** Frees a handle's page-side reference (fire and forget). */
  release(handle: ElementHandle | string): Promise<void> {
    const objectId = typeof handle === "string" ? handle : handle.objectId;
    return this.session.send("Runtime.releaseObject", { objectId }).then(
      () => undefined,
      () => undefined,
    );
  }

  private async callInjected(
    script: InjectedScript<unknown>,
    method: string,
    args: unknown[],
    byValue: boolean,
  ): Promise<Protocol.Runtime.RemoteObject> {
    return this.withContext(async (contextId) => {
      const target = await this.injectedObject(script, contextId);
      const callArgs: Protocol.Runtime.CallArgument[] = [{ value: method }];
      for (const a of args) {
        if (a instanceof ElementHandle) callArgs.push({ objectId: a.objectId });
        else if (a === undefined) callArgs.push({});
        else callArgs.push({ value: a });
      }
      const response = await this.session.send("Runtime.callFunctionOn", {
        objectId: target,
        functionDeclaration: "function(method, ...args) { return this[method](...args); }",
        arguments: callArgs,
        returnByValue: byValue,
        awaitPromise: true,
      });
      if (response.exceptionDetails) throw evalError(response.exceptionDetails);
      return response.result;
    });
  }

  private injectedObject(script: InjectedScript<unknown>, contextId: number): Promise<string> {
    let pending = this.installed.get(script.name);
    if (!pending) {
      const { base } = script;
      const installing = base
        ? // An extension is installed on its base's object (see extendInjectedScript).
          this.injectedObject(base, contextId).then((objectId) =>
            this.session.send("Runtime.callFunctionOn", {
              objectId,
              functionDeclaration: script.source,
              returnByValue: false,
            }),
          )
        : this.session.send("Runtime.evaluate", {
            expression: script.source,
            contextId,
            returnByValue: false,
          });
      pending = installing.then((r) => {
        if (r.exceptionDetails || !r.result.objectId) throw evalError(r.exceptionDetails);
        return r.result.objectId;
      });
      this.installed.set(script.name, pending);
      pending.catch(() => {
        if (this.installed.get(script.name) === pending) this.installed.delete(script.name);
      });
    }
    return pending;
  }

  /** Runs `fn` with the current context id; once more if a navigation destroyed that context meanwhile. */
  private async withContext<R>(fn: (contextId: number) => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      const contextId = await this.executionContext();
      try {
        return await fn(contextId);
      } catch (error) {
        const lost = error instanceof Error && CONTEXT_LOST.test(error.message);
        if (!lost || attempt >= 2) throw error;
        if (this.contextId === contextId) this.setExecutionContext(undefined);
      }
    }
  }

  // ---------- DOM helpers ----------

  /** The protocol's backend node id of a handle (stable for the life of the node). */
  async backendNodeId(handle: ElementHandle): Promise<number> {
    const { node } = await this.session.send("DOM.describeNode", { objectId: handle.objectId });
    return node.backendNodeId;
  }

  /** A handle in this frame for a backend node id. */
  async resolveBackendNode(backendNodeId: number): Promise<ElementHandle> {
    const contextId = await this.executionContext();
    const { object } = await this.session.send("DOM.resolveNode", {
      backendNodeId,
      executionContextId: contextId,
    });
    if (!object.objectId)
      throw new ServiceIframeError(`Node ${backendNodeId} cannot be reached in frame ${this.url}.`);
    return new ElementHandle(object.objectId, this.id);
  }

  /** The <iframe> element in the parent frame that holds this frame. */
  async ownerElement(): Promise<ElementHandle> {
    if (this.detached) throw this.gone();
    const parent = this.parent;
    if (!parent) throw new ServiceIframeError("The main frame has no owner element.");
    try {
      const { backendNodeId } = await parent.session.send("DOM.getFrameOwner", { frameId: this.id });
      return await parent.resolveBackendNode(backendNodeId);
    } catch (error) {
      // Removed while we asked: say so, rather than what the protocol says about a missing frame.
      if (this.detached) throw this.gone();
      throw error;
    }
  }

  /**
   * Closed shadow roots that the in-page hook did not see (declarative shadow DOM, or roots made
   * before Deckhand attached) are found through the protocol and registered with the runtime.
   * Returns how many were found.
   */
  async discoverClosedShadowRoots(): Promise<number> {
    const hosts = await this.invokeForHandles(domRuntime, "unknownHosts");
    let found = 0;
    await Promise.all(
      hosts.map(async (host) => {
        try {
          const { node } = await this.session.send("DOM.describeNode", {
            objectId: host.objectId,
            depth: 1,
            pierce: true,
          });
          const root = node.shadowRoots?.find((r) => r.shadowRootType === "closed");
          await this.invoke(domRuntime, "markHostChecked", host);
          if (!root) return;
          const rootHandle = await this.resolveBackendNode(root.backendNodeId);
          await this.invoke(domRuntime, "registerClosedRoot", host, rootHandle);
          void this.release(rootHandle);
          found++;
        } finally {
          void this.release(host);
        }
      }),
    );
    return found;
  }

  locator(selector: string): Locator {
    return this.page.locatorIn(this, selector, false);
  }
}

export function evalError(details: Protocol.Runtime.ExceptionDetails | undefined): ServiceEvalError {
  if (!details) return new ServiceEvalError("The page script failed without an error message.");
  const exception = details.exception;
  const message =
    (exception?.className === "Error" || exception?.subtype === "error") && exception.description
      ? exception.description.split("\n")[0]
      : (exception?.description ?? (exception?.value !== undefined ? String(exception.value) : details.text));
  return new ServiceEvalError(`The page threw: ${message}`);
}
