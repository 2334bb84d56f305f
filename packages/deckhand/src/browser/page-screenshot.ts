// A page's screenshots and the viewport size it lays out to: checking what the caller asked for
// (a clear error for a type, quality, clip or size that cannot be), and capturing (the viewport,
// a clip of the page, or the full page; png, jpeg or webp; optionally written to a file).

import { writeFile } from "node:fs/promises";
import type { Protocol } from "devtools-protocol";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";

export interface ScreenshotOptions {
  fullPage?: boolean;
  type?: "png" | "jpeg" | "webp";
  /** 0-100, jpeg and webp only. */
  quality?: number;
  clip?: { x: number; y: number; width: number; height: number };
  /** Also write the image to this file. */
  path?: string;
}

/** Captures a screenshot of the page on `session` as `options` say. */
export async function captureScreenshot(session: CdpSession, options: ScreenshotOptions): Promise<Buffer> {
  const type = options.type ?? typeFromPath(options.path) ?? "png";
  if (!["png", "jpeg", "webp"].includes(type)) {
    throw new ServiceInvalidArgumentError(
      `screenshot type must be png, jpeg or webp, not ${JSON.stringify(type)}.`,
    );
  }
  if (options.quality !== undefined) {
    if (type === "png")
      throw new ServiceInvalidArgumentError("screenshot quality applies to jpeg and webp only, not png.");
    if (!(options.quality >= 0 && options.quality <= 100)) {
      throw new ServiceInvalidArgumentError(`screenshot quality must be 0-100, got ${options.quality}.`);
    }
  }
  let clip: Protocol.Page.Viewport | undefined;
  if (options.fullPage) {
    if (options.clip) throw new ServiceInvalidArgumentError("screenshot takes fullPage or clip, not both.");
    const metrics = await session.send("Page.getLayoutMetrics");
    clip = {
      x: 0,
      y: 0,
      width: Math.ceil(metrics.cssContentSize.width),
      height: Math.ceil(metrics.cssContentSize.height),
      scale: 1,
    };
  } else if (options.clip) {
    const { x, y, width, height } = options.clip;
    if (!(width > 0 && height > 0))
      throw new ServiceInvalidArgumentError("screenshot clip needs a positive width and height.");
    clip = { x, y, width, height, scale: 1 };
  }
  const { data } = await session.send("Page.captureScreenshot", {
    format: type,
    ...(options.quality !== undefined ? { quality: options.quality } : {}),
    ...(clip ? { clip } : {}),
    // A clip is in page coordinates and may lie outside the visible part of the page, which the
    // browser only paints when asked to capture beyond the viewport.
    captureBeyondViewport: clip !== undefined,
    fromSurface: true,
  });
  const buffer = Buffer.from(data, "base64");
  if (options.path) await writeFile(options.path, buffer);
  return buffer;
}

/**
 * Checks a viewport size (whole CSS pixels, 1 to 16384) and its device scale factor (default 1,
 * above 0 and at most 10); returns the factor.
 */
export function checkViewportSize(
  width: number,
  height: number,
  options: { deviceScaleFactor?: number },
): number {
  const side = (value: unknown, name: string) => {
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0 || value > 16_384) {
      throw new ServiceInvalidArgumentError(
        `setViewportSize: ${name} must be a whole number of CSS pixels from 1 to 16384, got ${String(value)}.`,
      );
    }
  };
  side(width, "width");
  side(height, "height");
  const deviceScaleFactor = options.deviceScaleFactor ?? 1;
  if (!(typeof deviceScaleFactor === "number" && deviceScaleFactor > 0 && deviceScaleFactor <= 10)) {
    throw new ServiceInvalidArgumentError(
      `setViewportSize: deviceScaleFactor must be a number above 0 and at most 10, got ${String(deviceScaleFactor)}.`,
    );
  }
  return deviceScaleFactor;
}

function typeFromPath(path: string | undefined): ScreenshotOptions["type"] | undefined {
  if (!path) return undefined;
  const ext = path.split(".").pop()?.toLowerCase();
  if (ext === "jpg" || ext === "jpeg") return "jpeg";
  if (ext === "webp") return "webp";
  if (ext === "png") return "png";
  return undefined;
}
