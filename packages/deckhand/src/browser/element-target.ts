// An element found once: the frame it lives in and the protocol's backend node id, which names
// the node for as long as it lives (across handles, scripts and execution contexts). The layers
// above hand it down instead of a selector to look up again: snapshot/ finds it (from an outline
// id or a selector), ops/ checks it is the one meant, and a Locator made from it acts on that node.
//
// The resolution that found it usually holds a handle to it; the target keeps that handle, so
// that every call of one action on the element reuses it, and whoever made the target releases
// it when the action is over (releaseTarget). Without a handle (a target rebuilt from a recorded
// backend node id), one is asked for from the node id.

import type { Frame } from "./frame.ts";
import type { ElementHandle } from "./injected-script.ts";

export interface ElementTarget {
  readonly frame: Frame;
  readonly backendNodeId: number;
  /** @internal The handle of the resolution that found it; owned by the target until releaseTarget. */
  handle?: ElementHandle | undefined;
}

/** A target for an element a handle points at (one command: the handle's backend node id). */
export async function targetOf(frame: Frame, handle: ElementHandle): Promise<ElementTarget> {
  return { frame, backendNodeId: await frame.backendNodeId(handle), handle };
}

/** A handle to the target's element: the one it holds, or one asked for by its backend node id. */
export async function targetHandle(target: ElementTarget): Promise<ElementHandle> {
  target.handle ??= await target.frame.resolveBackendNode(target.backendNodeId);
  return target.handle;
}

/** Frees the target's handle (fire and forget); the target can still be resolved by node id. */
export function releaseTarget(target: ElementTarget | undefined): void {
  const handle = target?.handle;
  if (!target || !handle) return;
  target.handle = undefined;
  void target.frame.release(handle);
}
