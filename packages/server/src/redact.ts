// Secrets that must never reach a log line or the database, removed by where they stand:
//
// - fields named like a credential (API keys, key headers, passwords, tokens), at any depth;
// - the values of `variables` (act/observe/agent substitute them locally precisely so that nobody
//   else sees them); their names and descriptions are kept, a reader needs them to follow along;
// - model configurations (`model`, `executionModel`): an allow-list. Only `modelName`, `provider`,
//   the `baseURL` (without credentials or query values) and the names of `headers` are kept; every
//   other text, provider-specific options included, is blanked, since any of them may be a key
//   (numbers and booleans, settings such as temperature or maxRetries, are kept);
// - addresses of services (`cdpUrl`, `baseURL`) keep no password and no query value (tokens often
//   ride there), and a request URL as logged keeps no query value at all.
//
// The values themselves, wherever they turn up in free text (an error a provider echoes), are the
// business of secrets.ts.

export const REDACTED = "[redacted]";

const SECRET_FIELD =
  /^(api[-_]?key|x-(platform|model|goog)-api-key|x-api-key|authorization|proxy-authorization|cookie|set-cookie|password|passphrase|secret|client[-_]?secret|(access|refresh|id|session)[-_]?token|private[-_]?key)$/i;

/** Fields holding a model configuration (`"provider/model"` or an object). */
const MODEL_FIELD = /^(model|executionModel)$/;
/** What a model configuration may show. */
const MODEL_KEPT = new Set(["modelName", "provider"]);
/** Fields holding the address of a service the session connects to. */
const ADDRESS_FIELD = /^(cdpUrl|baseURL|baseUrl|wsEndpoint)$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function blank(value: unknown): unknown {
  return value === undefined || value === null || value === "" ? value : REDACTED;
}

function redactVariables(variables: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) {
    out[name] = isPlainObject(value) && "value" in value ? { ...value, value: REDACTED } : REDACTED;
  }
  return out;
}

/**
 * A service address without its password and with every query value blanked:
 * `wss://user:pw@host/devtools?token=abc` -> `wss://user:[redacted]@host/devtools?token=[redacted]`.
 * Text that is not a URL is blanked whole.
 */
export function redactAddress(address: string): string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return REDACTED;
  }
  const auth = url.username ? `${url.username}${url.password ? `:${REDACTED}` : ""}@` : "";
  const names = [...new Set(url.searchParams.keys())];
  const query =
    names.length > 0 ? `?${names.map((name) => `${encodeURIComponent(name)}=${REDACTED}`).join("&")}` : "";
  return `${url.protocol}//${auth}${url.host}${url.pathname}${query}`;
}

/** `value` with every string in it blanked. */
function blankStrings(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return blank(value);
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => blankStrings(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blankStrings(v, depth + 1)]));
}

function redactModel(model: unknown): unknown {
  if (!isPlainObject(model)) return model;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(model)) {
    if (MODEL_KEPT.has(key)) out[key] = value;
    else if (key === "baseURL" && typeof value === "string") out[key] = redactAddress(value);
    else if (key === "headers" && isPlainObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, blank(v)]));
    else out[key] = blankStrings(value);
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
    if (SECRET_FIELD.test(key)) out[key] = blank(child);
    else if (key === "variables" && isPlainObject(child)) out[key] = redactVariables(child);
    else if (MODEL_FIELD.test(key) && isPlainObject(child)) out[key] = redactModel(child);
    else if (ADDRESS_FIELD.test(key) && typeof child === "string") out[key] = redactAddress(child);
    else out[key] = redactSecrets(child, depth + 1);
  }
  return out as T;
}

/**
 * A request URL as it may be logged: the path, and the names of its query parameters with every
 * value blanked. No endpoint takes a query value worth logging, and the CDP endpoint's is the API
 * key, whatever spelling (`?apiKey=`, `?APIKEY=`, `?apiKe%79=`) a client used.
 */
export function redactUrlKey(url: string): string {
  const question = url.indexOf("?");
  if (question < 0) return url;
  const query = url
    .slice(question + 1)
    .split("#")[0]!
    .split("&")
    .filter((part) => part !== "")
    .map((part) => {
      const equals = part.indexOf("=");
      return equals < 0 ? part : `${part.slice(0, equals)}=${REDACTED}`;
    })
    .join("&");
  return `${url.slice(0, question)}?${query}`;
}
