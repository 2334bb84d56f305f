// Reads the top-level `id`, `method` and `sessionId` of a CDP message without parsing the rest:
// a relay (the service's CDP proxy) routes and checks messages by those fields alone, and the rest
// can be megabytes (a script, a fulfilled response body, a screenshot). JSON.parse of such a
// message takes tens of milliseconds of the event loop and makes a copy of everything in it.
//
// The scanner walks the top-level object's members. A string is skipped with indexOf (to its next
// unescaped quote), a nested object or array by counting its brackets outside strings, so that the
// cost is a search over the text, a fraction of a parse, and nothing is allocated for the contents. It checks
// the message's shape as far as a relay needs it to agree with the browser about which fields are
// which: one top-level object with nothing after it, keys that are strings, a routing field given
// at most once, `id` an integer, `method` and `sessionId` strings. What lies inside nested values
// is left to the browser, which refuses the message if it is not JSON.

/** The routing fields of a message, and where they are in its text. */
export interface CdpMessageHead {
  id: number | undefined;
  method: string | undefined;
  sessionId: string | undefined;
  /** Where the id's value is: [start, end) in the text. */
  idAt: readonly [number, number] | undefined;
  /** Where the whole `"sessionId": "…"` member is, with one comma next to it: cut this to remove it. */
  sessionIdMember: readonly [number, number] | undefined;
  /** Where the value of `params` is. */
  paramsAt: readonly [number, number] | undefined;
  /** Just after the opening brace: where a member can be inserted (followed by a comma if any follow). */
  bodyStart: number;
  /** How many members the object has. */
  members: number;
}

export class CdpScanError extends Error {
  override readonly name = "CdpScanError";
}

/** Nesting deeper than this is refused (Chromium's own parser stops far earlier). */
const MAX_DEPTH = 1000;
/** Longest `method` or `sessionId` read (both are short names). */
const MAX_NAME = 1024;

const SCALAR_END = /[,}\]\s]/g;
const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The index just after the string that starts (with its quote) at `at`. */
function stringEnd(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) throw new CdpScanError("A string is not closed.");
    let backslashes = 0;
    for (let i = quote - 1; i > at && text.charCodeAt(i) === 0x5c; i--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just after the object or array that starts at `at`. */
function nestedEnd(text: string, at: number): number {
  const open: number[] = [text.charCodeAt(at)];
  const length = text.length;
  for (let i = at + 1; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      i = stringEnd(text, i) - 1;
    } else if (code === 0x7b || code === 0x5b) {
      if (open.length >= MAX_DEPTH) throw new CdpScanError(`Nesting deeper than ${MAX_DEPTH} levels.`);
      open.push(code);
    } else if (code === 0x7d || code === 0x5d) {
      const opener = open.pop();
      if ((code === 0x7d && opener !== 0x7b) || (code === 0x5d && opener !== 0x5b))
        throw new CdpScanError("Brackets do not match.");
      if (open.length === 0) return i + 1;
    }
  }
  throw new CdpScanError("An object or array is not closed.");
}

/** The index just after the value that starts at `at`. */
function valueEnd(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code === 0x22) return stringEnd(text, at);
  if (code === 0x7b || code === 0x5b) return nestedEnd(text, at);
  SCALAR_END.lastIndex = at;
  const found = SCALAR_END.exec(text);
  const end = found ? found.index : text.length;
  // No number, true, false or null is longer than this.
  if (end - at > 64 || !SCALAR.test(text.slice(at, end))) throw new CdpScanError("A value is not JSON.");
  return end;
}

function readString(text: string, start: number, end: number, what: string): string {
  if (end - start > MAX_NAME + 2)
    throw new CdpScanError(`\`${what}\` is longer than ${MAX_NAME} characters.`);
  const raw = text.slice(start, end);
  // Plain names (the usual case) need no decoding.
  if (!raw.includes("\\")) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    throw new CdpScanError(`\`${what}\` is not a JSON string.`);
  }
}

/**
 * The routing fields of the CDP message `text` (a JSON object), read without parsing the rest.
 * Throws CdpScanError when the text is not one JSON object, or a routing field is given twice or
 * has the wrong type.
 */
