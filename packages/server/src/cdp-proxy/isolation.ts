// One CDP proxy client, held inside its session's browser context. The client shares the browser's
// one connection (its pipe) with the service and with other clients, through a channel of its own
// (deckhand's CdpChannel) and a browser-target session of its own (Target.attachToBrowserTarget):
// what the client sends without a session id goes to that session, so its auto-attach, target
// discovery and child sessions are its own. It sees the browser as if the session's context were
// all there is:
//
// - Target.getBrowserContexts answers the session's context as the default one, and no other.
// - Target events (attachedToTarget, targetCreated, targetInfoChanged, targetDestroyed,
//   targetCrashed, detachedFromTarget) reach the client only for targets of that context. A target
//   of another context that the browser auto-attaches to the client's session is let run and
//   detached here, unseen.
// - Commands are checked against the proxy's allow-list (policy.ts): what may be called on which
//   kind of session, with URLs, files, download directories, browser contexts, targets and windows
//   held to the session's own. Anything else is refused with a CDP error.
// - Commands addressed to a session that is not the client's fail as if it did not exist.
//
// Message ids towards the browser are the connection's own (so that nobody's calls collide) and
// mapped back on the way out.

import {
  type CdpChannel,
  type CdpChannelEvent,
  type CdpChannelListener,
  type CdpMessageHead,
  type CdpMessageSource,
  type CdpTransportMessage,
  joinMessage,
  messageHead,
  rewriteMessage,
  scanCdpMessage,
} from "deckhand";
import { checkCommand, type Json, passesUnchecked, type SessionKind, type SessionScope } from "./policy.ts";

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

/** A message for the client: its text, or UTF-8 pieces to send one after the other. */
export type ClientMessage = string | readonly Buffer[];

export interface CdpIsolationOptions {
  toClient(message: ClientMessage): void;
  /**
   * The client made a tab the one in front (opened it, activated it, brought it to front): the
   * session's operations should work on it too when the client names no frame.
   */
  activated?(targetId: string): void;
  /** The session's context; undefined: the browser's default context (a browser given by cdpUrl). */
  contextId: string | undefined;
  /** Where the session's downloads go. */
  downloadDir: string;
  /** Most tabs the session may have open at once. */
  maxTabs: number;
}

const NO_SESSION = -32001;
const INVALID_REQUEST = -32600;

/**
 * Largest message whose parameters the proxy checks (and so parses): URLs, file paths, contexts,
 * targets and windows are small. Commands without checks pass unparsed, whatever their size.
 */
export const MAX_CHECKED_MESSAGE_BYTES = 1024 * 1024;

// Target events the client sees only for its own targets (by targetInfo or by targetId).
const TARGET_INFO_EVENTS = new Set(["Target.targetCreated", "Target.targetInfoChanged"]);
const TARGET_ID_EVENTS = new Set(["Target.targetDestroyed", "Target.targetCrashed"]);
// Answers that need a look before the client gets them.
const INSPECTED_RESPONSES = new Set([
  "Target.getTargets",
  "Target.attachToTarget",
  "Target.attachToBrowserTarget",
  "Target.createTarget",
  "Target.activateTarget",
  "Page.bringToFront",
  "Browser.getWindowForTarget",
]);

export class CdpIsolation implements SessionScope {
  private readonly options: CdpIsolationOptions;
  private channel!: CdpChannel;
  /** The client's own browser-target session: where its session-less commands go. */
  private root: string | undefined;
  contextId: string;
  readonly isDefaultContext: boolean;
  private readonly pending = new Map<number, Pending>();
  /** Target sessions the client may use (those of its context's targets), and their target. */
  private readonly sessions = new Map<string, string | undefined>();
  /** The client's further sessions on the browser target: browser-level, like its root. */
  private readonly browserSessions = new Set<string>();
  /** Known targets and their context. */
  private readonly targets = new Map<string, string | undefined>();
  /** Windows of the session's tabs. */
  private readonly windows = new Set<number>();
  /** Target.createTarget calls sent and not answered yet (for the tab limit). */
  private creating = 0;
  /** Client messages are handled in order; some need a look-up first. */
  private clientTurn: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(options: CdpIsolationOptions) {
    this.options = options;
    this.contextId = options.contextId ?? "";
    this.isDefaultContext = options.contextId === undefined;
  }

  get downloadDir(): string {
    return this.options.downloadDir;
  }

