// The rules that keep a CDP proxy client inside its session's browser context. The client gets its
// own WebSocket to the browser (through this), and sees the browser as if the session's context
// were all there is:
//
// - Target.getBrowserContexts answers the session's context as the default one, and no other.
// - Target events (attachedToTarget, targetCreated, targetInfoChanged, targetDestroyed,
//   targetCrashed, detachedFromTarget) reach the client only for targets of that context. A target
//   of another context that the browser auto-attaches to this connection is let run and detached
//   here, unseen.
// - Target.createTarget always opens the tab in the session's context.
// - Commands addressed to a session or target outside the context fail as if it did not exist.
// - Browser.close (and crash), Target.createBrowserContext / disposeBrowserContext, and every other
//   browser-wide command not listed as safe are refused with a CDP error. Browser-level commands
//   that take a browserContextId are bound to the session's.
// - A session on the browser target (Target.attachToBrowserTarget, which Playwright's
//   newCDPSession uses) is held to the same rules as the connection itself.
//
// Message ids are the proxy's own towards the browser (so that its internal calls never collide
// with the client's) and mapped back on the way out.

type Json = Record<string, unknown>;

interface Message {
  id?: number;
  method?: string;
  params?: Json;
  result?: Json;
  error?: { code: number; message: string };
  sessionId?: string;
}

type Pending =
  | { kind: "client"; clientId: number; method: string; sessionId: string | undefined; params: Json }
  | { kind: "internal"; resolve(result: Json): void; reject(error: Error): void };

export interface CdpIsolationIo {
  toClient(text: string): void;
  toBrowser(text: string): void;
  /**
   * The client made a tab the one in front (opened it, activated it, brought it to front): the
   * session's operations should work on it too when the client names no frame.
   */
  activated?(targetId: string): void;
}

/** CDP's "server error" code, which Chrome uses for refusals of this kind. */
const REFUSED = -32000;
const NO_SESSION = -32001;

const NOT_ALLOWED = new Set([
  "Browser.close",
  "Browser.crash",
  "Browser.crashGpuProcess",
  "Target.createBrowserContext",
  "Target.disposeBrowserContext",
  "Target.setRemoteLocations",
  "Target.sendMessageToTarget",
  "Target.exposeDevToolsProtocol",
]);

// Commands of the browser target (no sessionId) that are answered, checked or harmless.
const BROWSER_WIDE_SAFE = new Set([
  "Browser.getVersion",
  "SystemInfo.getInfo",
  "Target.getBrowserContexts",
  "Target.createTarget",
  "Target.attachToTarget",
  "Target.attachToBrowserTarget",
  "Target.detachFromTarget",
  "Target.getTargetInfo",
  "Target.getTargets",
  "Target.setAutoAttach",
  "Target.setDiscoverTargets",
]);
const BOUND_TO_CONTEXT = new Set([
  "Browser.setDownloadBehavior",
  "Browser.grantPermissions",
  "Browser.resetPermissions",
  "Browser.setPermission",
  "Browser.cancelDownload",
  "Storage.getCookies",
  "Storage.setCookies",
  "Storage.clearCookies",
]);
// Commands naming a target that must be the session's.
const TARGET_COMMANDS = new Set([
  "Target.closeTarget",
  "Target.openDevTools",
  "Target.activateTarget",
  "Target.autoAttachRelated",
  "Browser.getWindowForTarget",
]);
// Target events the client sees only for its own targets (by targetInfo or by targetId).
const TARGET_INFO_EVENTS = new Set(["Target.targetCreated", "Target.targetInfoChanged"]);
const TARGET_ID_EVENTS = new Set(["Target.targetDestroyed", "Target.targetCrashed"]);
// Responses that need a look before the client gets them.
const INSPECTED_RESPONSES = new Set([
  "Target.getTargets",
  "Target.attachToTarget",
  "Target.attachToBrowserTarget",
  "Target.createTarget",
  "Target.activateTarget",
  "Page.bringToFront",
]);

export class CdpIsolation {
  private readonly io: CdpIsolationIo;
  /** The session's context as the browser names it (resolved by start() when not given). */
  private contextId: string | undefined;
  /** Whether the session's context is the browser's default one (createTarget then names none). */
  private readonly isDefaultContext: boolean;
  private readonly pending = new Map<number, Pending>();
  /** Target sessions the client may use (those of its context's targets), and their target. */
  private readonly sessions = new Map<string, string | undefined>();
  /** The client's sessions on the browser target: browser-level, like the connection itself. */
  private readonly browserSessions = new Set<string>();
  /** Known targets and their context. */
  private readonly targets = new Map<string, string | undefined>();
  private nextId = 1;
  /** Client messages are handled in order; some need a look-up first. */
  private clientTurn: Promise<void> = Promise.resolve();
  private closed = false;

  /** `contextId` undefined: the session owns the browser's default context (an attached browser). */
  constructor(io: CdpIsolationIo, contextId: string | undefined) {
    this.io = io;
    this.contextId = contextId;
    this.isDefaultContext = contextId === undefined;
  }

