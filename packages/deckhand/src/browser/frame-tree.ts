// The frames of one page across its sessions: the page's own and those of its out-of-process
// iframes. Frames come and go with protocol events (attached, navigated, detached) and with the
// frame trees a session reports when it attaches; each frame learns its main world's execution
// context here, whichever arrives first.

import type { Protocol } from "devtools-protocol";
import type { CdpSession } from "./cdp/connection.ts";
import { Frame } from "./frame.ts";
import type { Page } from "./page.ts";

export class FrameTree {
  private readonly page: Page;
  private readonly mainId: string;
  private readonly frameMap = new Map<string, Frame>();
  /** Execution contexts reported before their frame was known (events can race the frame tree). */
  private readonly orphanContexts = new Map<string, { session: CdpSession; id: number }>();
  /**
   * When each frame last navigated or went away, counted in frame events. A target is resumed
   * before its frame tree is answered (see Page.attachSession), so the tree can be older than
   * events already handled; this tells which parts of it are.
   */
  private readonly frameEventAt = new Map<string, number>();
  private frameEvents = 0;
  /** Called for each frame that leaves the tree (after it is marked detached). */
  private readonly removed: (frameId: string) => void;

  constructor(page: Page, mainId: string, session: CdpSession, removed: (frameId: string) => void) {
    this.page = page;
    this.mainId = mainId;
    this.removed = removed;
    this.frameMap.set(mainId, new Frame(page, mainId, session, undefined));
  }

  main(): Frame {
    return this.frameMap.get(this.mainId)!;
  }

  all(): Frame[] {
    return [...this.frameMap.values()];
  }

  get(id: string): Frame | undefined {
    return this.frameMap.get(id);
  }

  /** The count of frame events so far: the `asOf` of a frame tree asked for now. */
  now(): number {
    return this.frameEvents;
  }

  /** Follows a session's frame and execution-context events. */
  listen(session: CdpSession): void {
    session.on("Page.frameAttached", (e) => this.frameAttached(e.frameId, e.parentFrameId, session));
    session.on("Page.frameNavigated", (e) => this.frameNavigated(e.frame, session));
    session.on("Page.navigatedWithinDocument", (e) => {
      const frame = this.frameMap.get(e.frameId);
      if (frame) frame.url = e.url;
      this.frameEventAt.set(e.frameId, ++this.frameEvents);
    });
    session.on("Page.frameDetached", (e) => {
      if (e.reason === "swap") return; // moving to another process; its new session takes over
      this.remove(e.frameId);
    });
    session.on("Runtime.executionContextCreated", (e) => this.contextCreated(e.context, session));
    session.on("Runtime.executionContextDestroyed", (e) => {
      for (const frame of this.frameMap.values()) {
        if (frame.session === session && frame.hasExecutionContext(e.executionContextId))
          frame.setExecutionContext(undefined);
      }
    });
    session.on("Runtime.executionContextsCleared", () => {
      for (const frame of this.frameMap.values())
        if (frame.session === session) frame.setExecutionContext(undefined);
    });
  }

  /** An out-of-process iframe's own session attached: its frame now lives there. */
  oopifAttached(frameId: string, session: CdpSession): void {
    const frame = this.frameMap.get(frameId);
    if (!frame) {
      this.frameMap.set(frameId, new Frame(this.page, frameId, session, undefined));
      return;
    }
    frame.session = session;
    frame.setExecutionContext(undefined);
  }

  /** The parent of a frame, as far as the tree knows it. */
  parentIdOf(frameId: string): string | undefined {
    return this.frameMap.get(frameId)?.parentId;
  }

  /**
   * A session went away (`live`: the sessions still attached). An OOPIF's own frame stays in its
   * parent (it may come back in-process); its inner frames go with it.
   */
  sessionDetached(session: CdpSession, live: ReadonlySet<CdpSession>): void {
    for (const frame of [...this.frameMap.values()]) {
      if (frame.session !== session) continue;
      const parent = frame.parent;
      if (parent && parent.session !== session && live.has(parent.session)) {
        frame.session = parent.session;
        frame.setExecutionContext(undefined);
      } else {
        this.remove(frame.id);
      }
    }
  }