  /**
   * Opens the client's channel on `connection` and its session on the browser target, and resolves
   * the default context's id when the session owns it. Call before passing messages.
   */
  async start(connection: { openChannel(listener: CdpChannelListener): CdpChannel }): Promise<void> {
    this.channel = connection.openChannel({
      answer: (id, message) => this.fromBrowserAnswer(id, message),
      event: (message) => this.fromBrowserEvent(message),
      closed: () => this.onChannelClosed?.(),
    });
    if (this.channel.closed) throw new Error("The connection to the browser is closed.");
    const { sessionId } = (await this.call("Target.attachToBrowserTarget")) as { sessionId?: string };
    if (typeof sessionId !== "string") throw new Error("The browser opened no session for the client.");
    this.root = sessionId;
    this.channel.claim(sessionId);
    if (this.isDefaultContext) {
      const contexts = await this.call("Target.getBrowserContexts", {}, sessionId);
      this.contextId = String(contexts.defaultBrowserContextId ?? "");
    }
  }

  /** Bytes sent on the browser's connection (by anyone) that the browser has not read yet. */
  get browserBacklog(): number {
    return this.channel && !this.channel.closed ? this.channel.backlog : 0;
  }

  /** Calls `handler` once the browser has read what waits for it (or the connection closed). */
  afterBrowserDrain(handler: () => void): void {
    if (this.channel && !this.channel.closed) this.channel.afterDrain(handler);
    else queueMicrotask(handler);
  }

  /** Called when the browser's connection is gone, or the browser let go of the client's session. */
  onChannelClosed: (() => void) | undefined;

  /** Lets go of everything the client holds in the browser: its sessions detach, paused targets run on. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.pending.values()) {
      if (call.kind === "internal") call.reject(new Error("The CDP proxy connection closed."));
    }
    this.pending.clear();
    if (this.channel && !this.channel.closed) {
      for (const child of [...this.sessions.keys(), ...this.browserSessions]) {
        this.channel.send("Target.detachFromTarget", { sessionId: child });
      }
      if (this.root) this.channel.send("Target.detachFromTarget", { sessionId: this.root });
      this.channel.close();
    }
  }

  // ---------- SessionScope (for the policy) ----------

  /** Whether a target is of the session's context (asked of the browser when not known yet). */
  async ownsTarget(targetId: unknown): Promise<boolean> {
    if (typeof targetId !== "string") return false;
    if (!this.targets.has(targetId)) {
      try {
        const { targetInfo } = (await this.call("Target.getTargetInfo", { targetId }, this.root)) as {
          targetInfo?: { browserContextId?: string };
        };
        this.targets.set(targetId, targetInfo?.browserContextId);
      } catch {
        return false;
      }
    }
    return this.targets.get(targetId) === this.contextId;
  }

  async ownsWindow(windowId: unknown): Promise<boolean> {
    if (typeof windowId !== "number") return false;
    if (this.windows.has(windowId)) return true;
    for (const targetId of await this.ownPages()) {
      try {
        const found = (await this.call("Browser.getWindowForTarget", { targetId }, this.root)) as {
          windowId?: number;
        };
        if (typeof found.windowId === "number") this.windows.add(found.windowId);
      } catch {
        // closed meanwhile
      }
    }
    return this.windows.has(windowId);
  }

  /** The session's open tabs (as the browser counts them) and those being opened, against its limit. */
  async tabLimitProblem(): Promise<string | undefined> {
    const open = (await this.ownPages().catch(() => [])).length + this.creating;
    if (open < this.options.maxTabs) return undefined;
    return (
      `the session has ${open} tabs open, its limit (the service's --max-tabs-per-session is ` +
      `${this.options.maxTabs}). Close a tab first.`
    );
  }

  private async ownPages(): Promise<string[]> {
    const { targetInfos } = (await this.call("Target.getTargets", {}, this.root)) as {
      targetInfos?: { targetId: string; type: string; browserContextId?: string }[];
    };
    return (targetInfos ?? [])
      .filter((t) => t.type === "page" && t.browserContextId === this.contextId)
      .map((t) => t.targetId);
  }

  // ---------- client -> browser ----------

  /** Client messages taken and not handled yet, and their size (the proxy stops reading past a limit). */
  private turns = 0;
  queuedBytes = 0;
  /** Client commands sent to the browser and not answered yet. */
  inFlight = 0;
  /** Called when a queued message was handled or a command answered: the proxy may read again. */
  onProgress: (() => void) | undefined;