  /** Resolves the default context's id when the session owns it. Call before passing messages. */
  async start(): Promise<void> {
    if (this.contextId !== undefined) return;
    const contexts = await this.call("Target.getBrowserContexts");
    this.contextId = String(contexts.defaultBrowserContextId ?? "");
  }

  close(): void {
    this.closed = true;
    for (const call of this.pending.values()) {
      if (call.kind === "internal") call.reject(new Error("The CDP proxy connection closed."));
    }
    this.pending.clear();
  }

  // ---------- client -> browser ----------

  fromClient(text: string): void {
    this.clientTurn = this.clientTurn
      .then(() => this.handleClient(text))
      .catch(() => {
        // A failed look-up was answered to the client already; the turn goes on.
      });
  }

  private async handleClient(text: string): Promise<void> {
    if (this.closed) return;
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    const { id, method, sessionId } = message;
    if (typeof id !== "number" || typeof method !== "string") return;
    const params: Json = message.params && typeof message.params === "object" ? { ...message.params } : {};
    const refuse = (code: number, why: string) => this.answerClient(id, sessionId, { code, message: why });

    if (sessionId !== undefined && !this.sessions.has(sessionId) && !this.browserSessions.has(sessionId)) {
      return refuse(NO_SESSION, "Session with given id not found.");
    }
    const browserLevel = sessionId === undefined || this.browserSessions.has(sessionId);
    if (NOT_ALLOWED.has(method)) {
      return refuse(
        REFUSED,
        `${method} is not allowed through the session's CDP proxy: it would reach beyond the session's browser ` +
          "context. End the session with POST /v1/sessions/{id}/end.",
      );
    }
    switch (method) {
      case "Target.getBrowserContexts":
        this.toClient({
          id,
          result: { browserContextIds: [], defaultBrowserContextId: this.contextId },
          ...(sessionId ? { sessionId } : {}),
        });
        return;
      case "Target.createTarget":
        if (this.isDefaultContext) delete params.browserContextId;
        else params.browserContextId = this.contextId;
        break;
      case "Target.attachToTarget":
        if (params.flatten !== true) {
          return refuse(REFUSED, "Only flatten: true sessions are available through the CDP proxy.");
        }
        if (!(await this.ownsTarget(params.targetId)))
          return refuse(REFUSED, "No target with given id found");
        break;
      case "Target.detachFromTarget":
        if (
          typeof params.sessionId === "string"
            ? !this.sessions.has(params.sessionId) && !this.browserSessions.has(params.sessionId)
            : !(await this.ownsTarget(params.targetId))
        ) {
          return refuse(NO_SESSION, "No session with given id");
        }
        break;
      case "Target.getTargetInfo":
        if (params.targetId !== undefined && !(await this.ownsTarget(params.targetId))) {
          return refuse(REFUSED, "No target with given id found");
        }
        break;
      default:
        if (TARGET_COMMANDS.has(method) && !(await this.ownsTarget(params.targetId))) {
          return refuse(REFUSED, "No target with given id found");
        }
    }
    if (browserLevel) {
      if (BOUND_TO_CONTEXT.has(method)) {
        if (this.isDefaultContext) delete params.browserContextId;
        else params.browserContextId = this.contextId;
      } else if (!BROWSER_WIDE_SAFE.has(method) && !TARGET_COMMANDS.has(method)) {
        return refuse(
          REFUSED,
          `${method} is not available on the browser target through the session's CDP proxy (it would affect ` +
            "other sessions). Send page-level commands to a page's session.",
        );
      }
    }
    if (this.closed) return;
    const upstreamId = this.nextId++;
    this.pending.set(upstreamId, { kind: "client", clientId: id, method, sessionId, params });
    this.io.toBrowser(
      JSON.stringify({ id: upstreamId, method, params, ...(sessionId ? { sessionId } : {}) }),
    );
  }

  private answerClient(
    id: number,
    sessionId: string | undefined,
    error: { code: number; message: string },
  ): void {
    this.toClient({ id, error, ...(sessionId ? { sessionId } : {}) });
  }

  /** Whether a target is of the session's context (asked of the browser when not known yet). */
  private async ownsTarget(targetId: unknown): Promise<boolean> {
    if (typeof targetId !== "string") return false;
    if (!this.targets.has(targetId)) {
      try {
        const { targetInfo } = (await this.call("Target.getTargetInfo", { targetId })) as {
          targetInfo?: { browserContextId?: string };
        };
        this.targets.set(targetId, targetInfo?.browserContextId);
      } catch {
        return false;
      }
    }
    return this.targets.get(targetId) === this.contextId;
  }

  // ---------- browser -> client ----------

