// Small readers shared by the computer-use wires.

import type { Json } from "./computer-use-types.ts";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The bytes of a `data:image/png;base64,...` URL (or of bare base64), if it holds a PNG. */
export function decodeDataUrl(value: unknown): Buffer | undefined {
  if (typeof value !== "string") return undefined;
  const base64 = value.startsWith("data:") ? value.slice(value.indexOf(",") + 1) : value;
  const bytes = Buffer.from(base64, "base64");
  return bytes.subarray(0, 8).equals(PNG_SIGNATURE) ? bytes : undefined;
}

/** Every string field named text, instructions or system in a JSON value (what the model reads as words). */
export function textsOf(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, key: string | undefined) => {
    if (typeof v === "string") {
      if (key === "text" || key === "instructions" || key === "system") out.push(v);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item, key === "system" ? "system" : undefined);
    } else if (v && typeof v === "object") {
      for (const [k, item] of Object.entries(v as Json)) walk(item, k);
    }
  };
  walk(value, undefined);
  return out;
}