  /**
   * Takes one message of the client, as it sent it: its bytes as read from the socket (passed on
   * undecoded), or text. Messages are handled in order.
   */
  fromClient(text: CdpMessageSource): void {
    this.turns++;
    this.queuedBytes += text.length;
    const done = () => {
      this.turns--;
      this.queuedBytes -= text.length;
      this.onProgress?.();
    };
    if (this.turns === 1) {
      // Nothing waits ahead of it: most messages are handled here and now, without a promise.
      let handled: void | Promise<void>;
      try {
        handled = this.handleClient(text);
      } catch {
        handled = undefined;
      }
      if (handled) this.clientTurn = handled.catch(() => undefined).finally(done);
      else done();
      return;
    }
    this.clientTurn = this.clientTurn
      .then(() => this.handleClient(text))
      .catch(() => {
        // A failed look-up was answered to the client already; the turn goes on.
      })
      .finally(done);
  }

  private handleClient(text: CdpMessageSource): void | Promise<void> {
    if (this.closed) return;
    let head: CdpMessageHead;
    try {
      head = scanCdpMessage(text);
    } catch {
      return;
    }
    const { id, method, sessionId } = head;
    if (id === undefined || method === undefined) return;
    const refuse = (code: number, why: string) => this.answerClient(id, sessionId, { code, message: why });

    if (sessionId !== undefined && !this.sessions.has(sessionId) && !this.browserSessions.has(sessionId)) {
      return refuse(NO_SESSION, "Session with given id not found.");
    }
    const kind: SessionKind =
      sessionId === undefined || this.browserSessions.has(sessionId) ? "browser" : "target";

    if (method === "Target.getBrowserContexts") {
      this.toClient({
        id,
        result: { browserContextIds: [], defaultBrowserContextId: this.contextId },
        ...(sessionId ? { sessionId } : {}),
      });
      return;
    }
    if (method !== "Target.detachFromTarget" && passesUnchecked(method, kind)) {
      // Nothing in its parameters to check: the client's text goes on as it is, with the
      // connection's id (and the client's root session when it named none): given bytes, as slices
      // of them, so that a large message is neither decoded nor copied.
      const upstreamId = this.channel.sendRaw((upstream) =>
        rewriteMessage(text, head, {
          id: upstream,
          ...(sessionId === undefined ? { sessionId: this.root! } : {}),
        }),
      );
      if (upstreamId < 0) return;
      this.inFlight++;
      this.pending.set(upstreamId, { kind: "client", clientId: id, method, sessionId, params: {} });
      return;
    }
    if (text.length > MAX_CHECKED_MESSAGE_BYTES) {
      return refuse(
        INVALID_REQUEST,
        `${method}: the message is ${text.length} bytes; the CDP proxy checks this command's parameters and takes ` +
          `it up to ${MAX_CHECKED_MESSAGE_BYTES} bytes.`,
      );
    }
    let message: Message;
    try {
      message = JSON.parse(typeof text === "string" ? text : text.toString()) as Message;
    } catch {
      return;
    }
    return this.handleChecked(id, method, sessionId, kind, message.params);
  }

  private async handleChecked(
    id: number,
    method: string,
    sessionId: string | undefined,
    kind: SessionKind,
    given: unknown,
  ): Promise<void> {
    const params: Json = given && typeof given === "object" && !Array.isArray(given) ? { ...given } : {};
    const refuse = (code: number, why: string) => this.answerClient(id, sessionId, { code, message: why });
    if (method === "Target.detachFromTarget") {
      const own =
        typeof params.sessionId === "string"
          ? this.sessions.has(params.sessionId) || this.browserSessions.has(params.sessionId)
          : await this.ownsTarget(params.targetId);
      if (!own) return refuse(NO_SESSION, "No session with given id");
    }
    const verdict = await checkCommand(method, params, kind, this);
    if (!verdict.ok) return refuse(verdict.code, verdict.message);
    if (this.closed) return;
    if (method === "Target.createTarget") this.creating++;
    const upstreamId = this.channel.send(method, verdict.params, sessionId ?? this.root);
    if (upstreamId < 0) return;
    this.inFlight++;
    this.pending.set(upstreamId, { kind: "client", clientId: id, method, sessionId, params: verdict.params });
  }