  fromBrowser(text: string): void {
    if (this.closed) return;
    // Most traffic is answers to the client's calls (screenshots among them): pass those on with
    // their id swapped, without parsing. Chrome writes the id first.
    const head = /^\{"id":(\d+),/.exec(text);
    if (head) {
      const upstreamId = Number(head[1]);
      const call = this.pending.get(upstreamId);
      if (call?.kind === "client" && !INSPECTED_RESPONSES.has(call.method)) {
        this.pending.delete(upstreamId);
        this.io.toClient(`{"id":${call.clientId},${text.slice(head[0].length)}`);
        return;
      }
    }
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (typeof message.id === "number") this.handleResponse(message);
    else if (typeof message.method === "string") this.handleEvent(message);
  }

  private handleResponse(message: Message): void {
    const call = this.pending.get(message.id!);
    if (!call) return;
    this.pending.delete(message.id!);
    if (call.kind === "internal") {
      if (message.error) call.reject(new Error(message.error.message));
      else call.resolve(message.result ?? {});
      return;
    }
    const out: Message = { ...message, id: call.clientId };
    if (message.result) {
      if (call.method === "Target.getTargets") {
        const infos = (message.result.targetInfos ?? []) as { targetId: string; browserContextId?: string }[];
        for (const info of infos) this.targets.set(info.targetId, info.browserContextId);
        out.result = {
          ...message.result,
          targetInfos: infos.filter((i) => i.browserContextId === this.contextId),
        };
      } else if (call.method === "Target.attachToTarget" && typeof message.result.sessionId === "string") {
        this.sessions.set(message.result.sessionId, call.params.targetId as string);
      } else if (
        call.method === "Target.attachToBrowserTarget" &&
        typeof message.result.sessionId === "string"
      ) {
        this.browserSessions.add(message.result.sessionId);
      } else if (call.method === "Target.createTarget" && typeof message.result.targetId === "string") {
        this.targets.set(message.result.targetId, this.contextId);
        if (call.params.background !== true) this.io.activated?.(message.result.targetId);
      } else if (call.method === "Target.activateTarget") {
        this.io.activated?.(call.params.targetId as string);
      } else if (call.method === "Page.bringToFront" && call.sessionId) {
        const targetId = this.sessions.get(call.sessionId);
        if (targetId) this.io.activated?.(targetId);
      }
    }
    this.toClient(out);
  }

  private handleEvent(message: Message): void {
    const { method, sessionId } = message;
    const params = message.params ?? {};
    if (sessionId !== undefined && !this.sessions.has(sessionId) && !this.browserSessions.has(sessionId))
      return;

    if (method === "Target.attachedToTarget") {
      const info = params.targetInfo as
        | { targetId: string; type?: string; browserContextId?: string }
        | undefined;
      const child = params.sessionId as string;
      // The client's own Target.attachToBrowserTarget (the browser target is never auto-attached).
      if (info?.type === "browser") {
        this.browserSessions.add(child);
        this.toClient(message);
        return;
      }
      if (info) this.targets.set(info.targetId, info.browserContextId);
      if (info?.browserContextId === this.contextId) {
        this.sessions.set(child, info?.targetId);
        this.toClient(message);
      } else {
        this.letGo(child, params.waitingForDebugger === true, sessionId);
      }
      return;
    }
    if (method === "Target.detachedFromTarget") {
      const child = params.sessionId as string;
      if (this.sessions.delete(child) || this.browserSessions.delete(child)) this.toClient(message);
      return;
    }
    if (method === "Target.receivedMessageFromTarget") return;
    if (method && TARGET_INFO_EVENTS.has(method)) {
      const info = params.targetInfo as { targetId: string; browserContextId?: string } | undefined;
      if (info) this.targets.set(info.targetId, info.browserContextId);
      if (info?.browserContextId === this.contextId) this.toClient(message);
      return;
    }
    if (method && TARGET_ID_EVENTS.has(method)) {
      const targetId = params.targetId as string;
      const own = this.targets.get(targetId) === this.contextId;
      if (method === "Target.targetDestroyed") this.targets.delete(targetId);
      if (own) this.toClient(message);
      return;
    }
    this.toClient(message);
  }

  /**
   * A target of another context was attached to this connection (browser-wide auto-attach, on the
   * connection or on a browser-target session `parent`): let it run if it waits for this
   * connection, and detach, so that its own session is not held up.
   */
  private letGo(sessionId: string, waiting: boolean, parent: string | undefined): void {
    if (waiting) this.send({ method: "Runtime.runIfWaitingForDebugger", sessionId });
    this.send({
      method: "Target.detachFromTarget",
      params: { sessionId },
      ...(parent ? { sessionId: parent } : {}),
    });
  }

  // ---------- plumbing ----------

  private toClient(message: Message): void {
    if (!this.closed) this.io.toClient(JSON.stringify(message));
  }

  /** Fire and forget. */
  private send(message: { method: string; params?: Json; sessionId?: string }): void {
    this.call(message.method, message.params, message.sessionId).catch(() => undefined);
  }

  private call(method: string, params: Json = {}, sessionId?: string): Promise<Json> {
    if (this.closed) return Promise.reject(new Error("The CDP proxy connection closed."));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { kind: "internal", resolve, reject });
      this.io.toBrowser(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }
}