  /** Adds what a frame tree taken at `asOf` (see now()) says, where no later event has. */
  addTree(
    tree: Protocol.Page.FrameTree,
    session: CdpSession,
    parentId: string | undefined,
    asOf: number,
  ): void {
    const info = tree.frame;
    let frame = this.frameMap.get(info.id);
    // Navigated or removed since the tree was taken: the events know better, for its subtree too.
    const outdated = (this.frameEventAt.get(info.id) ?? -1) > asOf;
    if (outdated && !frame) return;
    if (!frame) {
      frame = new Frame(this.page, info.id, session, info.parentId ?? parentId);
      this.frameMap.set(info.id, frame);
    } else {
      frame.session = session;
      if (!frame.parentId && (info.parentId ?? parentId) && info.id !== this.mainId)
        frame.parentId = info.parentId ?? parentId;
    }
    this.adoptOrphanContext(frame);
    if (outdated) return;
    frame.url = info.url + (info.urlFragment ?? "");
    frame.name = info.name ?? "";
    frame.loaderId = info.loaderId;
    for (const child of tree.childFrames ?? []) this.addTree(child, session, info.id, asOf);
  }

  /**
   * The main frame's document as a frame tree asked for after a navigation reports it, for a
   * commit whose Page.frameNavigated never came (see Page.confirmCommit). The tree is the newest
   * word: it counts as a frame event, so an older tree still on its way does not undo it.
   */
  adoptMainCommit(tree: Protocol.Page.FrameTree, session: CdpSession): void {
    if (tree.frame.id !== this.mainId) return;
    this.frameNavigated(tree.frame, session);
    for (const child of tree.childFrames ?? []) this.addTree(child, session, this.mainId, this.frameEvents);
  }

  /** Every frame is gone (the page closed). */
  detachAll(): void {
    for (const frame of this.frameMap.values()) frame.markDetached();
  }

  private frameAttached(frameId: string, parentId: string, session: CdpSession): void {
    if (this.frameMap.has(frameId)) return;
    const frame = new Frame(this.page, frameId, session, parentId);
    this.frameMap.set(frameId, frame);
    this.adoptOrphanContext(frame);
  }

  private frameNavigated(info: Protocol.Page.Frame, session: CdpSession): void {
    let frame = this.frameMap.get(info.id);
    if (!frame) {
      frame = new Frame(this.page, info.id, session, info.parentId);
      this.frameMap.set(info.id, frame);
    }
    frame.url = info.url + (info.urlFragment ?? "");
    frame.name = info.name ?? "";
    frame.loaderId = info.loaderId;
    this.frameEventAt.set(info.id, ++this.frameEvents);
    // A new document: the frames of the old one are gone.
    for (const child of frame.children()) if (child.session === session) this.remove(child.id);
    this.adoptOrphanContext(frame);
  }

  private remove(frameId: string): void {
    const frame = this.frameMap.get(frameId);
    if (!frame || frameId === this.mainId) return;
    for (const child of frame.children()) this.remove(child.id);
    this.frameMap.delete(frameId);
    this.frameEventAt.set(frameId, ++this.frameEvents);
    frame.markDetached();
    this.removed(frameId);
  }

  private contextCreated(context: Protocol.Runtime.ExecutionContextDescription, session: CdpSession): void {
    const aux = context.auxData as { frameId?: string; isDefault?: boolean } | undefined;
    if (!aux?.frameId || !aux.isDefault) return;
    const frame = this.frameMap.get(aux.frameId);
    if (frame && frame.session === session) frame.setExecutionContext(context.id);
    else this.orphanContexts.set(aux.frameId, { session, id: context.id });
  }

  private adoptOrphanContext(frame: Frame): void {
    const orphan = this.orphanContexts.get(frame.id);
    if (orphan && orphan.session === frame.session) {
      this.orphanContexts.delete(frame.id);
      frame.setExecutionContext(orphan.id);
    }
  }
}
