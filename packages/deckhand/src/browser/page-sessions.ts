// Attaching a page's DevTools sessions: its own, and one per out-of-process iframe as it appears.
// Each is set up as it attaches (domains enabled, the in-page hooks installed before any script
// runs, auto-attach for its own children, the browser's settings) and wired to the page's
// collaborators: events, the frame tree, lifecycle events and requests in flight. Workers and
// other children are let run and left alone. A crash of the page's own renderer closes the page.

import type { Protocol } from "devtools-protocol";
import type { CdpConnection, CdpSession } from "./cdp/connection.ts";
import type { FrameTree } from "./frame-tree.ts";
import { installPageHooks } from "./injected/page-hooks.ts";
import type { LifecycleWatcher } from "./lifecycle.ts";
import type { NetworkTracker } from "./network.ts";
import type { PageEvents } from "./page-events.ts";
import type { SessionSettings } from "./session-settings.ts";

/** Settings every page of a browser gets when it attaches. */
export interface PageSettings {
  viewport?: { width: number; height: number };
  proxyCredentials?: { username: string; password: string };
}

const PAGE_HOOKS_SOURCE = `(${installPageHooks.toString()})();`;

/** What the sessions of a page are wired to: the page's collaborators. */
export interface PageWiring {
  connection: CdpConnection;
  settings: PageSettings;
  tree: FrameTree;
  lifecycle: LifecycleWatcher;
  network: NetworkTracker;
  events: PageEvents;
  sessionSettings: SessionSettings;
  /** The page's own renderer crashed. */
  crashed(): void;
}

export class PageSessions {
  /** The page's own session (the main frame's). */
  readonly session: CdpSession;
  /** Every session of the page that is attached now: its own and its OOPIFs'. */
  readonly all = new Set<CdpSession>();
  /**
   * Settles once the page's own session has registered its new-document scripts (the page hooks,
   * the init scripts). See scriptsRegistered.
   */
  private registered: Promise<unknown> = Promise.resolve();
  private readonly settings: PageSettings;
  private readonly wiring: PageWiring;

  constructor(session: CdpSession, wiring: PageWiring) {
    this.session = session;
    this.settings = wiring.settings;
    this.wiring = wiring;
  }

  /** Wires a target session (the page's own or an OOPIF's) and lets it run. */
  async attach(session: CdpSession, oopifFrameId?: string): Promise<void> {
    this.all.add(session);
    if (oopifFrameId) this.wiring.tree.oopifAttached(oopifFrameId, session);
    this.listen(session);
    const setup: Promise<unknown>[] = [
      session.send("Page.enable"),
      session.send("Page.setLifecycleEventsEnabled", { enabled: true }),
      session.send("Runtime.enable"),
      session.send("Network.enable", {}),
      session.send("Inspector.enable").catch(() => undefined),
      session.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
    ];
    const scripts = [
      session.send("Page.addScriptToEvaluateOnNewDocument", {
        source: PAGE_HOOKS_SOURCE,
        runImmediately: true,
      }),
      ...this.wiring.sessionSettings.setup(session),
    ];
    setup.push(...scripts);
    if (!oopifFrameId) this.registered = Promise.all(scripts).catch(() => undefined);
    if (this.settings.viewport && !oopifFrameId) {
      setup.push(
        session.send("Emulation.setDeviceMetricsOverride", {
          width: this.settings.viewport.width,
          height: this.settings.viewport.height,
          deviceScaleFactor: 0,
          mobile: false,
        }),
      );
    }
    if (this.settings.proxyCredentials) {
      setup.push(session.send("Fetch.enable", { handleAuthRequests: true, patterns: [{ urlPattern: "*" }] }));
    }
    const treeAsOf = this.wiring.tree.now();
    const tree = session.send("Page.getFrameTree");
    // Resume without waiting for the answers above: a session handles its commands in order, so
    // the hooks are in place before the first script runs anyway, and some targets (a tab opened
    // with noopener, e.g. a target=_blank link) do not answer Page.enable until they run.
    const resumed = session.send("Runtime.runIfWaitingForDebugger");
    try {
      const [{ frameTree }] = await Promise.all([tree, resumed, ...setup]);
      const parentId = oopifFrameId ? this.wiring.tree.parentIdOf(oopifFrameId) : undefined;
      this.wiring.tree.addTree(frameTree, session, parentId, treeAsOf);
    } catch (error) {
      // A frame or tab that went away while it was being set up is no error of ours.
      if (!session.detached) throw error;
    }
  }

  /**
   * Settles once the page's own session has registered its new-document scripts. A navigation
   * waits for this before it starts: the first tab of a browser is handed out before its set-up is
   * answered, and a navigation the browser starts meanwhile can commit its document in a new
   * renderer without them. The page hooks then arrive only once the document has loaded (through
   * runImmediately), too late to see the timers its scripts set while loading, and its user's init
   * scripts never run in it.
   */
  scriptsRegistered(): Promise<unknown> {
    return this.registered;
  }

  private listen(session: CdpSession): void {
    this.wiring.events.tap(session);
    this.wiring.tree.listen(session);
    this.wiring.lifecycle.listen(session);
    this.wiring.network.listen(session);
    session.on("Target.attachedToTarget", (e) => this.childAttached(session, e));
    session.on("Target.detachedFromTarget", (e) => this.childDetached(e.sessionId));
    session.on("Inspector.targetCrashed", () => this.crashed(session));
    if (this.settings.proxyCredentials) {
      const credentials = this.settings.proxyCredentials;
      session.on("Fetch.requestPaused", (e) => {
        session.send("Fetch.continueRequest", { requestId: e.requestId }).catch(() => undefined);
      });
      session.on("Fetch.authRequired", (e) => {
        const response =
          e.authChallenge.source === "Proxy"
            ? { response: "ProvideCredentials" as const, ...credentials }
            : { response: "Default" as const };
        session
          .send("Fetch.continueWithAuth", { requestId: e.requestId, authChallengeResponse: response })
          .catch(() => undefined);
      });
    }
  }

  private childAttached(parent: CdpSession, event: Protocol.Target.AttachedToTargetEvent): void {
    const session = this.wiring.connection.adoptSession(event.sessionId, event.targetInfo.type);
    if (event.targetInfo.type === "iframe") {
      this.attach(session, event.targetInfo.targetId).catch(() => undefined);
      return;
    }
    // Workers and the like: let them run, then leave them alone.
    session
      .send("Runtime.runIfWaitingForDebugger")
      .catch(() => undefined)
      .finally(() =>
        parent.send("Target.detachFromTarget", { sessionId: event.sessionId }).catch(() => undefined),
      );
  }

  private childDetached(sessionId: string): void {
    const session = [...this.all].find((s) => s.id === sessionId);
    if (!session) return;
    this.all.delete(session);
    this.wiring.tree.sessionDetached(session, this.all);
  }

  private crashed(session: CdpSession): void {
    if (session === this.session) this.wiring.crashed();
  }
}
