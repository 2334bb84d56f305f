// page.screenshot(): formats, clip, full page and files, checked on the image bytes themselves.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "deckhand";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserFixture, closeFixture, openFixture } from "./helpers.ts";
import { decodePng, jpegSize, PNG_SIGNATURE, pngSize } from "./png.ts";

// White page, a red box at (40, 30) of 100 x 50, a blue box at the bottom of a 3000 px tall page.
const CANVAS = `<!doctype html><title>Canvas</title>
<style>
  html, body { margin: 0; background: #fff; }
  #red { position: absolute; left: 40px; top: 30px; width: 100px; height: 50px; background: #f00; }
  #blue { position: absolute; left: 0; top: 2950px; width: 60px; height: 50px; background: #00f; }
  #tall { height: 3000px; }
</style>
<div id="tall"></div><div id="red"></div><div id="blue"></div>`;

let fx: BrowserFixture;
let page: Page;
let viewport: { width: number; height: number };
let dir: string;

beforeAll(async () => {
  [fx, dir] = await Promise.all([openFixture(), mkdtemp(join(tmpdir(), "deckhand-shots-"))]);
  fx.site.route("/canvas.html", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(CANVAS);
  });
  page = fx.dh.context.pages()[0]!;
  await page.goto(fx.site.url("canvas.html"));
  viewport = await page.evaluate(() => ({ width: window.innerWidth, height: window.innerHeight }));
});

afterAll(async () => {
  await Promise.all([closeFixture(fx), rm(dir, { recursive: true, force: true })]);
});

const RED: [number, number, number] = [255, 0, 0];
const WHITE: [number, number, number] = [255, 255, 255];
const BLUE: [number, number, number] = [0, 0, 255];

describe("formats", () => {
  it("is a PNG of the viewport's size by default", async () => {
    const shot = await page.screenshot();
    expect(shot.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(pngSize(shot)).toEqual(viewport);
  });

  it("shows what is on screen, where it is", async () => {
    const image = decodePng(await page.screenshot());
    expect(image.pixel(90, 55)).toEqual(RED);
    expect(image.pixel(20, 55)).toEqual(WHITE);
    expect(image.pixel(90, 20)).toEqual(WHITE);
  });

  it('is a JPEG with type "jpeg"', async () => {
    const shot = await page.screenshot({ type: "jpeg" });
    expect([...shot.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect([...shot.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(jpegSize(shot)).toEqual(viewport);
  });

  it("makes a smaller JPEG at a lower quality", async () => {
    // Noise compresses badly, so quality shows in the size.
    const noisy = await fx.dh.context.newPage();
    await noisy.evaluate(() => {
      const canvas = document.createElement("canvas");
      canvas.width = 400;
      canvas.height = 300;
      const ctx = canvas.getContext("2d")!;
      for (let x = 0; x < 400; x += 4)
        for (let y = 0; y < 300; y += 4) {
          ctx.fillStyle = `hsl(${(x * 7 + y * 13) % 360} 80% ${30 + ((x * y) % 50)}%)`;
          ctx.fillRect(x, y, 4, 4);
        }
      document.body.append(canvas);
    });
    const low = await noisy.screenshot({ type: "jpeg", quality: 10 });
    const high = await noisy.screenshot({ type: "jpeg", quality: 95 });
    await noisy.close();
    expect(low.length).toBeLessThan(high.length / 2);
  });

  it('is a WebP with type "webp"', async () => {
    const shot = await page.screenshot({ type: "webp" });
    expect(shot.toString("latin1", 0, 4)).toBe("RIFF");
    expect(shot.toString("latin1", 8, 12)).toBe("WEBP");
  });
});

describe("clip", () => {
  it("captures exactly the clipped rectangle", async () => {
    const shot = await page.screenshot({ clip: { x: 40, y: 30, width: 100, height: 50 } });
    const image = decodePng(shot);
    expect({ width: image.width, height: image.height }).toEqual({ width: 100, height: 50 });
    for (const [x, y] of [
      [0, 0],
      [99, 0],
      [0, 49],
      [99, 49],
      [50, 25],
    ] as const) {
      expect(image.pixel(x, y)).toEqual(RED);
    }
  });

  it("places the clip in page coordinates", async () => {
    // 10 px of white on the left and above the red box.
    const image = decodePng(await page.screenshot({ clip: { x: 30, y: 20, width: 40, height: 30 } }));
    expect(image.pixel(5, 5)).toEqual(WHITE);
    expect(image.pixel(15, 15)).toEqual(RED);
  });

  it("measures the clip from the top of the page, also when the page is scrolled", async () => {
    await page.evaluate(() => window.scrollTo(0, 2900));
    try {
      const red = decodePng(await page.screenshot({ clip: { x: 40, y: 30, width: 100, height: 50 } }));
      expect(red.pixel(50, 25)).toEqual(RED);
      const blue = decodePng(await page.screenshot({ clip: { x: 0, y: 2950, width: 60, height: 50 } }));
      expect(blue.pixel(30, 25)).toEqual(BLUE);
    } finally {
      await page.evaluate(() => window.scrollTo(0, 0));
    }
  });

  it("rejects a clip without area", async () => {
    await expect(page.screenshot({ clip: { x: 0, y: 0, width: 0, height: 10 } })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});

describe("fullPage", () => {
  it("captures the whole scrollable page", async () => {
    // The page's own width: the viewport without its vertical scrollbar.
    const width = await page.evaluate(() => document.documentElement.clientWidth);
    const shot = await page.screenshot({ fullPage: true });
    const image = decodePng(shot);
    expect({ width: image.width, height: image.height }).toEqual({ width, height: 3000 });
    expect(image.pixel(30, 2975)).toEqual(BLUE);
    expect(image.pixel(90, 55)).toEqual(RED);
  });

  it("leaves the viewport and scroll position as they were", async () => {
    await page.evaluate(() => window.scrollTo(0, 500));
    await page.screenshot({ fullPage: true });
    expect(await page.evaluate(() => ({ width: innerWidth, height: innerHeight, y: scrollY }))).toEqual({
      ...viewport,
      y: 500,
    });
    await page.evaluate(() => window.scrollTo(0, 0));
  });

  it("cannot be combined with clip", async () => {
    await expect(
      page.screenshot({ fullPage: true, clip: { x: 0, y: 0, width: 10, height: 10 } }),
    ).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});

describe("path", () => {
  it("writes the same bytes it returns to the file", async () => {
    const file = join(dir, "shot.png");
    const shot = await page.screenshot({ path: file });
    expect((await readFile(file)).equals(shot)).toBe(true);
    expect(pngSize(await readFile(file))).toEqual(viewport);
  });

  it("takes the format from the file's extension", async () => {
    const file = join(dir, "shot.jpg");
    await page.screenshot({ path: file });
    const bytes = await readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  });
});

describe("invalid options", () => {
  it("rejects quality for a PNG", async () => {
    await expect(page.screenshot({ quality: 50 })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });

  it("rejects a quality outside 0-100", async () => {
    await expect(page.screenshot({ type: "jpeg", quality: 101 })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });

  it("rejects an unknown type", async () => {
    await expect(page.screenshot({ type: "gif" as never })).rejects.toMatchObject({
      name: "ServiceInvalidArgumentError",
    });
  });
});
