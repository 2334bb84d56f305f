// How far a document has come and whether it is still changing, read from what the page hooks
// record (page-hooks.ts): shared by the DOM runtime (settle asks it) and the outline (a capture
// reports it, so that a still page is read in one round trip).
//
// Self-contained: `installQuiet` is sent to the page as source text.

export interface QuietState {
  readyState: DocumentReadyState;
  /** Milliseconds since the DOM last changed after loading (1e9: never). */
  sinceChange: number;
  /** The longest pause between the changes the page made on its own within the last second; null without a rhythm. */
  rhythm: number | null;
  /** How long the current burst of changes has lasted (ms). */
  burstAge: number;
  /** How many changes the document has had after loading. */
  changes: number;
  /** The document's age (ms). */
  age: number;
  /** How long until the last short timeout the document scheduled while it was young fires (ms); null: none. */
  timersDue: number | null;
  /** Requests (fetch, XMLHttpRequest) the page's scripts have in flight, not yet stale. */
  requests: number;
}

export function installQuiet() {
  /**
   * The document's ready state, how long ago (ms) it last changed after loading, the longest
   * pause between the changes it made on its own within the last second (its rhythm; null
   * without one), how long the current burst of changes has lasted, how many changes it has
   * had, and its age.
   */
  function quiet(): QuietState {
    const read = (
      globalThis as unknown as Record<
        symbol,
        | (() => {
            last: number;
            burstStart: number;
            changes: number;
            own: number[];
            timersDue: number | null;
            requests?: number;
          })
        | undefined
      >
    )[Symbol.for("deckhand.lastMutation")];
    const now = performance.now();
    const state = read?.() ?? {
      last: Number.NEGATIVE_INFINITY,
      burstStart: Number.NEGATIVE_INFINITY,
      changes: 0,
      own: [],
      timersDue: null,
      requests: 0,
    };
    let rhythm: number | null = null;
    for (let i = 1; i < state.own.length; i++) {
      // Both changes within the last second: a gap to a change long ago is no rhythm.
      if (now - state.own[i - 1]! < 1_000) rhythm = Math.max(rhythm ?? 0, state.own[i]! - state.own[i - 1]!);
    }
    return {
      readyState: document.readyState,
      // A number the protocol can carry (it has no Infinity by value): "never" is a long time.
      sinceChange: Number.isFinite(state.last) ? now - state.last : 1e9,
      rhythm,
      burstAge: Number.isFinite(state.burstStart) ? now - state.burstStart : 0,
      changes: state.changes,
      age: now,
      timersDue: state.timersDue === null ? null : Math.max(0, state.timersDue - now),
      requests: state.requests ?? 0,
    };
  }

  return { quiet };
}

export type Quietness = ReturnType<typeof installQuiet>;
