// The scanner that reads a CDP message's id, method and sessionId without parsing the rest (what
// the service's CDP proxy routes and checks by), and the rewrite that changes only those.

import { CdpScanError, rewriteMessage, scanCdpMessage } from "deckhand";
import { describe, expect, it } from "vitest";

/** The scan's fields, checked against JSON.parse of the same text, scanned as text and as its UTF-8 bytes. */
function agreesWithParse(text: string): void {
  const parsed = JSON.parse(text) as { id?: number; method?: string; sessionId?: string };
  for (const source of [text, Buffer.from(text)]) {
    const head = scanCdpMessage(source);
    expect({ id: head.id, method: head.method, sessionId: head.sessionId }).toEqual({
      id: parsed.id,
      method: parsed.method,
      sessionId: parsed.sessionId,
    });
  }
}

/** rewriteMessage of the text's bytes, joined and decoded. */
function rewriteBytes(text: string, change: Parameters<typeof rewriteMessage>[2]): string {
  const bytes = Buffer.from(text);
  return Buffer.concat(rewriteMessage(bytes, scanCdpMessage(bytes), change)).toString();
}

describe("scanCdpMessage", () => {
  it("reads the routing fields in any order, with other members anywhere", () => {
    const messages = [
      `{"id":1,"method":"Page.navigate","params":{"url":"https://example.com"},"sessionId":"S1"}`,
      `{"sessionId":"S1","params":{"url":"x"},"method":"Page.navigate","id":2}`,
      `{"method":"Runtime.evaluate","params":{"expression":"1"},"id":3}`,
      `{"params":{},"extra":[1,2,{"id":9}],"id":4,"method":"A.b"}`,
      ` \n{ "id" : 5 ,\t"method" : "A.b" , "sessionId" : "S" } \n`,
      `{"method":"Target.attachedToTarget","params":{"sessionId":"child","targetInfo":{"targetId":"T"}},"sessionId":"S"}`,
      `{"id":7,"result":{"data":"abc"}}`,
      `{}`,
    ];
    for (const text of messages) agreesWithParse(text);
  });

  it("reads top-level fields only: nested ids, methods and session ids do not count", () => {
    const text = `{"params":{"id":99,"method":"Evil.call","sessionId":"other","nested":{"sessionId":"x"}},"id":1,"method":"A.b"}`;
    const head = scanCdpMessage(text);
    expect(head).toMatchObject({ id: 1, method: "A.b", sessionId: undefined });
  });

  it("skips string contents whatever they hold: escaped quotes, backslashes, brackets, braces", () => {
    const expression = `a "quoted" \\ back\\slash \\" } ] { [ , "id":5, "sessionId":"no"`;
    const text = JSON.stringify({
      method: "Runtime.evaluate",
      params: { expression, list: ["}", "\\", '"'] },
      id: 11,
    });
    agreesWithParse(text);
    // A string ending in an escaped backslash ends there.
    agreesWithParse(`{"params":{"x":"ends with \\\\"},"id":12,"method":"A.b","sessionId":"S"}`);
    // Escaped quote right before the closing one.
    agreesWithParse(`{"params":{"x":"q\\""},"id":13,"method":"A.b"}`);
  });

  it("reads unicode: in the skipped contents, and escaped or not in the fields themselves", () => {
    agreesWithParse(
      JSON.stringify({
        id: 1,
        method: "A.b",
        params: { text: "héllo 世界 🎉 \u2028" },
        sessionId: "séssion-🎉",
      }),
    );
    const head = scanCdpMessage(`{"id":1,"method":"A\\u002eb","sessionId":"\\u00e9"}`);
    expect(head).toMatchObject({ method: "A.b", sessionId: "é" });
  });

  it("goes through a multi-megabyte message without parsing it", () => {
    const big = "x".repeat(8 * 1024 * 1024);
    const text = `{"id":42,"method":"Runtime.evaluate","params":{"expression":"'${big}'"},"sessionId":"S"}`;
    const head = scanCdpMessage(text);
    expect(head).toMatchObject({ id: 42, method: "Runtime.evaluate", sessionId: "S" });
    expect(text.slice(head.paramsAt![0], head.paramsAt![1]).length).toBe(big.length + 19);
    // As bytes, positions are byte offsets.
    const bytes = Buffer.from(text);
    const fromBytes = scanCdpMessage(bytes);
    expect(fromBytes).toMatchObject({ id: 42, method: "Runtime.evaluate", sessionId: "S" });
    expect(fromBytes.paramsAt).toEqual(head.paramsAt);
  });

  it("reads bytes with multi-byte characters before the routing fields at the right offsets", () => {
    const text = `{"params":{"t":"é🎉世"},"id":8,"sessionId":"S","method":"A.b"}`;
    const head = scanCdpMessage(Buffer.from(text));
    expect(head).toMatchObject({ id: 8, method: "A.b", sessionId: "S" });
    expect(Buffer.from(text).toString("utf8", head.idAt![0], head.idAt![1])).toBe("8");
  });

  it("refuses what is not one JSON object, or whose routing fields are wrong", () => {
    const bad = [
      ``,
      `[]`,
      `"text"`,
      `{"id":1,"method":"A.b"`,
      `{"id":1,"method":"A.b"}{}`,
      `{"id":1,"method":"A.b"} x`,
      `{"id":1 "method":"A.b"}`,
      `{id:1}`,
      `{"id":"1","method":"A.b"}`,
      `{"id":1.5,"method":"A.b"}`,
      `{"id":1,"method":2}`,
      `{"id":1,"method":"A.b","sessionId":null}`,
      `{"id":1,"id":2,"method":"A.b"}`,
      `{"id":1,"method":"A.b","sessionId":"S","sessionId":"T"}`,
      `{"id":1,"method":"A.b","params":{"x":[1,2}}`,
      `{"id":1,"method":"A.b","params":{"x":"open}}`,
      `{"id":1,"method":"A.b","params":nope}`,
      `{"id":1,"method":"A.b",}`,
      `{"id":1,"method":}`,
      `{"id":1,"method":"A.b","params":${"1".repeat(70)}x}`,
      `${"[".repeat(2000)}`,
      `{"id":1,"params":${"[".repeat(2000)}${"]".repeat(2000)}}`,
    ];
    for (const text of bad) {
      expect(() => scanCdpMessage(text), text).toThrow(CdpScanError);
      expect(() => scanCdpMessage(Buffer.from(text)), text).toThrow(CdpScanError);
    }
  });
});

