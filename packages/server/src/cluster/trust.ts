// Node-to-node trust: a request one node forwards to another carries who the caller is (the
// project and key id the first node already checked) and proof that a node of this cluster sent it:
// an HMAC-SHA256, keyed by the cluster secret, over the hop's method, path, sender, recipient,
// time, a nonce and the identity. The recipient checks all of it:
//
// - the MAC (constant time): without the secret nothing can be forged, and a caller's own request
//   that names a project of its choosing is just an unsigned header;
// - the recipient is this node, and the method and path are the request's: a captured hop cannot
//   be sent to another node nor turned into another operation;
// - the time is within MAX_SKEW_MS of this node's clock, and the nonce was not seen before within
//   that window: a captured hop cannot be replayed later, nor twice now;
// - the key id is still live (revocation), and then the request goes through the same routes as a
//   direct one: the session must be the project's own, quotas, the URL policy and the CDP allow-list
//   apply at the owner as they would on any request. The identity never carries more than the
//   caller's key had: the first node copied it from the verified key, nothing else.
//
// The body is not in the MAC (it is streamed, not buffered); what a replayed body could do is
// bounded by the rest: the same caller, the same operation, once, within the window.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { KeyIdentity } from "../store/store.ts";

/** Headers of a forwarded request. */
export const CLUSTER_HEADER = "x-deckhand-cluster";
export const CLUSTER_SIGNATURE_HEADER = "x-deckhand-cluster-signature";
/** The node that answered the client (the first hop). */
export const NODE_HEADER = "x-deckhand-node";
/** The node that owns the session the request was about (and served it). */
export const OWNER_HEADER = "x-deckhand-owner";

/** How far a hop's time may be from the recipient's clock. */
export const MAX_SKEW_MS = 30_000;
/** Shortest cluster secret accepted. */
export const MIN_SECRET_LENGTH = 32;

/** What a forwarded request says about itself, once its signature is checked. */
export interface ForwardedClaim {
  /** The sending node. */
  from: string;
  /** The caller, as the sender verified it; absent when the request carries its own signed link token. */
  identity?: KeyIdentity;
  /** A session start the sender placed on this node: it is admitted here, never placed again. */
  placed: boolean;
}

interface SignedFields {
  v: 1;
  m: string;
  u: string;
  from: string;
  to: string;
  t: number;
  n: string;
  p?: string;
  k?: string;
  placed?: true;
}

export class ClusterTrustError extends Error {}

export class ClusterTrust {
  private readonly key: Buffer;
  readonly nodeId: string;
  /** Nonces seen within the skew window, with when they may be forgotten. */
  private readonly seen = new Map<string, number>();
  private lastPrune = 0;

  constructor(secret: string, nodeId: string) {
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new RangeError(
        `The cluster secret must be at least ${MIN_SECRET_LENGTH} characters (a random value shared by every node, ` +
          "e.g. `openssl rand -hex 32`).",
      );
    }
    // A key of its own for this purpose, so that the secret is never used as is.
    this.key = createHmac("sha256", secret).update("deckhand cluster hop v1").digest();
    this.nodeId = nodeId;
  }

  /** The headers of a hop from this node to `to`, for `method` `path` (path and query). */
  sign(
    to: string,
    method: string,
    path: string,
    claim: Omit<ForwardedClaim, "from">,
  ): Record<string, string> {
    const fields: SignedFields = {
      v: 1,
      m: method.toUpperCase(),
      u: path,
      from: this.nodeId,
      to,
      t: Date.now(),
      n: randomBytes(16).toString("base64url"),
      ...(claim.identity ? { p: claim.identity.projectId, k: claim.identity.keyId } : {}),
      ...(claim.placed ? { placed: true as const } : {}),
    };
    const value = Buffer.from(JSON.stringify(fields)).toString("base64url");
    return { [CLUSTER_HEADER]: value, [CLUSTER_SIGNATURE_HEADER]: this.mac(value) };
  }

  private mac(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("base64url");
  }

  /**
   * The claim of a request that carries the cluster headers, for `method` `path` as this node
   * received it. Throws ClusterTrustError (with a message safe to send) when anything is off.
   */
  verify(header: unknown, signature: unknown, method: string, path: string): ForwardedClaim {
    if (typeof header !== "string" || typeof signature !== "string" || header.length > 4096) {
      throw new ClusterTrustError("The cluster headers are malformed.");
    }
    const expected = Buffer.from(this.mac(header));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new ClusterTrustError(
        "The cluster signature does not match: the request was not sent by a node of this cluster.",
      );
    }
    let fields: SignedFields;
    try {
      fields = JSON.parse(Buffer.from(header, "base64url").toString()) as SignedFields;
    } catch {
      throw new ClusterTrustError("The cluster headers are malformed.");
    }
    if (fields.v !== 1 || fields.to !== this.nodeId) {
      throw new ClusterTrustError("The forwarded request was signed for another node.");
    }
    if (fields.m !== method.toUpperCase() || fields.u !== path) {
      throw new ClusterTrustError("The forwarded request was signed for another method or path.");
    }
    const now = Date.now();
    if (typeof fields.t !== "number" || Math.abs(now - fields.t) > MAX_SKEW_MS) {
      throw new ClusterTrustError(
        "The forwarded request is too old or from the future (check that the nodes' clocks agree).",
      );
    }
    this.prune(now);
    if (typeof fields.n !== "string" || this.seen.has(fields.n)) {
      throw new ClusterTrustError("The forwarded request was already used.");
    }
    this.seen.set(fields.n, fields.t + MAX_SKEW_MS);
    const claim: ForwardedClaim = { from: String(fields.from), placed: fields.placed === true };
    if (typeof fields.p === "string" && typeof fields.k === "string") {
      claim.identity = { projectId: fields.p, keyId: fields.k };
    }
    return claim;
  }

  private prune(now: number): void {
    if (now - this.lastPrune < 1000) return;
    this.lastPrune = now;
    for (const [nonce, until] of this.seen) if (until < now) this.seen.delete(nonce);
  }
}
