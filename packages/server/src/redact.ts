// Secrets that must never reach a log line or the database: API keys (any field named like one,
// and the key headers) and the values of `variables` (act/observe/agent substitute them locally
// precisely so that nobody else sees them). Variable names and descriptions are kept: they are
// what a reader of a log or a replay needs to follow what happened.

export const REDACTED = "[redacted]";

const SECRET_FIELD =
  /^(api[-_]?key|x-platform-api-key|x-model-api-key|authorization|proxy-authorization|cookie|password)$/i;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function redactVariables(variables: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) {
    out[name] = isPlainObject(value) && "value" in value ? { ...value, value: REDACTED } : REDACTED;
  }
  return out;
}

/**
 * A copy of `value` with secrets replaced by `[redacted]`. Walks plain objects and arrays only:
 * class instances (requests, errors, buffers) are returned as they are, for their own serialisers.
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1)) as T;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (SECRET_FIELD.test(key) && child !== undefined && child !== null && child !== "") out[key] = REDACTED;
    else if (key === "variables" && isPlainObject(child)) out[key] = redactVariables(child);
    else out[key] = redactSecrets(child, depth + 1);
  }
  return out as T;
}

/** The URL with the value of an `apiKey` query parameter (the CDP endpoint's) blanked. */
export function redactUrlKey(url: string): string {
  return url.replace(/([?&]apikey=)[^&#]*/gi, `$1${REDACTED}`);
}
