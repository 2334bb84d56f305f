// The links a session start answers with (sessionUrl, debugUrl, cdpUrl), and their check when one
// is used. Every failure (a token that is expired, tampered with, for another session or another
// purpose, made by a revoked key, or for a session that is gone) answers the same 404, so that a
// link reveals nothing beyond the one session it was made for.

import type { KeyVerifier } from "../auth.ts";
import { ApiError } from "../errors.ts";
import type { SessionRecord, Store } from "../store/store.ts";
import { LINK_SECRET_NAME, type LinkPurpose, LinkSigner } from "./links.ts";

/** How long each kind of link works, in milliseconds. */
export interface LinkLifetimes {
  /** The session page: long enough to be shared after a failed run. Default 7 days. */
  page: number;
  /** The debugger: it drives the live page. Default 24 hours. */
  debug: number;
  /** The CDP URL: used at once by connectOverCDP. Default 15 minutes. */
  cdp: number;
}

export const DEFAULT_LINK_LIFETIMES: LinkLifetimes = {
  page: 7 * 24 * 3600_000,
  debug: 24 * 3600_000,
  cdp: 15 * 60_000,
};

/** Where the service was reached, as a start request saw it. */
export interface ServiceOrigin {
  protocol: string;
  host: string;
}

export interface SessionUrls {
  sessionUrl: string;
  debugUrl: string;
  cdpUrl: string;
}

/** The path of a session's endpoint on this service. */
export function sessionPath(sessionId: string, endpoint: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}/${endpoint}`;
}

export function linkNotFound(): ApiError {
  return new ApiError(
    404,
    "LINK_NOT_FOUND",
    "This link is not valid: it may have expired or been revoked. Ask for a new one (start the session again " +
      "with its sessionId).",
  );
}

export class SessionLinks {
  private readonly signer: LinkSigner;
  private readonly verifier: KeyVerifier;
  private readonly store: Store;
  readonly lifetimes: LinkLifetimes;

  private constructor(signer: LinkSigner, verifier: KeyVerifier, store: Store, lifetimes: LinkLifetimes) {
    this.signer = signer;
    this.verifier = verifier;
    this.store = store;
    this.lifetimes = lifetimes;
  }

  static async create(
    store: Store,
    verifier: KeyVerifier,
    lifetimes: Partial<LinkLifetimes> = {},
  ): Promise<SessionLinks> {
    const secret = await store.serviceSecret(LINK_SECRET_NAME);
    return new SessionLinks(new LinkSigner(secret), verifier, store, {
      ...DEFAULT_LINK_LIFETIMES,
      ...lifetimes,
    });
  }

  /** A token for one purpose on one session, made by `keyId`. */
  token(sessionId: string, keyId: string, purpose: LinkPurpose): string {
    return this.signer.sign({ sessionId, keyId, purpose, ttlMs: this.lifetimes[purpose] });
  }

  /** The start response's links for a session, as reached at `origin`. */
  urls(origin: ServiceOrigin, sessionId: string, keyId: string): SessionUrls {
    const secure = origin.protocol === "https";
    const http = `${secure ? "https" : "http"}://${origin.host}`;
    const ws = `${secure ? "wss" : "ws"}://${origin.host}`;
    const withToken = (base: string, endpoint: string, purpose: LinkPurpose) =>
      `${base}${sessionPath(sessionId, endpoint)}?token=${this.token(sessionId, keyId, purpose)}`;
    return {
      sessionUrl: withToken(http, "view", "page"),
      debugUrl: withToken(http, "debug", "debug"),
      cdpUrl: withToken(ws, "cdp", "cdp"),
    };
  }

  /**
   * The session a link opens: the token must be intact, unexpired, for this session and purpose,
   * and its key still live. Anything else is the same 404.
   */
  async open(
    sessionId: string,
    token: unknown,
    purpose: LinkPurpose,
  ): Promise<{ session: SessionRecord; keyId: string }> {
    const link = this.signer.verify(token, sessionId, purpose);
    if (!link) throw linkNotFound();
    if (!(await this.verifier.isLive(link.keyId))) throw linkNotFound();
    const session = await this.store.getSession(sessionId);
    if (!session) throw linkNotFound();
    return { session, keyId: link.keyId };
  }
}
