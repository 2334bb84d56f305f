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
//
// The message can be given as text or as the UTF-8 bytes it came in (a Buffer), positions then
// being byte offsets: a relay that scans the bytes and writes slices of them on never decodes or
// encodes the bulk of a large message. JSON's structural characters are ASCII and no byte of a
// multi-byte UTF-8 character is below 0x80, so the walk is the same on both.

/** A message as text, or as its UTF-8 bytes. */
export type CdpMessageSource = string | Buffer;

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

/** What rewriteMessage changes. */
export interface MessageChange {
  id?: number;
  sessionId?: string | null;
}

export class CdpScanError extends Error {
  override readonly name = "CdpScanError";
}

/** Nesting deeper than this is refused (Chromium's own parser stops far earlier). */
const MAX_DEPTH = 1000;
/** Longest `method` or `sessionId` read (both are short names). */
const MAX_NAME = 1024;

/** No number, true, false or null is longer than this. */
const MAX_SCALAR = 64;
const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The character (or byte) at `at`; NaN past the end, as charCodeAt answers. */
function codeAt(text: CdpMessageSource, at: number): number {
  return typeof text === "string" ? text.charCodeAt(at) : (text[at] ?? Number.NaN);
}

/** A piece of the message as a string (a short one: a key, a name, a scalar). */
function sliceOf(text: CdpMessageSource, start: number, end: number): string {
  return typeof text === "string" ? text.slice(start, end) : text.toString("utf8", start, end);
}

function skipSpace(text: CdpMessageSource, at: number): number {
  while (at < text.length && isSpace(codeAt(text, at))) at++;
  return at;
}

/** The index just after the string that starts (with its quote) at `at`. */
function stringEnd(text: CdpMessageSource, at: number): number {
  let from = at + 1;
  for (;;) {
    // A native search either way: String's indexOf, or Buffer's (memchr).
    const quote = typeof text === "string" ? text.indexOf('"', from) : text.indexOf(0x22, from);
    if (quote === -1) throw new CdpScanError("A string is not closed.");
    let backslashes = 0;
    for (let i = quote - 1; i > at && codeAt(text, i) === 0x5c; i--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just after the object or array that starts at `at`. */
function nestedEnd(text: CdpMessageSource, at: number): number {
  const open: number[] = [codeAt(text, at)];
  const length = text.length;
  for (let i = at + 1; i < length; i++) {
    const code = codeAt(text, i);
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
function valueEnd(text: CdpMessageSource, at: number): number {
  const code = codeAt(text, at);
  if (code === 0x22) return stringEnd(text, at);
  if (code === 0x7b || code === 0x5b) return nestedEnd(text, at);
  // A scalar ends at a comma, a closing bracket or a space; one longer than MAX_SCALAR is not one.
  const limit = Math.min(text.length, at + MAX_SCALAR + 1);
  let end = at;
  for (; end < limit; end++) {
    const c = codeAt(text, end);
    if (c === 0x2c || c === 0x7d || c === 0x5d || isSpace(c)) break;
  }
  if (end - at > MAX_SCALAR || !SCALAR.test(sliceOf(text, at, end)))
    throw new CdpScanError("A value is not JSON.");
  return end;
}

function readString(text: CdpMessageSource, start: number, end: number, what: string): string {
  if (end - start > MAX_NAME + 2)
    throw new CdpScanError(`\`${what}\` is longer than ${MAX_NAME} characters.`);
  const raw = sliceOf(text, start, end);
  // Plain names (the usual case) need no decoding.
  if (!raw.includes("\\")) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    throw new CdpScanError(`\`${what}\` is not a JSON string.`);
  }
}

/**
 * The routing fields of the CDP message `text` (a JSON object, as text or UTF-8 bytes), read
 * without parsing the rest. Throws CdpScanError when the text is not one JSON object, or a routing
 * field is given twice or has the wrong type.
 */
export function scanCdpMessage(text: CdpMessageSource): CdpMessageHead {
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
  if (codeAt(text, at) !== 0x7b) throw new CdpScanError("A CDP message is a JSON object.");
  at++;
  head.bodyStart = at;
  at = skipSpace(text, at);
  const seen = new Set<string>();
  if (codeAt(text, at) === 0x7d) {
    at++;
  } else {
    for (;;) {
      head.members++;
      const memberStart = at;
      if (codeAt(text, at) !== 0x22) throw new CdpScanError("A key is not a string.");
      const keyEnd = stringEnd(text, at);
      const key = readString(text, at, keyEnd, "key");
      at = skipSpace(text, keyEnd);
      if (codeAt(text, at) !== 0x3a) throw new CdpScanError("A key is not followed by a colon.");
      at = skipSpace(text, at + 1);
      if (at >= text.length) throw new CdpScanError("A value is missing.");
      const start = at;
      const end = valueEnd(text, start);
      if (key === "id" || key === "method" || key === "sessionId" || key === "params") {
        if (seen.has(key)) throw new CdpScanError(`\`${key}\` is given twice.`);
        seen.add(key);
      }
      if (key === "id") {
        const literal = sliceOf(text, start, end);
        if (!INTEGER.test(literal) || !Number.isSafeInteger(Number(literal)))
          throw new CdpScanError("`id` is not an integer.");
        head.id = Number(literal);
        head.idAt = [start, end];
      } else if (key === "method") {
        if (codeAt(text, start) !== 0x22) throw new CdpScanError("`method` is not a string.");
        head.method = readString(text, start, end, "method");
      } else if (key === "sessionId") {
        if (codeAt(text, start) !== 0x22) throw new CdpScanError("`sessionId` is not a string.");
        head.sessionId = readString(text, start, end, "sessionId");
        head.sessionIdMember = [memberStart, end];
      } else if (key === "params") {
        head.paramsAt = [start, end];
      }
      at = skipSpace(text, end);
      const next = codeAt(text, at);
      if (next === 0x2c) {
        // The member's comma goes with it when it is cut (the one after it, or else the one before).
        if (key === "sessionId") head.sessionIdMember = [memberStart, at + 1];
        at = skipSpace(text, at + 1);
        continue;
      }
      if (next === 0x7d) {
        if (key === "sessionId" && head.sessionIdMember) {
          let before = memberStart - 1;
          while (before >= 0 && isSpace(codeAt(text, before))) before--;
          if (codeAt(text, before) === 0x2c) head.sessionIdMember = [before, end];
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
 * Given bytes, it answers the pieces of the new message in order: slices of `text` (not copies)
 * and the few new bytes between them, to be written one after the other.
 */
export function rewriteMessage(text: string, head: CdpMessageHead, change: MessageChange): string;
export function rewriteMessage(text: Buffer, head: CdpMessageHead, change: MessageChange): Buffer[];
export function rewriteMessage(
  text: CdpMessageSource,
  head: CdpMessageHead,
  change: MessageChange,
): string | Buffer[];
export function rewriteMessage(
  text: CdpMessageSource,
  head: CdpMessageHead,
  change: MessageChange,
): string | Buffer[] {
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
  if (typeof text !== "string") {
    const pieces: Buffer[] = [];
    let at = 0;
    for (const [start, end, replacement] of edits) {
      if (start > at) pieces.push(text.subarray(at, start));
      if (replacement) pieces.push(Buffer.from(replacement));
      at = end;
    }
    if (at < text.length) pieces.push(text.subarray(at));
    return pieces;
  }
  let out = "";
  let at = 0;
  for (const [start, end, replacement] of edits) {
    out += text.slice(at, start) + replacement;
    at = end;
  }
  return out + text.slice(at);
}
