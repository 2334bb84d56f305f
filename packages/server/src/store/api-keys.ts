// API key format, hashing and comparison, shared by both store back ends and the operator keys.
//
// A key is `dh_<id>_<secret>`: 8 random bytes of id (hex) and 32 random bytes of secret
// (base64url). The id lets the store find the row without a secret-dependent lookup; the stored
// SHA-256 of the whole key is then compared in constant time. SHA-256 (not a slow password hash)
// is the right tool here because the secret is 256 random bits, not something a person chose.

import crypto from "node:crypto";
import type { KeyIdentity } from "./store.ts";

const KEY_PATTERN = /^dh_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
// Compared against when no row matches, so that an unknown id costs the same as a wrong secret.
const DUMMY_HASH = "0".repeat(64);

export interface GeneratedKey {
  id: string;
  key: string;
  hash: string;
}

export function generateKey(): GeneratedKey {
  const id = crypto.randomBytes(8).toString("hex");
  const key = `dh_${id}_${crypto.randomBytes(32).toString("base64url")}`;
  return { id, key, hash: hashKey(key) };
}

export function generateProjectId(): string {
  return `proj_${crypto.randomBytes(12).toString("hex")}`;
}

/** Hex SHA-256 of the key text. */
export function hashKey(key: string): string {
  return crypto.createHash("sha256").update(key, "utf8").digest("hex");
}

/** The id part of a well-formed key, or null. */
export function keyIdOf(key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null;
}

/** Whether `key` hashes to `storedHash`, compared in constant time. `storedHash` null: never. */
export function keyMatchesHash(key: string, storedHash: string | null): boolean {
  const expected = Buffer.from(storedHash ?? DUMMY_HASH, "hex");
  const actual = crypto.createHash("sha256").update(key, "utf8").digest();
  // Called through the module object (not a destructured import) so tests can observe it.
  const equal = expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
  return equal && storedHash !== null;
}

/**
 * Keys given by the operator (`DECKHAND_API_KEYS`). They are not in the store; their key id and
 * project id are derived from the key's hash, so they stay the same across restarts and nodes.
 */
export class OperatorKeys {
  private readonly entries: { hash: Buffer; identity: KeyIdentity }[];

  constructor(keys: readonly string[]) {
    this.entries = keys
      .map((key) => key.trim())
      .filter((key) => key.length > 0)
      .map((key) => {
        const hash = hashKey(key);
        return {
          hash: Buffer.from(hash, "hex"),
          identity: {
            keyId: `operator_${hash.slice(0, 12)}`,
            projectId: `proj_${hashKey(`deckhand-project:${hash}`).slice(0, 24)}`,
          },
        };
      });
  }

  get size(): number {
    return this.entries.length;
  }

  hasKeyId(keyId: string): boolean {
    return this.entries.some((entry) => entry.identity.keyId === keyId);
  }

  /** Compares against every operator key (no early exit), each in constant time. */
  verify(key: string): KeyIdentity | null {
    const candidate = crypto.createHash("sha256").update(key, "utf8").digest();
    let found: KeyIdentity | null = null;
    for (const entry of this.entries) {
      if (crypto.timingSafeEqual(entry.hash, candidate)) found = entry.identity;
    }
    return found;
  }
}

/** Splits a comma-separated `DECKHAND_API_KEYS` value. */
export function parseOperatorKeys(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}
