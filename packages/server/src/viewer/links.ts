// Signed session links: the session page (`sessionUrl`), the debugger (`debugUrl`) and the CDP
// proxy (`cdpUrl`) are opened without an API key, by whoever holds the link. The link carries a
// token that says which session, for what, until when, and which key made it, signed with the
// service's secret (HMAC-SHA256; the same secret on every node of one store, kept in the store).
//
// A token is good for one session and one purpose only; it stops working when it expires and when
// the key that made it is revoked (the key id is in the token and is checked on every use). The API
// key itself never appears in a URL.

import { createHmac, timingSafeEqual } from "node:crypto";

/** What a link may be used for. */
export type LinkPurpose = "page" | "debug" | "cdp";

const PURPOSES: readonly LinkPurpose[] = ["page", "debug", "cdp"];

/** The name of the store's secret that signs links (Store.serviceSecret). */
export const LINK_SECRET_NAME = "session-links";

interface Claims {
  /** Session id. */
  s: string;
  /** Purpose. */
  p: LinkPurpose;
  /** The id of the key that made the link. */
  k: string;
  /** Expiry, epoch seconds. */
  e: number;
}

export interface VerifiedLink {
  sessionId: string;
  keyId: string;
  purpose: LinkPurpose;
  /** Expiry, epoch milliseconds. */
  expiresAt: number;
}

/** The longest token accepted: a longer one is refused unread. */
const MAX_TOKEN_LENGTH = 512;

export class LinkSigner {
  private readonly secret: Buffer;

  constructor(secret: Buffer) {
    if (secret.length < 32) throw new TypeError("The link signing secret must have at least 32 bytes.");
    this.secret = secret;
  }

  private mac(payload: string): Buffer {
    return createHmac("sha256", this.secret).update(`deckhand-link.v1.${payload}`).digest();
  }

  /** A token for `purpose` on `sessionId`, made by `keyId`, valid for `ttlMs` from `now`. */
  sign(
    input: { sessionId: string; keyId: string; purpose: LinkPurpose; ttlMs: number },
    now = Date.now(),
  ): string {
    const claims: Claims = {
      s: input.sessionId,
      p: input.purpose,
      k: input.keyId,
      e: Math.floor((now + input.ttlMs) / 1000),
    };
    const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
    return `${payload}.${this.mac(payload).toString("base64url")}`;
  }

  /**
   * The token's claims when it is intact, unexpired, for `purpose` and for `sessionId`; otherwise
   * null (the caller answers 404 whatever the reason, so a token reveals nothing about another
   * session). Whether its key is still live is the caller's to check (LinkSigner knows no keys).
   */
  verify(token: unknown, sessionId: string, purpose: LinkPurpose, now = Date.now()): VerifiedLink | null {
    if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
    const dot = token.indexOf(".");
    if (dot <= 0 || dot !== token.lastIndexOf(".")) return null;
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), "base64url");
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let claims: Claims;
    try {
      claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Claims;
    } catch {
      return null;
    }
    if (
      typeof claims !== "object" ||
      claims === null ||
      typeof claims.s !== "string" ||
      typeof claims.k !== "string" ||
      typeof claims.e !== "number" ||
      !PURPOSES.includes(claims.p)
    )
      return null;
    if (claims.p !== purpose || claims.s !== sessionId) return null;
    if (claims.e * 1000 <= now) return null;
    return { sessionId: claims.s, keyId: claims.k, purpose: claims.p, expiresAt: claims.e * 1000 };
  }
}