  private answerClient(
    id: number,
    sessionId: string | undefined,
    error: { code: number; message: string },
  ): void {
    this.toClient({ id, error, ...(sessionId ? { sessionId } : {}) });
  }

  // ---------- browser -> client ----------

  private fromBrowserAnswer(upstreamId: number, answer: CdpTransportMessage): void {
    const call = this.pending.get(upstreamId);
    if (!call) return;
    this.pending.delete(upstreamId);
    if (call.kind === "client") {
      this.inFlight--;
      if (call.method === "Target.createTarget") this.creating--;
    }
    if (this.closed) return;
    // Most traffic is answers to the client's page commands (screenshots among them): pass those on
    // with their id swapped (and the root session's id taken out), without parsing, and when they
    // came as bytes, as a new head and slices of those bytes (of the chunks they were read in).
    if (call.kind === "client" && !INSPECTED_RESPONSES.has(call.method)) {
      this.onProgress?.();
      const prefix = `{"id":${upstreamId},`;
      if (call.sessionId !== undefined && startsWith(answer, prefix)) {
        const head = `{"id":${call.clientId},`;
        this.options.toClient(
          typeof answer === "string"
            ? head + answer.slice(prefix.length)
            : [Buffer.from(head), ...withoutHead(answer, prefix.length)],
        );
        return;
      }
      const text = joinMessage(answer);
      try {
        const head = scanCdpMessage(text);
        this.options.toClient(
          rewriteMessage(text, head, {
            id: call.clientId,
            ...(call.sessionId === undefined ? { sessionId: null } : {}),
          }),
        );
      } catch {
        // Not JSON: nothing to pass on.
      }
      return;
    }
    if (call.kind === "client") this.onProgress?.();
    const text = joinMessage(answer);
    let message: Message;
    try {
      message = JSON.parse(typeof text === "string" ? text : text.toString()) as Message;
    } catch {
      return;
    }
    if (call.kind === "internal") {
      if (message.error) call.reject(new Error(message.error.message));
      else call.resolve(message.result ?? {});
      return;
    }
    const out: Message = { ...message, id: call.clientId };
    // An answer from the client's root session goes out as the browser target's own.
    if (call.sessionId === undefined) delete out.sessionId;
    if (message.result) this.inspect(call, message.result, out);
    this.toClient(out);
  }

  private inspect(call: Extract<Pending, { kind: "client" }>, result: Json, out: Message): void {
    if (call.method === "Target.getTargets") {
      const infos = (result.targetInfos ?? []) as { targetId: string; browserContextId?: string }[];
      for (const info of infos) this.targets.set(info.targetId, info.browserContextId);
      out.result = { ...result, targetInfos: infos.filter((i) => i.browserContextId === this.contextId) };
    } else if (call.method === "Target.attachToTarget" && typeof result.sessionId === "string") {
      this.sessions.set(result.sessionId, call.params.targetId as string);
      this.channel.claim(result.sessionId);
    } else if (call.method === "Target.attachToBrowserTarget" && typeof result.sessionId === "string") {
      this.browserSessions.add(result.sessionId);
      this.channel.claim(result.sessionId);
    } else if (call.method === "Target.createTarget" && typeof result.targetId === "string") {
      this.targets.set(result.targetId, this.contextId);
      if (call.params.background !== true) this.options.activated?.(result.targetId);
    } else if (call.method === "Target.activateTarget") {
      this.options.activated?.(call.params.targetId as string);
    } else if (call.method === "Page.bringToFront" && call.sessionId) {
      const targetId = this.sessions.get(call.sessionId);
      if (targetId) this.options.activated?.(targetId);
    } else if (call.method === "Browser.getWindowForTarget" && typeof result.windowId === "number") {
      this.windows.add(result.windowId);
    }
  }

