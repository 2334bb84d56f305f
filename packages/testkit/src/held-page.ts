// A page the fixture server answers only when the test lets it. A test of an abort needs the
// abort, not a slow response, to end the wait, and needs to know the browser let go without
// sleeping past a response time: the browser drops the request (its socket closes) when it stops
// loading, and that is the signal.
import type { FixtureServer } from "./fixture-server.ts";

export interface HeldPage {
  /** Resolves once the browser has asked for the page. */
  requested: Promise<void>;
  /** Resolves once the browser has closed the request's connection. */
  dropped: Promise<void>;
  /** Sends the page, if the request is still open. */
  answer(): void;
  /** Answers (if still waiting) and removes the route. */
  release(): void;
}

/** Serves `path` on `site`, held until `answer()`; remove it with `release()`. */
export function holdPage(site: FixtureServer, path: string): HeldPage {
  let asked!: () => void;
  const requested = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let closed!: () => void;
  const dropped = new Promise<void>((resolve) => {
    closed = resolve;
  });
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const unroute = site.route(path, async (req, res) => {
    req.socket.once("close", closed);
    asked();
    await answered;
    if (!res.destroyed) res.end("<!doctype html><title>Late</title><p>late</p>");
  });
  return {
    requested,
    dropped,
    answer,
    release: () => {
      answer();
      unroute();
    },
  };
}
