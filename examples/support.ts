// What the examples share: the bundled pages (as file URLs, or served over HTTP on 127.0.0.1 for
// the service, which opens web pages only), the model from the environment, and quiet Chromium
// flags.
//
// The model: DECKHAND_MODEL ("provider/model", default openai/gpt-4.1-mini) with the provider's
// key in its usual variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...); DECKHAND_MODEL_BASE_URL for
// an OpenAI-compatible endpoint or a proxy.

import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ModelConfiguration } from "deckhand";

const pages = join(dirname(fileURLToPath(import.meta.url)), "pages");

/** A bundled page as a file URL. */
export function pageUrl(name: string): string {
  return pathToFileURL(join(pages, name)).href;
}

/** The bundled pages served on 127.0.0.1 (a free port); close it when done. */
export async function servePages(): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    const name = new URL(request.url ?? "/", "http://x").pathname.slice(1);
    if (!/^[\w-]+\.html$/.test(name)) return void response.writeHead(404).end();
    try {
      const body = await readFile(join(pages, name));
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The model the examples use, from the environment. */
export function exampleModel(): ModelConfiguration {
  const modelName = process.env.DECKHAND_MODEL || "openai/gpt-4.1-mini";
  const baseURL = process.env.DECKHAND_MODEL_BASE_URL;
  return baseURL ? { modelName, baseURL } : modelName;
}

/** Keeps Chromium from calling home at start-up (harmless elsewhere, needed on closed networks). */
export const QUIET = { args: ["--disable-background-networking", "--disable-component-update"] };
