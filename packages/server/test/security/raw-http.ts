// One HTTP exchange written byte for byte on a TCP socket: for requests no HTTP client would send
// (bad percent-encoding, broken request lines, oversized headers).

import net from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `request` as it is and reads the first response (the connection is closed after it). The
 * limit is one only a stall reaches: the answer ends the wait, however soon it comes.
 */
export function rawRequest(baseUrl: string, request: string, timeoutMs = 60_000): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms: ${JSON.stringify(text.slice(0, 300))}`));
    }, timeoutMs);
    const finish = () => {
      const head = text.indexOf("\r\n\r\n");
      if (head < 0) return false;
      const [statusLine, ...lines] = text.slice(0, head).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = text.slice(head + 4);
      const length = Number(headers["content-length"] ?? Number.NaN);
      if (Number.isFinite(length) && Buffer.byteLength(body) < length) return false;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body });
      return true;
    };
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
      finish();
    });
    socket.on("close", () => {
      if (!finish()) {
        clearTimeout(timer);
        reject(new Error(`connection closed without a complete response: ${JSON.stringify(text)}`));
      }
    });
    socket.on("error", () => {});
  });
}
