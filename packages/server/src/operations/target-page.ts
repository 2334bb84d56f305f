// The page an operation works on: the session's active page, or the one `frameId` names. A REMOTE
// client names a page by its main frame id (its target id); a frame id inside a page selects that
// page (the operations see every frame of a page at once). An empty or null frameId (what the
// reference's clients send when they mean none) is the active page; an id that names nothing is a 404.

import type { Deckhand, Page } from "deckhand";
import { ApiError } from "../errors.ts";

export function targetPage(dh: Deckhand, frameId: string | null | undefined): Page {
  const context = dh.context;
  if (frameId === undefined || frameId === null || frameId === "") {
    const active = context.activePage() ?? context.pages().at(-1);
    if (!active) {
      throw new ApiError(
        409,
        "NO_PAGE",
        "The session has no open page. Open one through its CDP connection.",
      );
    }
    return active;
  }
  const pages = context.pages();
  const page =
    pages.find((p) => p.targetId === frameId) ?? pages.find((p) => p.frameById(frameId) !== undefined);
  if (!page) {
    throw new ApiError(
      404,
      "FRAME_NOT_FOUND",
      `No page or frame ${JSON.stringify(frameId)} in this session (body field \`frameId\`; it may have closed). ` +
        "Leave frameId out (or send it empty) to use the active page.",
      { frameId },
    );
  }
  return page;
}
