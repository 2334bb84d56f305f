// Limits that keep one tenant from taking what everyone shares: a project's session quota (one key
// cannot take every session place), a session's tab limit (however tabs are opened), and the size
// of a CDP message a client may send (refused from its frame header, before it is buffered), while
// big answers (screenshots) still reach the client.

import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  type Fixtures,
  type LiveService,
  ok,
  startFixtures,
  startLiveService,
} from "../live-helpers.ts";
import { rawCdpClient } from "./cdp-attacker.ts";

let fx: Fixtures;
let svc: LiveService;
const MAX_TABS = 3;
const MAX_MESSAGE = 1024 * 1024;

beforeAll(async () => {
  fx = await startFixtures();
  svc = await startLiveService({
    maxSessions: 4,
    maxTabsPerSession: MAX_TABS,
    cdpMaxMessageBytes: MAX_MESSAGE,
  });
});
afterAll(async () => {
  await svc?.close();
  await fx?.close();
});

describe("a project's session quota (--max-sessions-per-project, default half of --max-sessions)", () => {
  it("stops one key from taking every place: its own extra start is refused, another project's is not", async () => {
    const mine = [await svc.start(), await svc.start()];
    const refused = await svc.call("/v1/sessions/start", { json: {} });
    expect(refused.status).toBe(429);
    const body = await refused.json();
    expect(body).toMatchObject({ success: false, code: "PROJECT_AT_CAPACITY" });
    expect(body.error).toContain("--max-sessions-per-project");
    expect(body.error).toContain("2 sessions");
    // The other project still gets in.
    const theirs = await svc.start({}, { key: svc.otherKey.key });
    await ok(await svc.op(theirs, "navigate", { url: fx.site.url("index.html") }, { key: svc.otherKey.key }));
    // A place of its own freed, the first project starts again.
    await ok(await svc.op(mine[0]!, "end"));
    mine[0] = await svc.start();
    for (const id of mine) await ok(await svc.op(id, "end"));
    await ok(await svc.op(theirs, "end", {}, { key: svc.otherKey.key }));
  });
});

describe("a session's tab limit (--max-tabs-per-session)", () => {
  it("refuses Target.createTarget beyond it, even when many arrive at once", async () => {
    const id = await svc.start();
    const client = await rawCdpClient(svc, id, svc.key.key);
    try {
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => client.send("Target.createTarget", { url: "about:blank" })),
      );
      const opened = replies.filter((r) => r.result);
      const refused = replies.filter((r) => r.error);
      expect(opened).toHaveLength(MAX_TABS - 1);
      for (const reply of refused) expect(reply.error!.message).toContain("--max-tabs-per-session");
      expect(await client.pages()).toHaveLength(MAX_TABS);
    } finally {
      client.close();
    }
    await ok(await svc.op(id, "end"));
  });

  it("closes tabs the page opens beyond it (window.open, target=_blank through act)", async () => {
    const id = await svc.start();
    const live = svc.service.sessions.get(id)!;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("popup.html") }));
    const opener = live.dh.page.targetId;
    const client = await rawCdpClient(svc, id, svc.key.key);
    try {
      const session = await client.attach(opener);
      // Every tab the page opens, and those beyond the limit (the service's own handler, registered
      // first, has already started closing each of them when this one sees it).
      let seen = 0;
      const extras: { isClosed(): boolean }[] = [];
      const stopWatching = live.dh.context.onPage((tab) => {
        seen++;
        if (live.dh.context.pages().length > MAX_TABS) extras.push(tab);
      });
      // Twenty window.open calls in one script (Chromium lets the gesture open one window; the
      // rest return null). window.open makes its window before it returns, so the count is the
      // number of tabs Chromium has made for the page.
      const { result } = await client.call<{ result: { value: number } }>(
        "Runtime.evaluate",
        {
          expression: "let n = 0; for (let i = 0; i < 20; i++) if (window.open('index.html?' + i)) n++; n",
          userGesture: true,
          returnByValue: true,
        },
        session,
      );
      const fromScript = result.value;
      expect(fromScript).toBeGreaterThan(0);
      // Through the HTTP API: act(action) clicking a target=_blank link, again and again, each
      // click one more tab.
      for (let i = 0; i < 5; i++) {
        await ok(
          await svc.op(id, "act", {
            input: {
              selector: "//*[@id='new-tab-link']",
              description: "the new-tab link",
              method: "click",
              arguments: [],
            },
            frameId: opener,
          }),
        );
      }
      await eventually(() => seen >= fromScript + 5, 10_000, "every opened tab to be seen");
      // Waits for the browser itself, not for Deckhand's list alone: a tab still being set up is
      // in Chromium's targets but not yet among the context's pages. The tabs left in Chromium are
      // the ones Deckhand holds, no more than the limit: none is open there unseen.
      const held = () => ids(live.dh.context.pages());
      const inChromium = async () =>
        ids(
          (await live.cdp.browser.connection.root.send("Target.getTargets")).targetInfos.filter(
            (t) => t.type === "page" && t.browserContextId === live.cdp.contextId,
          ),
        );
      const settled = async () => {
        const tabs = await inChromium();
        return tabs.length <= MAX_TABS && tabs.join() === held().join();
      };
      await eventually(settled, 10_000, "Chromium to have closed the extra tabs");
      stopWatching();
      expect(seen).toBe(fromScript + 5);
      expect(live.dh.context.pages().length).toBeLessThanOrEqual(MAX_TABS);
      expect(await inChromium()).toEqual(held());
      // Tabs did open beyond the limit, and every one of them was closed again. How many were open
      // at one moment is no measure: tabs opened together can all attach before the first close
      // is answered, the more so on a busy machine.
      expect(extras.length).toBeGreaterThan(0);
      await eventually(() => extras.every((tab) => tab.isClosed()), 10_000, "the extra tabs to be closed");
    } finally {
      client.close();
    }
    await ok(await svc.op(id, "end"));
  });
});