  private fromBrowserEvent(message: CdpChannelEvent): void {
    if (this.closed) return;
    const { method } = message;
    // The browser let go of the client's own session (it is closing, or the target went): so does
    // the proxy. That event comes on the connection's root, where nothing else of the client's does.
    // Events of a target session (the bulk: network, page, runtime) go on as the browser wrote them.
    if (
      message.sessionId !== undefined &&
      message.sessionId !== this.root &&
      this.sessions.has(message.sessionId) &&
      !method.startsWith("Target.")
    ) {
      this.options.toClient(message.text);
      return;
    }
    const params = message.params ?? {};
    if (method === "Target.detachedFromTarget" && params.sessionId === this.root) {
      this.onChannelClosed?.();
      return;
    }
    if (
      message.sessionId !== this.root &&
      !this.sessions.has(message.sessionId ?? "") &&
      !this.browserSessions.has(message.sessionId ?? "")
    ) {
      return;
    }
    // Events of the client's root session are the browser target's own, as the client sees it.
    const sessionId = message.sessionId === this.root ? undefined : message.sessionId;
    const forClient: Message = { method, params, ...(sessionId === undefined ? {} : { sessionId }) };

    if (method === "Target.attachedToTarget") {
      const info = params.targetInfo as
        | { targetId: string; type?: string; browserContextId?: string }
        | undefined;
      const child = params.sessionId as string;
      // The client's own Target.attachToBrowserTarget (the browser target is never auto-attached).
      if (info?.type === "browser") {
        this.browserSessions.add(child);
        this.channel.claim(child);
        this.toClient(forClient);
        return;
      }
      if (info) this.targets.set(info.targetId, info.browserContextId);
      if (info?.browserContextId === this.contextId) {
        this.sessions.set(child, info?.targetId);
        this.channel.claim(child);
        this.toClient(forClient);
      } else {
        this.letGo(child, params.waitingForDebugger === true, message.sessionId);
      }
      return;
    }
    if (method === "Target.detachedFromTarget") {
      const child = params.sessionId as string;
      if (this.sessions.delete(child) || this.browserSessions.delete(child)) this.toClient(forClient);
      return;
    }
    if (method === "Target.receivedMessageFromTarget") return;
    if (method && TARGET_INFO_EVENTS.has(method)) {
      const info = params.targetInfo as { targetId: string; browserContextId?: string } | undefined;
      if (info) this.targets.set(info.targetId, info.browserContextId);
      if (info?.browserContextId === this.contextId) this.toClient(forClient);
      return;
    }
    if (method && TARGET_ID_EVENTS.has(method)) {
      const targetId = params.targetId as string;
      const own = this.targets.get(targetId) === this.contextId;
      if (method === "Target.targetDestroyed") this.targets.delete(targetId);
      if (own) this.toClient(forClient);
      return;
    }
    // A browser-level session hears only what is the client's: target events (above) and its own
    // context's downloads. Events of a target session are that target's own.
    const browserLevel = sessionId === undefined || this.browserSessions.has(sessionId);
    if (browserLevel && !method?.startsWith("Browser.download")) return;
    this.toClient(forClient);
  }

  /**
   * A target of another context was attached to the client's session `parent` (browser-wide
   * auto-attach): let it run if it waits for this client, and detach, so that it is not held up.
   */
  private letGo(sessionId: string, waiting: boolean, parent: string | undefined): void {
    if (waiting) this.send("Runtime.runIfWaitingForDebugger", {}, sessionId);
    this.send("Target.detachFromTarget", { sessionId }, parent);
  }

  // ---------- plumbing ----------

  private toClient(message: Message): void {
    if (!this.closed) this.options.toClient(JSON.stringify(message));
  }

  /** Fire and forget. */
  private send(method: string, params: Json, sessionId?: string): void {
    this.call(method, params, sessionId).catch(() => undefined);
  }

  private call(method: string, params: Json = {}, sessionId?: string): Promise<Json> {
    if (this.closed) return Promise.reject(new Error("The CDP proxy connection closed."));
    return new Promise((resolve, reject) => {
      const id = this.channel.send(method, params, sessionId);
      if (id < 0) {
        reject(new Error("The connection to the browser closed."));
        return;
      }
      this.pending.set(id, { kind: "internal", resolve, reject });
    });
  }
}

/** Whether the message starts with `prefix` (ASCII), without decoding (or joining) the rest of it. */
function startsWith(message: CdpTransportMessage, prefix: string): boolean {
  return typeof message === "string"
    ? message.startsWith(prefix)
    : messageHead(message, prefix.length) === prefix;
}

/** The message's bytes after its first `length`, as slices (a message in chunks stays in chunks). */
function withoutHead(message: Buffer | readonly Buffer[], length: number): Buffer[] {
  const pieces = Buffer.isBuffer(message) ? [message] : message;
  const rest: Buffer[] = [];
  let skip = length;
  for (const piece of pieces) {
    if (skip >= piece.length) {
      skip -= piece.length;
      continue;
    }
    rest.push(skip > 0 ? piece.subarray(skip) : piece);
    skip = 0;
  }
  return rest;
}
