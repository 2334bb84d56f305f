// Authentication of every /v1 request: `x-platform-api-key` must be a live key from the store or
// one of the operator's keys (DECKHAND_API_KEYS). `x-platform-project-id` is accepted and
// ignored: a key belongs to exactly one project. Routes marked `config: { public: true }` (the
// OpenAPI document) need no key.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors.ts";
import { OperatorKeys } from "./store/api-keys.ts";
import type { KeyIdentity, Store } from "./store/store.ts";

/** Who is calling: set on every authenticated request as `request.auth`. */
export type AuthContext = KeyIdentity;

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 request that passed it; null on public routes. */
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** No API key needed (e.g. the OpenAPI document). */
    public?: boolean;
    /** The key may come as `?apiKey=` (the CDP WebSocket endpoint, for clients that cannot set headers). */
    queryApiKey?: boolean;
  }
}

export class KeyVerifier {
  private readonly store: Store;
  private readonly operatorKeys: OperatorKeys;

  constructor(store: Store, operatorKeys: readonly string[] = []) {
    this.store = store;
    this.operatorKeys = new OperatorKeys(operatorKeys);
  }

  async verify(key: string): Promise<KeyIdentity | null> {
    return this.operatorKeys.verify(key) ?? (await this.store.verifyKey(key));
  }

  /**
   * Whether the key with this id may still be used: an operator key still configured, or a stored
   * key not revoked. (For what a key made earlier, such as a signed session link.)
   */
  async isLive(keyId: string): Promise<boolean> {
    if (this.operatorKeys.hasKeyId(keyId)) return true;
    if (keyId.startsWith("operator_")) return false;
    return (await this.store.revokedKeyIds([keyId])).length === 0;
  }
}

function isV1(url: string): boolean {
  return url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?");
}

export function installAuth(app: FastifyInstance, verifier: KeyVerifier): void {
  app.decorateRequest("auth", null);
  app.addHook("onRequest", async (request) => {
    if (!isV1(request.url) || request.routeOptions.config?.public) return;
    // Forwarded by another node of the cluster, which verified the caller's key (its signature was
    // checked before this hook: cluster/routing.ts). The key may have been revoked since.
    const forwarded = request.forwarded?.identity;
    if (forwarded) {
      if (!(await verifier.isLive(forwarded.keyId)))
        throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key (x-platform-api-key).");
      request.auth = forwarded;
      return;
    }
    let key = request.headers["x-platform-api-key"];
    if ((typeof key !== "string" || key.length === 0) && request.routeOptions.config?.queryApiKey) {
      key = (request.query as { apiKey?: string } | undefined)?.apiKey;
    }
    if (typeof key !== "string" || key.length === 0) {
      throw new ApiError(401, "UNAUTHORIZED", "Missing API key: send it in the x-platform-api-key header.");
    }
    const identity = await verifier.verify(key);
    if (!identity)
      throw new ApiError(401, "UNAUTHORIZED", "Invalid or revoked API key (x-platform-api-key).");
    request.auth = identity;
  });
}

/** The caller of an authenticated route. Throws 401 if the route was somehow reached without auth. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth)
    throw new ApiError(401, "UNAUTHORIZED", "Missing API key: send it in the x-platform-api-key header.");
  return request.auth;
}
