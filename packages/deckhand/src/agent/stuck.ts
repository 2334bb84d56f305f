// Loop detection. An agent that repeats the same action on the same element while the page does
// not change (a button that does nothing), or repeats it many times even though the page changes
// (scrolling an endless list), is not making progress. The model is told once; if it goes on, the
// run stops with success: false and says it was stuck.

/** Identical actions in a row on a page that did not change before the model is told. */
export const SAME_STATE_REPEATS = 3;
/** Identical actions in a row, the page changing each time (an endless list). */
export const CHANGING_STATE_REPEATS = 6;
/** Actions of any kind in a row after which the page is still as it was (the model rephrasing one click). */
export const NO_CHANGE_ACTIONS = 5;

/** Tools that read or wait and change nothing: they neither count as progress nor as a repeat. */
const PASSIVE = new Set(["ariaTree", "screenshot", "think", "extract", "wait", "done"]);

export type StuckVerdict = "ok" | "warn" | "stop";

export class LoopDetector {
  private lastKey: string | undefined;
  private lastState: string | undefined;
  private streak = 0;
  private unchanged = 0;
  /** Actions in a row that left the page as it was, whatever they were. */
  private still = 0;
  private warned = false;
  /** What the repeated action was, for the messages. */
  repeated = "";

  /**
   * Notes an action and the page's state after it; says whether the model should be told
   * (`warn`, once) or the run stopped (`stop`, after the warning).
   */
  note(tool: string, args: unknown, stateAfter: string): StuckVerdict {
    if (PASSIVE.has(tool)) return "ok";
    const key = `${tool} ${JSON.stringify(args)}`;
    this.still = stateAfter === this.lastState ? this.still + 1 : 0;
    if (key === this.lastKey) {
      this.streak++;
      if (stateAfter === this.lastState) this.unchanged++;
    } else {
      this.streak = 1;
      this.unchanged = 1;
    }
    this.lastKey = key;
    this.lastState = stateAfter;
    const looping =
      this.unchanged >= SAME_STATE_REPEATS ||
      this.streak >= CHANGING_STATE_REPEATS ||
      this.still >= NO_CHANGE_ACTIONS;
    if (!looping) return "ok";
    this.repeated =
      this.still >= NO_CHANGE_ACTIONS
        ? `${NO_CHANGE_ACTIONS} actions that changed nothing, the last ${key}`
        : key;
    if (!this.warned) {
      this.warned = true;
      // Counting starts again: the model gets as many tries to do something else.
      this.streak = 0;
      this.unchanged = 0;
      this.still = 0;
      this.lastKey = undefined;
      return "warn";
    }
    return "stop";
  }

  get stuckMessage(): string {
    return (
      `The agent was stuck: it repeated the same action (${this.repeated}) without progress, was told so, ` +
      "and repeated it again. The task was not completed."
    );
  }

  get warning(): string {
    return (
      `Warning: you have repeated the same action (${this.repeated}) several times and the page shows no progress. ` +
      "Do something different, or call done with taskComplete: false if the task cannot be done. " +
      "If you repeat it again the run stops."
    );
  }
}