export function scanCdpMessage(text: string): CdpMessageHead {
  const head: CdpMessageHead = {
    id: undefined,
    method: undefined,
    sessionId: undefined,
    idAt: undefined,
    sessionIdMember: undefined,
    paramsAt: undefined,
    bodyStart: 0,
    members: 0,
  };
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== 0x7b) throw new CdpScanError("A CDP message is a JSON object.");
  at++;
  head.bodyStart = at;
  at = skipSpace(text, at);
  const seen = new Set<string>();
  if (text.charCodeAt(at) === 0x7d) {
    at++;
  } else {
    for (;;) {
      head.members++;
      const memberStart = at;
      if (text.charCodeAt(at) !== 0x22) throw new CdpScanError("A key is not a string.");
      const keyEnd = stringEnd(text, at);
      const key = readString(text, at, keyEnd, "key");
      at = skipSpace(text, keyEnd);
      if (text.charCodeAt(at) !== 0x3a) throw new CdpScanError("A key is not followed by a colon.");
      at = skipSpace(text, at + 1);
      if (at >= text.length) throw new CdpScanError("A value is missing.");
      const start = at;
      const end = valueEnd(text, start);
      if (key === "id" || key === "method" || key === "sessionId" || key === "params") {
        if (seen.has(key)) throw new CdpScanError(`\`${key}\` is given twice.`);
        seen.add(key);
      }
      if (key === "id") {
        const literal = text.slice(start, end);
        if (!INTEGER.test(literal) || !Number.isSafeInteger(Number(literal)))
          throw new CdpScanError("`id` is not an integer.");
        head.id = Number(literal);
        head.idAt = [start, end];
      } else if (key === "method") {
        if (text.charCodeAt(start) !== 0x22) throw new CdpScanError("`method` is not a string.");
        head.method = readString(text, start, end, "method");
      } else if (key === "sessionId") {
        if (text.charCodeAt(start) !== 0x22) throw new CdpScanError("`sessionId` is not a string.");
        head.sessionId = readString(text, start, end, "sessionId");
        head.sessionIdMember = [memberStart, end];
      } else if (key === "params") {
        head.paramsAt = [start, end];
      }
      at = skipSpace(text, end);
      const next = text.charCodeAt(at);
      if (next === 0x2c) {
        // The member's comma goes with it when it is cut (the one after it, or else the one before).
        if (key === "sessionId") head.sessionIdMember = [memberStart, at + 1];
        at = skipSpace(text, at + 1);
        continue;
      }
      if (next === 0x7d) {
        if (key === "sessionId" && head.sessionIdMember) {
          let before = memberStart - 1;
          while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
          if (text.charCodeAt(before) === 0x2c) head.sessionIdMember = [before, end];
        }
        at++;
        break;
      }
      throw new CdpScanError("Members are not separated by commas.");
    }
  }
  if (skipSpace(text, at) !== text.length) throw new CdpScanError("Text follows the message.");
  return head;
}

/**
 * `text` changed as little as possible: its id replaced by `change.id`, its top-level sessionId set
 * to `change.sessionId` (a string), removed (null) or kept (undefined). `head` is `text`'s scan.
 */
export function rewriteMessage(
  text: string,
  head: CdpMessageHead,
  change: { id?: number; sessionId?: string | null },
): string {
  const edits: [start: number, end: number, replacement: string][] = [];
  if (change.id !== undefined) {
    if (!head.idAt) throw new CdpScanError("The message has no id.");
    edits.push([head.idAt[0], head.idAt[1], String(change.id)]);
  }
  if (change.sessionId !== undefined) {
    let others = head.members;
    if (head.sessionIdMember) {
      edits.push([head.sessionIdMember[0], head.sessionIdMember[1], ""]);
      others--;
    }
    if (change.sessionId !== null) {
      const member = `"sessionId":${JSON.stringify(change.sessionId)}${others > 0 ? "," : ""}`;
      edits.push([head.bodyStart, head.bodyStart, member]);
    }
  }
  // Insertions (empty spans) before cuts that start at the same place.
  edits.sort((a, b) => a[0] - b[0] || a[1] - a[0] - (b[1] - b[0]));
  let out = "";
  let at = 0;
  for (const [start, end, replacement] of edits) {
    out += text.slice(at, start) + replacement;
    at = end;
  }
  return out + text.slice(at);
}
