// Variable values in the live view: a session types a `%name%` value key by key into a field whose
// page echoes it in big letters, while a viewer reads the live view's MJPEG stream (what the session
// page's <img> receives). No frame the viewer gets shows the value: the echo's box holds no glyph
// in any frame, those taken after the value was typed included (the page shows a green block once
// the field holds the whole value, and the test waits for a frame with it). A plain capture of the
// same page shows the glyphs there: the check can see the value when it is shown.
//
// The debugger's screencast likewise: the frames a DevTools front end receives on the session's
// page-mode CDP proxy (what debugUrl's front end connects to) once the value was typed.

import { match } from "@deckhand/testkit";
import type { Page as DeckhandPage } from "deckhand";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  type Fixtures,
  idOf,
  type LiveService,
  ok,
  STALL_MS,
  scriptedModelConfig,
  startFixtures,
  startLiveService,
  WITH_MODEL_KEY,
} from "./live-helpers.ts";

const SECRET = "WMWMWMWMWMWMWMWM";

let svc: LiveService;
let fx: Fixtures;
let viewer: Browser;
let decoder: Page;

beforeAll(async () => {
  [svc, fx, viewer] = await Promise.all([
    startLiveService(),
    startFixtures(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] }),
  ]);
  decoder = await (await viewer.newContext()).newPage();
  fx.site.route("/echo-big.html", (_req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(
      `<!doctype html><title>Echo</title><style>body{margin:0;background:#fff;color:#000}` +
        `label{display:block;padding:10px 20px;font:20px sans-serif}#name{font:28px monospace;width:700px}` +
        `#hello{position:absolute;left:20px;top:120px;margin:0;font:bold 56px monospace;white-space:nowrap}` +
        `#done{position:absolute;left:20px;top:260px;width:240px;height:90px;background:#00c000;display:none}</style>` +
        `<label>Name <input id="name" autocomplete="off"></label><p id="hello"></p><div id="done"></div>` +
        `<script>const field = document.getElementById("name"); field.oninput = () => {` +
        `document.getElementById("hello").textContent = field.value;` +
        `document.getElementById("done").style.display = field.value.length === ${SECRET.length} ? "block" : "none"; };</script>`,
    );
  });
});
afterAll(async () => {
  await viewer?.close();
  await svc?.close();
  await fx?.close();
});