describe("rewriteMessage", () => {
  const cases = [
    `{"id":1,"method":"A.b","params":{"a":1},"sessionId":"S"}`,
    `{"sessionId":"S","id":1,"method":"A.b","params":{"a":1}}`,
    `{"id":1,"sessionId":"S","method":"A.b"}`,
    `{"id":1,"method":"A.b"}`,
    `{ "id" : 1 , "method" : "A.b" , "sessionId" : "S" }`,
    `{"sessionId":"S"}`,
    `{"method":"E.v","params":{"sessionId":"nested"},"sessionId":"S"}`,
  ];

  it("changes the id and sets, replaces or removes the sessionId, and nothing else", () => {
    for (const text of cases) {
      const head = scanCdpMessage(text);
      const original = JSON.parse(text) as Record<string, unknown>;
      const { sessionId: _dropped, ...rest } = original;
      if (head.id !== undefined) {
        expect(JSON.parse(rewriteMessage(text, head, { id: 77 }))).toEqual({ ...original, id: 77 });
      }
      expect(JSON.parse(rewriteMessage(text, head, { sessionId: null }))).toEqual(rest);
      expect(JSON.parse(rewriteMessage(text, head, { sessionId: "R" }))).toEqual({ ...rest, sessionId: "R" });
      if (head.id !== undefined) {
        const both = rewriteMessage(text, head, { id: 5, sessionId: 'a"b' });
        expect(JSON.parse(both)).toEqual({ ...rest, id: 5, sessionId: 'a"b' });
        // The rewritten text scans the same way.
        expect(scanCdpMessage(both)).toMatchObject({ id: 5, sessionId: 'a"b' });
      }
      // Bytes are rewritten to the same text.
      for (const change of [
        { id: 9 },
        { sessionId: null },
        { sessionId: "R" },
        { id: 5, sessionId: 'a"b' },
      ]) {
        if (change.id !== undefined && head.id === undefined) continue;
        expect(rewriteBytes(text, change)).toBe(rewriteMessage(text, head, change));
      }
    }
  });

  it("rewrites bytes into pieces that are slices of them: the payload is not copied", () => {
    const payload = `"${'é🎉x\\"'.repeat(100_000)}"`;
    const bytes = Buffer.from(
      `{"id":3,"method":"Runtime.evaluate","params":{"expression":${payload}},"sessionId":"T"}`,
    );
    const pieces = rewriteMessage(bytes, scanCdpMessage(bytes), { id: 4, sessionId: "S" });
    expect(Buffer.concat(pieces).toString()).toBe(
      `{"sessionId":"S","id":4,"method":"Runtime.evaluate","params":{"expression":${payload}}}`,
    );
    // The payload's piece shares the message's memory (a copy would not).
    const big = pieces.find((piece) => piece.length > 800_000);
    expect(big !== undefined && big.buffer === bytes.buffer).toBe(true);
  });

  it("leaves a large payload byte for byte as it was", () => {
    const payload = `"${'é🎉x\\"'.repeat(100_000)}"`;
    const text = `{"id":3,"method":"Runtime.evaluate","params":{"expression":${payload}}}`;
    const out = rewriteMessage(text, scanCdpMessage(text), { id: 4, sessionId: "S" });
    expect(out).toBe(
      `{"sessionId":"S","id":4,"method":"Runtime.evaluate","params":{"expression":${payload}}}`,
    );
  });
});
