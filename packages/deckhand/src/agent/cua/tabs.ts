// Which tab the model is looking at, and what happens in it that no screenshot shows. A person's
// eyes follow a link that opens in a new tab, and go back to the opener when that tab closes; a
// native dialog (alert, confirm, prompt, leave-page) blocks the page, and the input event that
// opened it, until it is answered, and is not painted on the page.

import type { Page } from "../../browser/page.ts";
import type { Deadline } from "../../deadline.ts";

/** How long a tab the page asked for may take to attach. */
const NEW_TAB_MS = 2_000;
/** The longest dialog text passed on to the model. */
const DIALOG_TEXT_MAX = 300;

export interface TabWatchOptions {
  /** Text from the page with variables' values replaced by %name%. */
  hideSecrets: (text: string) => string;
  /** Whether to accept a native confirm (or leave-page) dialog; accepted when unset. */
  confirmDialog?: ((type: string, message: string) => boolean | Promise<boolean>) | undefined;
}

export class TabWatch {
  /** The tab the model sees and drives: the one it started on, or a tab it opened since. */
  page: Page;
  private readonly deadline: Deadline;
  private readonly options: TabWatchOptions;
  private readonly unwatchContext: () => void;
  private unwatchPage: () => void = () => {};
  /** A tab the current one opened (a target=_blank link, window.open), not switched to yet. */
  private opened: Page | undefined;
  /** The current tab asked for a new window (Page.windowOpen comes with the click). */
  private tabAsked = false;
  private tabArrived: (() => void) | undefined;
  private notes: string[] = [];

  constructor(page: Page, deadline: Deadline, options: TabWatchOptions) {
    this.page = page;
    this.deadline = deadline;
    this.options = options;
    this.watch();
    this.unwatchContext = page.context.onPage((opened) => {
      if (opened.openerId !== this.page.targetId) return;
      this.opened = opened;
      this.tabArrived?.();
    });
  }

  dispose(): void {
    this.unwatchContext();
    this.unwatchPage();
  }

  /** What happened since the last call that the screenshot does not show; cleared as it is read. */
  takeNotes(): string | undefined {
    const notes = this.notes.join("\n");
    this.notes = [];
    return notes || undefined;
  }

  /**
   * After an action: moves to the tab it opened (once attached and its document parsed), or back
   * to the opener when the current tab closed. Resolves to whether the tab changed.
   */
  async follow(): Promise<boolean> {
    if (this.tabAsked && !this.opened) await this.waitForNewTab();
    this.tabAsked = false;
    const opened = this.opened;
    this.opened = undefined;
    if (opened && !opened.isClosed()) {
      await this.switchTo(opened);
      // A tab that does not load in time is followed anyway: a limit of its own, within the run's.
      const load = this.deadline.child("waiting for the new tab to load", NEW_TAB_MS);
      try {
        await opened.waitForLoadState("domcontentloaded", { deadline: load }).catch(() => undefined);
      } finally {
        load.dispose();
      }
      this.deadline.check();
      return true;
    }
    if (!this.page.isClosed()) return false;
    const openerId = this.page.openerId;
    const opener = openerId ? this.page.context.pages().find((p) => p.targetId === openerId) : undefined;
    if (!opener) return false;
    await this.switchTo(opener);
    return true;
  }

  private async switchTo(page: Page): Promise<void> {
    this.page = page;
    this.watch();
    await page.bringToFront().catch(() => undefined);
  }

  /** Waits for the tab the page asked for, up to NEW_TAB_MS: one that does not come is not waited for. */
  private async waitForNewTab(): Promise<void> {
    // A limit of its own, within the run's: its running out ends this wait, not the run.
    const wait = this.deadline.child("waiting for the tab the page asked to open", NEW_TAB_MS);
    try {
      wait.log("waiting for the tab the page asked to open");
      await wait.race(new Promise<void>((resolve) => (this.tabArrived = resolve)));
    } catch (error) {
      if (!wait.expired) throw error;
    } finally {
      wait.dispose();
      this.tabArrived = undefined;
    }
  }

  /** Watches the current tab for new windows it asks for and for native dialogs. */
  private watch(): void {
    this.unwatchPage();
    const { session } = this.page;
    const offOpen = session.on("Page.windowOpen", () => {
      this.tabAsked = true;
    });
    const offDialog = session.on("Page.javascriptDialogOpening", (dialog) => {
      void this.answerDialog(session, dialog.type, dialog.message);
    });
    this.unwatchPage = () => {
      offOpen();
      offDialog();
    };
  }

  /**
   * Answers a native dialog at once: an alert is accepted, a confirm (or leave-page) question goes
   * to confirmDialog (accepted without one), a prompt is dismissed; the model is told.
   */
  private async answerDialog(session: Page["session"], type: string, message: string): Promise<void> {
    const hidden = this.options.hideSecrets(message);
    let accept = type !== "prompt";
    const confirm = this.options.confirmDialog;
    if ((type === "confirm" || type === "beforeunload") && confirm) {
      accept = await (async () => confirm(type, hidden))().catch(() => false);
    }
    const shown = hidden.length > DIALOG_TEXT_MAX ? `${hidden.slice(0, DIALOG_TEXT_MAX)}...` : hidden;
    this.notes.push(
      `The page showed a native ${type} dialog${shown ? ` saying ${JSON.stringify(shown)}` : ""}; it was ${accept ? "accepted" : "dismissed"}.`,
    );
    // Noted before the answer goes: the blocked input event ends with it.
    await session.send("Page.handleJavaScriptDialog", { accept }).catch(() => undefined);
  }
}
