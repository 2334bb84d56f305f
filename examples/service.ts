// Using the service from TypeScript: the same Deckhand API in REMOTE mode, with the browser in a
// session of a Deckhand service. With PLATFORM_API_URL and PLATFORM_API_KEY set, it uses that
// service; otherwise it starts one in this process (SQLite in a temporary directory, a new key).
// The bundled pages are served on 127.0.0.1 (a service opens web pages, not files).
//
// Run: node scripts/setup.mjs --run examples/service.ts

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, createService, openStore } from "@deckhand/server";
import { Deckhand } from "deckhand";
import { QUIET, servePages } from "./support.ts";

const pages = await servePages();
let apiUrl = process.env.PLATFORM_API_URL;
let apiKey = process.env.PLATFORM_API_KEY;
let stopService: (() => Promise<void>) | undefined;
if (!apiUrl || !apiKey) {
  const dataDir = mkdtempSync(join(tmpdir(), "deckhand-example-service-"));
  const store = await openStore({ dataDir });
  const service = await createService({
    store,
    browsers: { args: QUIET.args },
    logger: createLogger({ level: "warn" }),
  });
  await service.app.listen({ host: "127.0.0.1", port: 0 });
  const address = service.app.server.address() as { port: number };
  apiUrl = `http://127.0.0.1:${address.port}`;
  apiKey = (await store.createKey({ name: "example" })).key;
  stopService = async () => {
    await service.app.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  console.log(`Started a service at ${apiUrl}`);
}

const dh = new Deckhand({ env: "REMOTE", apiUrl, apiKey, verbose: 0 });
try {
  await dh.init();
  console.log(`Session ${dh.sessionId}`);
  await dh.page.goto(pages.url("login.html"));
  const variables = { user: "ada@example.com", password: "correct horse battery" };
  for (const instruction of [
    "type %user% into the Email field",
    "type %password% into the Password field",
    "click Sign in",
  ]) {
    console.log((await dh.act(instruction, { variables })).message);
  }
  console.log(await dh.page.locator("#greeting").textContent());
} finally {
  await dh.close();
  await stopService?.();
  await pages.close();
}