/** The sorted target ids of some tabs (Deckhand pages or Chromium's target infos), to compare sets. */
function ids(tabs: readonly { targetId: string }[]): string[] {
  return tabs.map((tab) => tab.targetId).sort();
}

/** Opens the CDP proxy WebSocket by hand, to send a frame header that announces a huge message. */
function rawUpgrade(sessionId: string): Promise<import("node:net").Socket> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(
        `GET /v1/sessions/${sessionId}/cdp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
          "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
          `x-platform-api-key: ${svc.key.key}\r\n\r\n`,
      );
    });
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      if (head.startsWith("HTTP/1.1 101")) resolve(socket);
      else reject(new Error(head));
    };
    socket.on("data", onData);
    socket.once("error", reject);
  });
}

describe("the size of a client's CDP message (--cdp-max-message-bytes)", () => {
  it("refuses a 150 MB message from its frame header, without buffering it, and the session goes on", async () => {
    const id = await svc.start();
    const socket = await rawUpgrade(id);
    const rssBefore = process.memoryUsage().rss;
    const header = Buffer.alloc(14);
    header[0] = 0x81; // FIN, text
    header[1] = 0x80 | 127; // masked, 64-bit length
    header.writeBigUInt64BE(150n * 1024n * 1024n, 2);
    header.writeUInt32BE(0x01020304, 10); // mask
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
    socket.write(header);
    let sent = 0;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const started = Date.now();
    while (!socket.destroyed && sent < 150 * 1024 * 1024 && Date.now() - started < 10_000) {
      if (!socket.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 5));
      sent += chunk.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closed;
    // The service answered with close code 1009 (message too big) and hung up long before 150 MB.
    const frames = Buffer.concat(received);
    expect(frames[0]).toBe(0x88);
    expect(frames.readUInt16BE(2)).toBe(1009);
    expect(sent).toBeLessThan(150 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
    // The session is fine, and so is a well-behaved client of it.
    const client = await rawCdpClient(svc, id, svc.key.key);
    try {
      expect((await client.pages()).length).toBe(1);
    } finally {
      client.close();
    }
    await ok(await svc.op(id, "end"));
  });

  it("still carries answers far bigger than that limit to the client (a large screenshot)", async () => {
    const id = await svc.start();
    const client = await rawCdpClient(svc, id, svc.key.key);
    try {
      const [tab] = await client.pages();
      const session = await client.attach(tab!.targetId);
      await client.call(
        "Emulation.setDeviceMetricsOverride",
        { width: 1600, height: 1600, deviceScaleFactor: 1, mobile: false },
        session,
      );
      // Noise does not compress: the PNG is several megabytes.
      await client.call(
        "Runtime.evaluate",
        {
          expression: `(() => {
            const c = document.createElement("canvas"); c.width = 1600; c.height = 1600;
            const g = c.getContext("2d"); const img = g.createImageData(1600, 1600);
            for (let i = 0; i < img.data.length; i++) img.data[i] = i % 4 === 3 ? 255 : Math.floor(Math.random() * 256);
            g.putImageData(img, 0, 0); document.body.style.margin = "0"; document.body.append(c);
          })()`,
        },
        session,
      );
      const { data } = await client.call<{ data: string }>(
        "Page.captureScreenshot",
        { format: "png" },
        session,
      );
      expect(data.length).toBeGreaterThan(MAX_MESSAGE * 2);
      expect(Buffer.from(data, "base64").subarray(1, 4).toString()).toBe("PNG");
    } finally {
      client.close();
    }
    await ok(await svc.op(id, "end"));
  });
});