/** The JPEG frames of an MJPEG (multipart/x-mixed-replace) body, as they arrive. */
async function* mjpegFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<Buffer> {
  let buffer = Buffer.alloc(0);
  const reader = body.getReader();
  for (;;) {
    const header = buffer.indexOf("\r\n\r\n");
    if (header >= 0) {
      const length = Number(/content-length: (\d+)/i.exec(buffer.subarray(0, header).toString())?.[1]);
      if (buffer.length >= header + 4 + length) {
        yield buffer.subarray(header + 4, header + 4 + length);
        buffer = buffer.subarray(header + 4 + length);
        continue;
      }
    }
    const { value, done } = await reader.read();
    if (done) return;
    buffer = Buffer.concat([buffer, value]);
  }
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * In a JPEG of the viewport (any scale): the share of near-black pixels in `text` (glyphs), and
 * whether `marker` is green.
 */
async function look(
  jpeg: Buffer,
  viewportWidth: number,
  text: Box,
  marker: Box,
): Promise<{ dark: number; green: boolean }> {
  return decoder.evaluate(
    async ({ src, viewportWidth, text, marker }) => {
      const image = new Image();
      image.src = src;
      await image.decode();
      const scale = image.naturalWidth / viewportWidth;
      const canvas = new OffscreenCanvas(image.naturalWidth, image.naturalHeight);
      const g = canvas.getContext("2d")!;
      g.drawImage(image, 0, 0);
      const pixels = (box: typeof text) =>
        g.getImageData(
          Math.floor(box.x * scale),
          Math.floor(box.y * scale),
          Math.max(1, Math.floor(box.width * scale)),
          Math.max(1, Math.floor(box.height * scale)),
        ).data;
      const t = pixels(text);
      let dark = 0;
      for (let i = 0; i < t.length; i += 4) if (t[i]! + t[i + 1]! + t[i + 2]! < 150) dark++;
      const m = pixels(marker);
      let green = 0;
      for (let i = 0; i < m.length; i += 4) if (m[i + 1]! > 150 && m[i]! < 90 && m[i + 2]! < 90) green++;
      return { dark: dark / (t.length / 4), green: green / (m.length / 4) > 0.8 };
    },
    { src: `data:image/jpeg;base64,${jpeg.toString("base64")}`, viewportWidth, text, marker },
  );
}

/** Where echo-big.html's echo of the value will be (as wide as the value in that font), and its marker. */
function echoGeometry(page: DeckhandPage) {
  return page.evaluate((secret: string) => {
    const hello = document.getElementById("hello")!;
    hello.textContent = secret;
    const range = document.createRange();
    range.selectNodeContents(hello);
    const r = range.getBoundingClientRect();
    hello.textContent = "";
    const d = document.getElementById("done")!;
    d.style.display = "block";
    const m = d.getBoundingClientRect();
    d.style.display = "none";
    return {
      viewportWidth: window.innerWidth,
      text: { x: r.x, y: r.y, width: r.width, height: r.height },
      marker: { x: m.x + 10, y: m.y + 10, width: m.width - 20, height: m.height - 20 },
    };
  }, SECRET);
}

describe("variable values in the live view", () => {
  it("no frame a viewer receives shows a value typed key by key, during the typing or after it", async () => {
    const started = await ok<{ sessionId: string; sessionUrl: string }>(
      await svc.call("/v1/sessions/start", { json: { serverCache: false } }),
    );
    const id = started.sessionId;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("echo-big.html") }));
    const page = svc.service.sessions.get(id)!.dh.context.activePage()!;
    // Where the echo's text will be (as wide as the value in that font) and the marker.
    const geometry = await echoGeometry(page);

    // The check sees the value when it is shown: a plain capture of the page with the value echoed
    // (taken before anyone watches, so that no mask can be on) has glyphs there.
    await page.evaluate((secret: string) => {
      document.getElementById("hello")!.textContent = secret;
    }, SECRET);
    const { data } = await page.session.send("Page.captureScreenshot", { format: "jpeg", quality: 60 });
    const plain = await look(
      Buffer.from(data, "base64"),
      geometry.viewportWidth,
      geometry.text,
      geometry.marker,
    );
    expect(plain.dark).toBeGreaterThan(0.1);
    await page.evaluate(() => {
      document.getElementById("hello")!.textContent = "";
    });

    // The viewer: the live view's stream, as the session page's <img> reads it.
    const live = new URL(started.sessionUrl);
    live.pathname = `${live.pathname}/live`;
    const leaving = new AbortController();
    const stream = await fetch(live, { signal: leaving.signal });
    expect(stream.status).toBe(200);
    const frames: Buffer[] = [];
    let sawTyped: () => void = () => undefined;
    const typed = new Promise<void>((resolve) => {
      sawTyped = resolve;
    });
    const looks: { dark: number; green: boolean }[] = [];
    const reading = (async () => {
      for await (const frame of mjpegFrames(stream.body!)) {
        frames.push(frame);
        const seen = await look(frame, geometry.viewportWidth, geometry.text, geometry.marker);
        looks.push(seen);
        if (seen.green) sawTyped();
      }
    })().catch((error: unknown) => {
      // The end of the stream, when the viewer leaves; anything else is the test's failure.
      if (!leaving.signal.aborted) throw error;
    });

    // The session types the value key by key (the `type` method) into the field.
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Name/),
      method: "type",
      arguments: ["%name%"],
      description: "type the name",
      completed: true,
    }));
    await ok(
      await svc.op(
        id,
        "act",
        {
          input: "type %name% into the name",
          options: { model: scriptedModelConfig(fx.model), variables: { name: SECRET } },
        },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(await page.evaluate(() => document.getElementById("hello")!.textContent)).toBe(SECRET);
    // A frame of the page as it is after the typing reaches the viewer.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      typed,
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error("no frame after the typing reached the viewer")), STALL_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    // Something else changes the page (a step with no variables, then the page's own script): still masked.
    const before = looks.length;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("echo-big.html") }));
    await page.evaluate((secret: string) => {
      document.getElementById("hello")!.textContent = secret;
      document.getElementById("done")!.style.display = "block";
    }, SECRET);
    // The viewer gets the change (the stall bound only fails a stuck view).
    const deadline = Date.now() + STALL_MS;
    while (!looks.slice(before).some((seen) => seen.green) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(looks.slice(before).some((seen) => seen.green)).toBe(true);

    leaving.abort();
    await reading;
    expect(looks.length).toBeGreaterThan(1);
    // No frame has glyphs where the value is echoed (a masked value is a flat grey bar).
    for (const [i, seen] of looks.entries()) expect(seen.dark, `frame ${i}`).toBeLessThan(0.02);

    await svc.op(id, "end");
  });

  it("no frame of the debugger's screencast shows it either, once the value was typed", async () => {
    const started = await ok<{ sessionId: string }>(
      await svc.call("/v1/sessions/start", { json: { serverCache: false } }),
    );
    const id = started.sessionId;
    await ok(await svc.op(id, "navigate", { url: fx.site.url("echo-big.html") }));
    const page = svc.service.sessions.get(id)!.dh.context.activePage()!;
    const geometry = await echoGeometry(page);
    fx.model.on(match.schemaName("act"), (request) => ({
      elementId: idOf(request.text, /textbox: Name/),
      method: "type",
      arguments: ["%name%"],
      description: "type the name",
      completed: true,
    }));
    await ok(
      await svc.op(
        id,
        "act",
        {
          input: "type %name% into the name",
          options: { model: scriptedModelConfig(fx.model), variables: { name: SECRET } },
        },
        { headers: WITH_MODEL_KEY },
      ),
    );
    expect(await page.evaluate(() => document.getElementById("hello")!.textContent)).toBe(SECRET);

    // The act's deferred screenshot (which masks the page for its moment) is taken: the frames
    // below show the page as it is.
    await svc.service.sessions.get(id)!.run(new AbortController().signal, async () => undefined);
    // The debugger's connection, as its front end opens it (a short-lived cdp token, page mode).
    const token = svc.service.app.deckhand.links.token(id, svc.key.id, "cdp");
    const ws = new WebSocket(`${svc.url.replace("http", "ws")}/v1/sessions/${id}/devtools?token=${token}`);
    const looks: { dark: number; green: boolean }[] = [];
    let sawTyped: () => void = () => undefined;
    const typed = new Promise<void>((resolve) => {
      sawTyped = resolve;
    });
    let failure: unknown;
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as {
        method?: string;
        params?: { data: string; sessionId: number };
      };
      if (message.method !== "Page.screencastFrame") return;
      // The front end acknowledges each frame, then Chromium sends the next.
      ws.send(
        JSON.stringify({
          id: 100 + looks.length,
          method: "Page.screencastFrameAck",
          params: { sessionId: message.params!.sessionId },
        }),
      );
      look(
        Buffer.from(message.params!.data, "base64"),
        geometry.viewportWidth,
        geometry.text,
        geometry.marker,
      ).then(
        (seen) => {
          looks.push(seen);
          if (seen.green) sawTyped();
        },
        (error: unknown) => {
          failure = error;
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(
      JSON.stringify({ id: 1, method: "Page.startScreencast", params: { format: "jpeg", quality: 60 } }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      typed,
      new Promise((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error("no frame of the typed page reached the debugger")),
          STALL_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    ws.close();
    expect(failure).toBeUndefined();
    for (const [i, seen] of looks.entries()) expect(seen.dark, `frame ${i}`).toBeLessThan(0.02);
    await svc.op(id, "end");
  });
});
